package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/actfuzz/actfuzz/report"
	"github.com/actfuzz/actfuzz/triage"
)

// runTriage is `actfuzz triage DIR`: every finding group of the campaign
// in DIR minimized, replayed, compared with the other implementations of
// its CCA, its harness checked and classified (package triage); it writes
// DIR/triage.md, DIR/triage.json and the report's triage section.
func runTriage(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("actfuzz triage", flag.ContinueOnError)
	runs := fs.Int("runs", 20, "replays of a finding on a subject that is not deterministic (the kernel); a deterministic subject replays once")
	minRuns := fs.Int("minimize-runs", 400, "at most this many simulations to minimize each group's seed")
	watchdog := fs.Duration("watchdog", 60*time.Second, "wall-clock limit of each minimization candidate (0: none)")
	asJSON := fs.Bool("json", false, "print the triage as JSON")
	verbosity := addVerbosityFlags(fs)
	positional, ok, code := parseInterleaved(fs, args, stderr)
	if !ok {
		return code
	}
	if len(positional) != 1 {
		fmt.Fprintln(stderr, "usage: actfuzz triage DIR [--runs N] [--minimize-runs N] [--json]: DIR is a campaign's output directory (run --out)")
		return exitUsage
	}
	if *runs < 1 || *minRuns < 1 || *watchdog < 0 {
		fmt.Fprintln(stderr, "actfuzz triage: --runs and --minimize-runs must be ≥ 1, --watchdog ≥ 0")
		return exitUsage
	}
	opt := triage.Options{Runs: *runs, MinimizeRuns: *minRuns, Watchdog: *watchdog, Open: openSubject, Log: verbosity.logger(stderr)}
	return triageDir(ctx, positional[0], opt, *asJSON, stdout, stderr)
}

// triageDir triages the campaign in dir and prints the root causes (run
// --triage calls it after the campaign). Exit 1: a root cause to act on
// (a subject bug candidate or our model's bug).
func triageDir(ctx context.Context, dir string, opt triage.Options, asJSON bool, stdout, stderr io.Writer) int {
	c, err := triage.Load(dir)
	var bad *triage.BadInputError
	if errors.As(err, &bad) {
		fmt.Fprintf(stderr, "actfuzz triage: %v\n", err)
		return exitUsage
	}
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz triage: %v\n", err)
		return exitInternal
	}
	rep, err := triage.Run(ctx, c, opt)
	if ctx.Err() != nil {
		fmt.Fprintf(stderr, "actfuzz triage: interrupted after %d of %d groups (nothing written)\n", len(rep.Results), len(c.Groups))
		return exitInterrupted
	}
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz triage: %v\n", err)
		return exitInternal
	}
	if err := rep.Write(); err != nil {
		fmt.Fprintf(stderr, "actfuzz triage: %v\n", err)
		return exitInternal
	}
	rewriteReport(dir, opt.Log)
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(rep)
	} else {
		printTriage(stdout, rep, dir)
	}
	for _, r := range rep.Results {
		if r.Class == triage.Untriaged {
			fmt.Fprintf(stderr, "actfuzz triage: %s: %s\n", r.Seed, r.Steps[0].Detail)
			return exitUsage
		}
	}
	n := rep.ByClass()
	if n[triage.SubjectBug]+n[triage.ModelBug] > 0 {
		return exitFound
	}
	return exitOK
}

// printTriage prints the classes and root causes.
func printTriage(w io.Writer, rep *triage.Report, dir string) {
	n := rep.ByClass()
	fmt.Fprintf(w, "triage of %d groups:", len(rep.Results))
	for _, c := range triage.Classes {
		if n[c] > 0 {
			fmt.Fprintf(w, " %s %d;", c, n[c])
		}
	}
	fmt.Fprintln(w)
	for _, c := range rep.Causes() {
		conf := "not confirmed"
		if c.Confirmed == c.Groups {
			conf = "confirmed"
		}
		fmt.Fprintf(w, "  %s (%s): %s on %s/%s, %d groups — %s\n", c.Class, conf, c.Condition, c.Subject, c.CCAI, c.Groups, c.Why)
	}
	fmt.Fprintf(w, "triage: %s/%s\n", dir, triage.MarkdownFile)
}

// rewriteReport rewrites dir's HTML report so that it shows the triage;
// a campaign without checkpoints has none, and a failure is logged.
func rewriteReport(dir string, log *slog.Logger) {
	c, reps, err := report.Load(dir, "", declaredCapabilities())
	if err != nil {
		log.Info("no report rewritten", "dir", dir, "err", err)
		return
	}
	if _, err := report.Write(dir, c, reps, report.Options{Program: progName()}); err != nil {
		log.Error("writing the report", "dir", dir, "err", err)
	}
}

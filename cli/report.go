package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/report"
)

// runReport is `actfuzz report DIR`: the campaign's HTML report,
// DIR/report/index.html, from what the run left in DIR (its campaign.yaml
// and checkpoints). Every method checkpointed in DIR is compared with the
// campaign's own (--method, default act).
func runReport(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("actfuzz report", flag.ContinueOnError)
	method := fs.String("method", "", "the run to report on when DIR holds several (default: act); the others are shown beside it")
	verbosity := addVerbosityFlags(fs)
	positional, ok, code := parseInterleaved(fs, args, stderr)
	if !ok {
		return code
	}
	if len(positional) != 1 {
		fmt.Fprintln(stderr, "usage: actfuzz report DIR [--method act|ran|man]: DIR is a campaign's output directory (run --out)")
		return exitUsage
	}
	dir := positional[0]
	switch *method {
	case "", "act", "ran", "man":
	default:
		fmt.Fprintf(stderr, "actfuzz report: --method %q: want act, ran or man\n", *method)
		return exitUsage
	}
	c, reps, err := report.Load(dir, *method, declaredCapabilities())
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz report: DIR %s is not a campaign's output directory: %v\n", dir, err)
		return exitUsage
	}
	path, err := report.Write(dir, c, reps, reportOptions(commandName()))
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz report: %v\n", err)
		return exitInternal
	}
	verbosity.logger(stderr).Info("report written", "path", path, "methods", len(reps))
	fmt.Fprintln(stdout, path)
	return exitOK
}

// reportHook regenerates out's report at the checkpoints of a run; a
// failure is logged, never the end of the campaign. The campaign waits
// while the report is written, so it is rewritten at a checkpoint only when
// at least reportShare times the last write's duration has passed since
// then (the report costs at most a tenth of the campaign's time), and
// always at the end.
func reportHook(out string, c *act.Campaign, prog string, log *slog.Logger) func(*act.Report) {
	var last time.Time
	var took time.Duration
	return func(rep *act.Report) {
		final := rep.Wall != 0 // Wall is set once Run finishes: the last call
		if !final && !last.IsZero() && time.Since(last) < reportShare*took {
			return
		}
		start := time.Now()
		opt := reportOptions(prog)
		opt.Live, opt.PeakRSS = !final, report.PeakRSS()
		if _, err := report.Write(out, c, []*act.Report{rep}, opt); err != nil {
			log.Error("writing the report", "dir", out, "err", err)
		}
		last, took = time.Now(), time.Since(start)
		log.Info("report written", "dir", out, "took", took.Round(time.Millisecond))
	}
}

// reportOptions are the report's options for the program prog
// (commandName): its suggested commands start with prog, and diff is
// offered only where it runs (diffVs).
func reportOptions(prog string) report.Options {
	return report.Options{Program: prog, DiffVs: diffVs}
}

// reportShare: a report is rewritten at most once per reportShare times
// its last write's duration.
const reportShare = 10

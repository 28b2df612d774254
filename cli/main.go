// Package cli is actfuzz's command-line interface as a library: Main runs
// every command (sim, list, run, compare, replay, minimize, diff, sym,
// worker) over whatever congestion-control algorithms the program has
// registered. cmd/actfuzz is `func main() { cli.Main() }`; a user's module
// with its own CCAI is that same line plus an import of its algorithm, and
// gets the whole CLI, isolated workers included (a worker is the program
// itself run as `worker`).
//
// Usage:
//
//	actfuzz sim [flags]          run one simulation and print its summary
//	actfuzz list                 list CCAIs, parameters and state variables
//	actfuzz run CAMPAIGN.yaml    run a campaign (ACT, RAN or MAN)
//	actfuzz compare              ACT against RAN and MAN on one budget
//	actfuzz report DIR           a campaign's HTML report, DIR/report/index.html
//	actfuzz replay SEED.json     replay a seed and check its finding
//	actfuzz minimize SEED.json   shrink a finding's seed
//	actfuzz diff SEED.json       one configuration on two subjects
//	actfuzz confirm SEED.json    re-run a finding N times on a subject
//	actfuzz triage DIR           classify each finding group's root cause
//	actfuzz pkt SCRIPT.pkt       a packetdrill script against the native model
//	actfuzz sym                  symbolic exploration of uncertain delays
//	actfuzz worker --nats URL    a worker host of a cluster (without --nats: a
//	                             worker process, started by run and compare)
//
// Run `actfuzz COMMAND -h` (or `actfuzz help COMMAND`) for a command's
// flags. Exit statuses, for every command: 0 done and nothing found (or
// reproduced); 1 found (or not reproduced, or differs); 2 bad input, with a
// message naming the flag or the file, line and field; 3 an I/O or internal
// error; 130 interrupted (after the checkpoint is written).
package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/internal/suggest"
	"github.com/actfuzz/actfuzz/netenv/symbolic"
)

// Exit statuses of every command.
const (
	exitOK          = 0   // done; nothing found, or the seed reproduced
	exitFound       = 1   // a condition hit, a seed not reproduced, subjects differ
	exitUsage       = 2   // bad input: a flag, a file (line, field), a seed
	exitInternal    = 3   // an I/O or internal error
	exitInterrupted = 130 // interrupted (SIGINT, SIGTERM), after the checkpoint
)

// exitMeanings says what statuses 0 and 1 mean for each command; a
// command without a 1 never exits 1.
var exitMeanings = []struct{ cmd, ok, found string }{
	{"run", "done, no condition hit", "a condition was hit (findings written)"},
	{"sim", "done", "the subject faulted (a CCAI panic, a zero cwnd, …)"},
	{"replay", "the seed's finding reproduced", "not reproduced (what differed is printed)"},
	{"minimize", "minimized seed written", "the seed does not hit its condition"},
	{"diff", "the subjects agree", "the subjects differ"},
	{"confirm", "the condition held in at least one run", "the condition held in no run"},
	{"triage", "triaged; no subject bug candidate or model bug", "a subject bug candidate or our model's bug (DIR/triage.md)"},
	{"pkt", "every script passed", "a script failed (the mismatch is printed)"},
	{"export", "script written", "the native model does not reach the seed's finding (nothing to script)"},
	{"sym", "done; with --seed, no window's order hits the condition", "with --seed, an order of the window hits the condition"},
	{"list", "done", ""}, {"compare", "done", ""}, {"report", "report written", ""},
	{"store", "done (stopped by a signal)", ""}, {"worker", "done (stopped by a signal, or its campaign ended)", ""},
}

// exitHelp documents the exit statuses of cmd, or of every command for
// "": each status a command can end with, and what it means.
func exitHelp(cmd string) string {
	var b strings.Builder
	b.WriteString("\nexit status:\n")
	line := func(code int, meaning string) { fmt.Fprintf(&b, "  %-4d %s\n", code, meaning) }
	if cmd == "" {
		line(exitOK, "done: nothing found, the seed reproduced, the subjects agree")
		var found []string
		for _, m := range exitMeanings {
			if m.found != "" {
				found = append(found, m.cmd+": "+m.found)
			}
		}
		line(exitFound, "found; per command (actfuzz help COMMAND):")
		for _, f := range found {
			fmt.Fprintf(&b, "         %s\n", f)
		}
	} else {
		ok, found := "done", ""
		for _, m := range exitMeanings {
			if m.cmd == cmd {
				ok, found = m.ok, m.found
			}
		}
		line(exitOK, ok)
		if found != "" {
			line(exitFound, found)
		}
	}
	line(exitUsage, "bad input (the message names the flag, or the file, line and field)")
	line(exitInternal, "I/O or internal error")
	if cmd == "" || cmd == "pkt" {
		line(exitUnsupported, "pkt: a script the native model does not support")
	}
	if cmd == "" || cmd == "worker" {
		line(act.ExitWorkerOOM, "worker: a worker process over its --memory-limit")
	}
	switch cmd {
	case "store", "worker":
	case "run":
		line(exitInterrupted, "interrupted (SIGINT, SIGTERM), after the checkpoint is written")
	case "":
		line(exitInterrupted, "interrupted (SIGINT, SIGTERM); run writes its checkpoint first")
	default:
		line(exitInterrupted, "interrupted (SIGINT, SIGTERM)")
	}
	return b.String()
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

func commands() []command {
	return []command{
		{"sim", "run one simulation and print its summary", runSim},
		{"list", "list CCAIs, environment parameters and state variables", runList},
		{"run", "run a campaign: actfuzz run [CAMPAIGN.yaml] [--method act|ran|man] [--budget N] [--out DIR]", runRun},
		{"compare", "run ACT, RAN and MAN on the same budget and compare coverage", runCompare},
		{"report", "write a campaign's HTML report: actfuzz report DIR (DIR/report/index.html)", runReport},
		{"replay", "replay a seed file and check that its finding reproduces", runReplay},
		{"minimize", "shrink a finding's seed: fewest phases, simplest parameters, earliest hit", runMinimize},
		{"diff", "run a seed on two subjects and report where they disagree", runDiff},
		{"confirm", "re-run a finding N times on a subject (the kernel: --subject linux) and count how often it held", runConfirm},
		{"triage", "follow each finding group of a campaign to a root cause: actfuzz triage DIR [--runs N] [--json] (DIR/triage.md)", runTriage},
		{"pkt", "run a packetdrill script (or every script under a directory) against the native model: actfuzz pkt SCRIPT.pkt|DIR [--profile linux]", runPkt},
		{"export", "write a finding's seed as a packetdrill script for the kernel: actfuzz export SEED --pkt [--out FILE.pkt]", runExport},
		{"sym", "explore every event order of a window of uncertain packet delays (SEIB)", runSym},
		{"store", "keep a part of a cluster campaign's coverage store: actfuzz store --nats URL --part J (run --store-parts N)", runStore},
		{"worker", "a cluster's worker host (--nats URL), or a campaign's worker process on stdin/stdout (started by run and compare)", runWorker},
	}
}

// Main runs the command named by os.Args and exits with its status.
func Main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := dispatch(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		if len(args) == 2 && args[0] == "help" {
			return dispatch(ctx, []string{args[1], "--help"}, stdout, stderr)
		}
		usage(stderr)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	if args[0] == "--version" || args[0] == "-version" || args[0] == "version" {
		fmt.Fprintln(stdout, corpus.ProgramVersion())
		return exitOK
	}
	for _, c := range commands() {
		if c.name == args[0] {
			code := c.run(ctx, args[1:], stdout, stderr)
			if ctx.Err() != nil && c.name != "worker" && c.name != "store" && code != exitUsage {
				return exitInterrupted
			}
			return code
		}
	}
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	fmt.Fprintf(stderr, "actfuzz: unknown command %q%s\n", args[0], suggest.DidYouMean(args[0], names))
	usage(stderr)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: actfuzz COMMAND [flags]   (actfuzz help COMMAND, actfuzz --version)\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, exitHelp(""))
}

// quietWriter passes on only what looks like an error ("actfuzz …: …"
// lines), for sym --quiet.
type quietWriter struct{ w io.Writer }

func (q quietWriter) Write(b []byte) (int, error) {
	if bytes.HasPrefix(b, []byte("actfuzz ")) || bytes.HasPrefix(b, []byte("usage")) {
		return q.w.Write(b)
	}
	return len(b), nil
}

// progName is the name this program was run by, for the commands it
// suggests: "actfuzz", or a user's own program built on Main.
func progName() string {
	if len(os.Args) == 0 || os.Args[0] == "" {
		return "actfuzz"
	}
	return filepath.Base(os.Args[0])
}

// runSym is `actfuzz sym` (package symbolic) with seeds written by corpus.
// The exploration's failures (its status 1) are errors here: 3.
func runSym(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmd := symbolic.Command{WriteSeeds: corpus.WriteWitnessSeeds, Program: commandName()}
	// -v and --quiet, as on every command: --quiet silences its progress.
	var rest []string
	for _, a := range args {
		switch a {
		case "-v", "--v", "-v=true", "--v=true":
		case "-quiet", "--quiet", "-quiet=true", "--quiet=true":
			stderr = quietWriter{stderr}
		default:
			rest = append(rest, a)
		}
	}
	if hasSeedFlag(rest) {
		return runSymSeed(ctx, rest, stdout, stderr)
	}
	code := cmd.Main(ctx, rest, stdout, stderr)
	if code == symbolic.ExitOK && helpAsked(rest) {
		fs, _ := symSeedFlags(stderr)
		fmt.Fprintln(stderr, symSeedUsage)
		fs.PrintDefaults()
	}
	if code == symbolic.ExitError {
		return exitInternal
	}
	return code
}

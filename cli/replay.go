package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/internal/bounded"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

func runReplay(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("actfuzz replay", flag.ContinueOnError)
	tracePath := fs.String("trace", "", "write the whole state trace as CSV to `FILE.csv` (gzip-compressed when FILE ends in .gz; a finding's stored trace is trimmed to the hits)")
	plotPath := fs.String("plot", "", "write a plot of cwnd, ssthresh and ca_state to `FILE.png` (or .svg)")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	runs := fs.Int("runs", 10, "runs of a seed whose subject is not deterministic (linux): how often its condition holds, as actfuzz confirm")
	_ = addVerbosityFlags(fs)
	isoFlags := addIsolateFlags(fs, true)
	positional, ok, code := parseInterleaved(fs, args, stderr)
	if !ok {
		return code
	}
	iso, ok := isoFlags.options("replay", stderr)
	if !ok {
		return exitUsage
	}
	if len(positional) != 1 {
		fmt.Fprintln(stderr, "usage: actfuzz replay SEED.json [--trace out.csv] [--plot out.png] [--json]")
		return exitUsage
	}
	if *plotPath != "" && !plotExt(*plotPath) {
		fmt.Fprintf(stderr, "actfuzz replay: --plot %q: want a .png or .svg file\n", *plotPath)
		return exitUsage
	}
	seed, subj, ok := openSeed(positional[0], "replay", stderr)
	if !ok {
		return exitUsage
	}
	defer closeSubject(subj)
	processFault := seed.Finding != nil && corpus.ProcessFault(seed.Finding.Kind)
	if c, ok := subj.(netenv.Capable); ok && !c.Capabilities().Deterministic && seed.Witness == nil && !processFault {
		// A real kernel does not repeat itself bit for bit: replaying
		// its seed is confirming it, statistically. A hang, OOM or
		// crash replays once in a worker (below) on every subject.
		if *tracePath != "" || *plotPath != "" {
			fmt.Fprintf(stderr, "actfuzz replay: --trace and --plot: a %s seed replays as repeated runs (actfuzz sim --subject %s --trace writes one run's trace)\n", subj.Name(), subj.Name())
			return exitUsage
		}
		if *runs < 1 {
			fmt.Fprintf(stderr, "actfuzz replay: --runs %d: want at least 1\n", *runs)
			return exitUsage
		}
		return confirmSeed(ctx, "replay", positional[0], seed, subj, *runs, 1, *asJSON, stdout, stderr)
	}
	if seed.Witness != nil {
		return replayWitness(ctx, seed, iso.Watchdog, *tracePath, *plotPath, *asJSON, stdout, stderr)
	}
	if seed.SymWindow != nil && seed.Finding != nil && seed.Finding.Kind == corpus.FaultHang {
		// A hang of a window of ACT's symbolic step: the window, not
		// the configuration, is what hung. --watchdog when given, else
		// the campaign's.
		wd := time.Duration(0)
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "watchdog" {
				wd = iso.Watchdog
			}
		})
		return replaySymbolicHang(ctx, seed, wd, *asJSON, stdout, stderr)
	}
	if processFault {
		watchdogSet := false
		fs.Visit(func(f *flag.Flag) { watchdogSet = watchdogSet || f.Name == "watchdog" })
		return replayProcessFault(ctx, seed, faultReplayOptions(seed, iso, watchdogSet), *asJSON, stdout, stderr)
	}
	var obs observe.Observer
	var trace *netenv.CSVTrace
	closeTrace := func() error { return nil }
	pl := corpus.NewTracePlot(seed, subj.Capabilities())
	if *plotPath != "" {
		obs = pl
	}
	if *tracePath != "" {
		f, err := corpus.CreateFile(*tracePath)
		if err != nil {
			fmt.Fprintf(stderr, "actfuzz replay: --trace: %v\n", err)
			return exitInternal
		}
		defer f.Close()
		var w io.Writer
		w, closeTrace = corpus.TraceWriter(f, *tracePath)
		trace = netenv.NewCSVTrace(w, subj.Capabilities(), seed.CCAI[0])
		if obs != nil {
			trace.Next = obs
		}
		obs = trace
	}
	// Under --watchdog and the signals, whatever the seed makes the run
	// do (internal/bounded): a run past the watchdog is a hang, not a
	// reproduction.
	res, err := bounded.Run(ctx, iso.Watchdog, func(ctx context.Context) (*corpus.ReplayResult, error) {
		return corpus.ReplayWith(ctx, subj, seed, obs)
	})
	if errors.Is(err, bounded.ErrWatchdog) {
		return replayHung(seed, iso.Watchdog, *asJSON, stdout)
	}
	if errors.Is(err, bounded.ErrAbandoned) {
		fmt.Fprintf(stderr, "actfuzz replay: %v\n", err)
		return exitInternal // interrupted: dispatch exits 130
	}
	if trace != nil {
		if err := cmp.Or(trace.Flush(), closeTrace()); err != nil {
			fmt.Fprintf(stderr, "actfuzz replay: --trace: %v\n", err)
			return exitInternal
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz replay: %v\n", err)
		return exitInternal
	}
	if *plotPath != "" {
		var cw float64
		if v, ok := res.HitState["cwnd"].(float64); ok {
			cw = v
		}
		if err := pl.Save(*plotPath, corpus.PlotTitle(seed), seed.Schedule, time.Duration(res.HitTimeNS), cw); err != nil {
			fmt.Fprintf(stderr, "actfuzz replay: --plot: %v\n", err)
			return exitInternal
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(res)
	} else if seed.Finding != nil {
		if res.Reproduced {
			fmt.Fprintf(stdout, "reproduced: %s (%s) at %.6f s, trace sha256 %s\n", seed.Finding.Condition, seed.Finding.Kind, float64(res.HitTimeNS)/1e9, res.Result.TraceSHA256)
		} else {
			fmt.Fprintf(stdout, "NOT reproduced: %s\n", seed.Finding.Condition)
			for _, d := range res.Diff {
				fmt.Fprintf(stdout, "  %s\n", d)
			}
			if seed.Program != corpus.ProgramVersion() {
				fmt.Fprintf(stdout, "  (written by %s; this is %s: changes to the TCP machinery or the CCAI in between can move a hit)\n", seed.Program, corpus.ProgramVersion())
			}
		}
	} else {
		fmt.Fprintf(stdout, "ran: trace sha256 %s\n", res.Result.TraceSHA256)
	}
	if !res.Reproduced {
		return exitFound
	}
	return exitOK
}

// replayHung reports a replay that went past --watchdog: not reproduced
// (exit 1), as a hang.
func replayHung(seed *corpus.Seed, watchdog time.Duration, asJSON bool, stdout io.Writer) int {
	what := "the run"
	if seed.Finding != nil {
		what = seed.Finding.Condition
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(map[string]any{"reproduced": false, "diff": []string{fmt.Sprintf("the run went past --watchdog %v", watchdog)}})
		return exitFound
	}
	fmt.Fprintf(stdout, "NOT reproduced: %s\n  the run went past --watchdog %v (a hang; a longer --watchdog gives it more time)\n", what, watchdog)
	return exitFound
}

// plotExt says whether path names a plot format: PNG or SVG.
func plotExt(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png", ".svg":
		return true
	}
	return false
}

// replayWitness replays a seed written by actfuzz sym --seeds.
func replayWitness(ctx context.Context, seed *corpus.Seed, watchdog time.Duration, tracePath, plotPath string, asJSON bool, stdout, stderr io.Writer) int {
	art := corpus.NewWitnessArtifacts(seed)
	res, err := bounded.Run(ctx, watchdog, func(ctx context.Context) (*corpus.ReplayResult, error) {
		return corpus.ReplayWitness(ctx, seed, art.Tracing())
	})
	if errors.Is(err, bounded.ErrWatchdog) {
		return replayHung(seed, watchdog, asJSON, stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz replay: %v\n", err)
		return exitInternal
	}
	if tracePath != "" {
		csv, err := art.CSV()
		if err == nil {
			err = corpus.WriteFileAtomic(tracePath, csv)
		}
		if err != nil {
			fmt.Fprintf(stderr, "actfuzz replay: --trace: %v\n", err)
			return exitInternal
		}
	}
	if plotPath != "" {
		if err := art.SavePlot(plotPath); err != nil {
			fmt.Fprintf(stderr, "actfuzz replay: --plot: %v\n", err)
			return exitInternal
		}
	}
	w := seed.Witness
	switch {
	case asJSON:
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(res)
	case res.Reproduced:
		fmt.Fprintf(stdout, "reproduced: branch %d at d = %v ms: %s, trace sha256 %s\n", w.Branch, w.DelaysMS, w.Outcome, res.Result.TraceSHA256)
	default:
		fmt.Fprintf(stdout, "NOT reproduced: branch %d at d = %v ms\n", w.Branch, w.DelaysMS)
		for _, d := range res.Diff {
			fmt.Fprintf(stdout, "  %s\n", d)
		}
		if seed.Program != corpus.ProgramVersion() {
			fmt.Fprintf(stdout, "  (written by %s; this is %s)\n", seed.Program, corpus.ProgramVersion())
		}
	}
	if !res.Reproduced {
		return 1
	}
	return 0
}

// faultReplayOptions are the worker options of a process fault's replay:
// without --watchdog (or with 0), 60 s, or a minute past what a run of
// the seed's subject may take by design (the quic subject's real-time
// runs: 4 min).
func faultReplayOptions(seed *corpus.Seed, iso act.IsolateOptions, watchdogSet bool) act.IsolateOptions {
	if !watchdogSet {
		iso.Watchdog = 0
	}
	return iso.ForSubject(capabilitiesOf(seed.Subject))
}

// replayProcessFault replays a hang, oom or crash seed in a worker process
// under a watchdog and a memory limit, so that the replay itself can
// neither hang nor die.
func replayProcessFault(ctx context.Context, seed *corpus.Seed, iso act.IsolateOptions, asJSON bool, stdout, stderr io.Writer) int {
	f, err := act.ReplayIsolated(ctx, seed, iso)
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz replay: %v\n", err)
		return exitInternal
	}
	want := seed.Finding.Kind
	reproduced := f != nil && f.Kind == want
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(map[string]any{"reproduced": reproduced, "fault": f})
	} else if reproduced {
		fmt.Fprintf(stdout, "reproduced: %s: %s\n", want, f.Detail)
	} else {
		got := "the run ended cleanly"
		if f != nil {
			got = "fault " + f.Kind + ": " + f.Detail
		}
		fmt.Fprintf(stdout, "NOT reproduced: %s: %s\n", want, got)
	}
	if !reproduced {
		return 1
	}
	return 0
}

// replaySymbolicHang explores the window a symbolic-step hang seed names
// again under the watchdog (act.ReplaySymbolicWindow) and says whether it
// hung this time. Exit 0 when it did, 1 when it did not.
func replaySymbolicHang(ctx context.Context, seed *corpus.Seed, watchdog time.Duration, asJSON bool, stdout, stderr io.Writer) int {
	r, err := act.ReplaySymbolicWindow(ctx, seed, watchdog)
	if err != nil {
		var ue *corpus.UsageError
		if errors.As(err, &ue) {
			// The window cannot be located in this configuration
			// (an edited seed, or another program's simulator).
			fmt.Fprintf(stderr, "actfuzz replay: symbolic_window: %v\n", err)
			return exitUsage
		}
		fmt.Fprintf(stderr, "actfuzz replay: %v\n", err)
		return exitInternal
	}
	w := seed.SymWindow
	switch {
	case asJSON:
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(map[string]any{"reproduced": r.Hung, "symbolic_window": r})
	case r.Hung:
		fmt.Fprintf(stdout, "reproduced: hang: symbolic window %q at %v: no simulation of the window finished within the watchdog of %v (the window's goroutine is abandoned)\n", w.Window, time.Duration(w.AtNS), r.Watchdog)
	default:
		complete := "complete"
		if !r.Complete {
			complete = fmt.Sprintf("capped at max_branches %d", w.MaxBranches)
		}
		fmt.Fprintf(stdout, "NOT reproduced: hang: symbolic window %q at %v (%s %d..%d of flow %d) finished this time within the watchdog of %v: %d classes (%s), %d events. A hang depends on wall clock (load, the watchdog's length): this does not show that the window cannot hang.\n",
			w.Window, time.Duration(w.AtNS), r.Kind, r.From, r.From+uint64(max(r.N, 1))-1, r.Flow, r.Watchdog, r.Branches, complete, r.Events)
	}
	if !r.Hung {
		return 1
	}
	return 0
}

package symbolic

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/actfuzz/actfuzz/internal/shell"
)

// Exit statuses of Main.
const (
	ExitOK    = 0
	ExitError = 1 // the exploration failed or was interrupted
	ExitUsage = 2 // bad input
)

// Main implements `actfuzz sym`:
//
//	actfuzz sym [--scenario udp4|tcp-bulk] [--n N] [--lo MS] [--hi MS]
//	            [--dmax MS] [--res MS] [--reductions SCI] [--granularity component|node]
//	            [--max-branches N] [--time-limit D] [--verify K] [--branches] [--json]
//	            [SCENARIO.yaml]
//	actfuzz sym --table [--n MAXN] [--time-limit PER-CELL]
//
// Bad input exits with status 2 and a message naming the flag. Main cannot
// write seeds (--seeds); Command.Main can.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return Command{}.Main(ctx, args, stdout, stderr)
}

// SeedWriter writes seed files for an exploration's witnesses into dir
// (every: for every kept branch, not only the notable ones) and returns
// their paths. actfuzz passes corpus.WriteWitnessSeeds: seeds belong to
// package corpus, which this package must not import.
type SeedWriter func(ctx context.Context, sc *Scenario, rep *Report, dir string, every bool) ([]string, error)

// Command is `actfuzz sym` with the means to write seeds.
type Command struct {
	WriteSeeds SeedWriter
	// Program starts the replay command printed for the seeds written
	// ("actfuzz" when empty), quoted for a shell.
	Program string
}

// Main runs the command; see the package-level Main.
func (cmd Command) Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("actfuzz sym", flag.ContinueOnError)
	fs.SetOutput(stderr)
	scenario := fs.String("scenario", "udp4", "built-in scenario: "+strings.Join(Builtins, " or "))
	n := fs.Int("n", 0, "number of uncertain packets (udp4 default 2, tcp-bulk default 3)")
	lo := fs.Float64("lo", 1, "lowest uncertain delay (ms)")
	hi := fs.Float64("hi", 0, "highest uncertain delay (ms; udp4 default 1024)")
	dmax := fs.Float64("dmax", 0, "highest uncertain delay (ms) for tcp-bulk (default 256); same as --hi")
	res := fs.Float64("res", 1, "resolution of the delays (ms)")
	reds := fs.String("reductions", "SCI", "SEIB reductions: none, or letters from S, C (or Ce, Cc, Coc) and I; H adds state hashing (topology scenarios, not with I)")
	gran := fs.String("granularity", "component", "I decomposition: component (state components) or node (topology nodes, as SEIB)")
	maxBranches := fs.Int("max-branches", DefaultMaxBranches, "stop after this many branches (the report is then incomplete)")
	timeLimit := fs.Duration("time-limit", 0, "stop the exploration after this wall time, e.g. 60s (the report is then incomplete)")
	verify := fs.Int("verify", 0, "re-run up to K extreme points of each branch concretely to check it")
	branches := fs.Bool("branches", false, "print every branch (text output; --json always lists them)")
	keep := fs.Int("keep", DefaultKeepBranches, "branches whose details are kept in the report")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	seedDir := fs.String("seeds", "", "write a replayable seed (JSON, CSV trace, PNG plot) into `DIR` for the first branch of every outcome and the worst and best case of every metric")
	seedsEvery := fs.Bool("seeds-every-branch", false, "with --seeds: a seed for every kept branch (--keep) too")
	noSnap := fs.Bool("no-snapshot", false, "run every branch from time zero instead of from a snapshot at the window's start (to compare)")
	table := fs.Bool("table", false, "measure the branch-count tables (udp4 n=1…--n beside SEIB Table 2, tcp-bulk dmax 4…16384 ms); --time-limit bounds each cell (default 120s)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: actfuzz sym [flags] [SCENARIO.yaml]\n\nExplores every order of events that uncertain packet delays can cause (SEIB interval branching).\n\nflags:")
		fs.PrintDefaults()
	}
	positional, code, ok := parseInterleaved(fs, args)
	if !ok {
		return code
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "actfuzz sym: "+format+"\n", a...)
		return ExitUsage
	}
	if len(positional) > 1 {
		return bad("one scenario file at most, got %d arguments (%s)", len(positional), strings.Join(positional, " "))
	}
	red, err := ParseReductions(*reds)
	if err != nil {
		return bad("--reductions: %v", err)
	}
	if red.H && red.I {
		return bad("--reductions: H (state hashing) does not combine with I")
	}
	var byNode bool
	switch *gran {
	case "component", "components":
	case "node", "nodes":
		byNode = true
	default:
		return bad("--granularity: %q, want component or node", *gran)
	}
	if set["n"] && (*n < 1 || *n > MaxVars) {
		return bad("--n: %d is out of range 1..%d", *n, MaxVars)
	}
	resD, err := delayFlag("res", *res)
	if err != nil || resD <= 0 {
		return bad("--res: %v ms must be a positive resolution", *res)
	}
	loD, err := delayFlag("lo", *lo)
	if err != nil {
		return bad("%v", err)
	}
	if set["hi"] && set["dmax"] && *hi != *dmax {
		return bad("--dmax: %v ms contradicts --hi %v ms (they are the same bound)", *dmax, *hi)
	}
	hiV, hiFlag := *hi, "hi"
	if set["dmax"] {
		hiV, hiFlag = *dmax, "dmax"
	}
	hiD, err := delayFlag(hiFlag, hiV)
	if err != nil {
		return bad("%v", err)
	}
	if *maxBranches < 1 {
		return bad("--max-branches: %d must be ≥ 1", *maxBranches)
	}
	if *verify < 0 || *verify > 2*MaxVars {
		return bad("--verify: %d is out of range 0..%d", *verify, 2*MaxVars)
	}
	if *keep < 0 {
		return bad("--keep: %d must be ≥ 0", *keep)
	}
	if *timeLimit < 0 {
		return bad("--time-limit: %v must be ≥ 0", *timeLimit)
	}
	if *seedsEvery && *seedDir == "" {
		return bad("--seeds-every-branch: give --seeds DIR too")
	}
	if *seedDir != "" && (cmd.WriteSeeds == nil || *table) {
		return bad("--seeds: not available here (use actfuzz sym, without --table)")
	}

	if *table {
		maxN := 4
		if set["n"] {
			maxN = *n
		}
		err := Table(ctx, stdout, TableConfig{MaxN: maxN, Cell: *timeLimit, Progress: stderr})
		if err != nil {
			fmt.Fprintf(stderr, "actfuzz sym: %v\n", err)
			return ExitError
		}
		return ExitOK
	}
	sc, err := chooseScenario(positional, set, *scenario, *n, loD, hiD, resD)
	if err != nil {
		return bad("%v", err)
	}
	if err := sc.Validate(); err != nil {
		return bad("%v", err)
	}
	if red.H && sc.TCP != nil {
		return bad("--reductions: H (state hashing) needs a topology (UDP) scenario, not TCP")
	}
	if *keep == 0 {
		*keep = -1
	}
	rep, err := Explore(ctx, sc, Options{Reductions: red, MaxBranches: *maxBranches, Verify: *verify, KeepBranches: *keep, NodeGranularity: byNode, TimeLimit: *timeLimit, NoSnapshot: *noSnap})
	if rep != nil {
		if *asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			if e := enc.Encode(rep); e != nil && err == nil {
				err = e
			}
		} else {
			rep.WriteText(stdout, *branches)
		}
	}
	if err == nil && *seedDir != "" {
		var paths []string
		paths, err = cmd.WriteSeeds(ctx, sc, rep, *seedDir, *seedsEvery)
		if len(paths) > 0 {
			fmt.Fprintf(stderr, "actfuzz sym: wrote %d seeds to %s (replay: %s replay %s)\n", len(paths), *seedDir, cmp.Or(cmd.Program, "actfuzz"), shell.Quote(paths[0]))
		}
		if err != nil {
			err = fmt.Errorf("--seeds: %w", err)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz sym: %v\n", err)
		return ExitError
	}
	return ExitOK
}

func fmtVec(w []float64) string {
	parts := make([]string, len(w))
	for i, v := range w {
		parts[i] = fmt.Sprintf("%g", v)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// WriteText prints the report for people.
func (r *Report) WriteText(w io.Writer, branches bool) {
	var names []string
	for _, v := range r.Vars {
		names = append(names, v.Name)
	}
	fmt.Fprintf(w, "scenario %s, reductions %s\n", r.Scenario, r.Reductions)
	if len(r.Vars) > 0 {
		v := r.Vars[0]
		fmt.Fprintf(w, "uncertain delays %s in [%g, %g] ms, resolution %g ms\n", strings.Join(names, ", "), v.LoMS, v.HiMS, v.ResMS)
	}
	complete := "complete"
	if !r.Complete {
		complete = "INCOMPLETE: the branches do not cover every delay vector"
	}
	fmt.Fprintf(w, "branches     %d (%s)\n", r.Branches, complete)
	fmt.Fprintf(w, "comparisons  %d that may fork, %d overlapping, %d in all; forks %d\n", r.Comparisons, r.Overlapping, r.AllComparisons, r.Forks)
	fmt.Fprintf(w, "solver calls %d", r.SolverCalls)
	if r.SolverGaveUp > 0 {
		fmt.Fprintf(w, " (%d gave up)", r.SolverGaveUp)
	}
	fmt.Fprintf(w, ", runs %d, events %d (%d simulated)\n", r.Runs, r.Events, r.EventsSimulated)
	if r.Snapshot != "" {
		fmt.Fprintf(w, "snapshot     %s\n", r.Snapshot)
	}
	if r.Merged > 0 || strings.Contains(r.Reductions, "H") {
		fmt.Fprintf(w, "merged       %d runs stopped at a state an earlier run reached (H; %d states stored)\n", r.Merged, r.StatesStored)
	}
	fmt.Fprintf(w, "wall time    %.3f s, peak heap %.1f MB\n", r.WallSeconds, r.PeakHeapMB)
	if r.Concretized > 0 {
		fmt.Fprintf(w, "note: %d branches took an RTT-dependent timer offset at its witness value (not linear in the delays), so their classes may be approximations\n", r.Concretized)
		if r.PaceConcretized > 0 {
			fmt.Fprintf(w, "note: %d of them took a pacing gap whose rate follows a delivery-rate or RTT sample that varies with the delays\n", r.PaceConcretized)
		}
	}
	if r.Diverged > 0 {
		fmt.Fprintf(w, "WARNING: %d branches diverged from the path they were forked from: a handler computed a delay from the uncertain delays, so their classes are approximations\n", r.Diverged)
	}
	if r.Unsound > 0 {
		fmt.Fprintf(w, "WARNING: verification found %d branches whose class holds another outcome\n", r.Unsound)
	}
	fmt.Fprintf(w, "outcomes (%d):\n", len(r.Outcomes))
	for i, o := range r.Outcomes {
		fmt.Fprintf(w, "  %s   witness d=%s ms\n", o, fmtVec(r.OutcomeWitness[i]))
	}
	if len(r.Extremes) > 0 {
		fmt.Fprintln(w, "worst and best case:")
		for _, e := range r.Extremes {
			fmt.Fprintf(w, "  %-24s min %d (branch %d, d=%s)  max %d (branch %d, d=%s)\n", e.Metric, e.Min, e.MinBranch, fmtVec(e.MinWitness), e.Max, e.MaxBranch, fmtVec(e.MaxWitness))
		}
	}
	if branches {
		fmt.Fprintln(w, "branches:")
		for _, b := range r.BranchList {
			flag := ""
			if b.Diverged {
				flag += " DIVERGED"
			}
			if b.Unsound {
				flag += " UNSOUND"
			}
			fmt.Fprintf(w, "  #%d d=%s  %s%s\n", b.ID, fmtVec(b.Witness), b.Outcome, flag)
			if len(b.Constraints) > 0 {
				fmt.Fprintf(w, "      %s\n", strings.Join(b.Constraints, ", "))
			}
		}
		if r.Truncated {
			fmt.Fprintf(w, "  … (%d more not kept)\n", r.Branches-len(r.BranchList))
		}
	}
}

// parseInterleaved parses fs's flags, which may come before or after the
// scenario file, and returns the other arguments. When parsing fails it
// returns false with the exit code (ExitOK for -h).
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, int, bool) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, ExitOK, false
			}
			return nil, ExitUsage, false
		}
		if fs.NArg() == 0 {
			return positional, ExitOK, true
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// delayFlag is the delay flag --name's v milliseconds, at most 1e6 (about
// 17 minutes: beyond any path's delay), rounded to integer nanoseconds.
func delayFlag(name string, v float64) (time.Duration, error) {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > 1e6 {
		return 0, fmt.Errorf("--%s: %v ms is out of range [0, 1e6]", name, v)
	}
	return time.Duration(math.Round(v * 1e6)), nil
}

// chooseScenario is the scenario to explore: the file given, with the
// window flags set overriding its window, or else the built-in scenario,
// with its own defaults for the flags not set (udp4: 2 packets up to
// 1024 ms; tcp-bulk: 3 up to 256 ms).
func chooseScenario(positional []string, set map[string]bool, builtin string, n int, lo, hi, res time.Duration) (*Scenario, error) {
	if len(positional) == 1 {
		if set["scenario"] {
			return nil, errors.New("--scenario: give a built-in scenario or a scenario file, not both")
		}
		sc, err := LoadScenario(positional[0])
		if err != nil {
			return nil, err
		}
		if set["n"] {
			sc.Window.N = n
		}
		if set["lo"] {
			sc.Window.Lo = lo
		}
		if set["hi"] || set["dmax"] {
			sc.Window.Hi = hi
		}
		if set["res"] {
			sc.Window.Res = res
		}
		return sc, nil
	}
	switch builtin {
	case "udp4":
		if !set["n"] {
			n = 2
		}
		if !set["hi"] && !set["dmax"] {
			hi = 1024 * time.Millisecond
		}
	case "tcp-bulk":
		if !set["n"] {
			n = 3
		}
		if !set["hi"] && !set["dmax"] {
			hi = 256 * time.Millisecond
		}
	default:
		return nil, fmt.Errorf("--scenario: unknown scenario %q (built-in: %s)", builtin, strings.Join(Builtins, ", "))
	}
	sc, _ := Builtin(builtin, n, lo, hi)
	sc.Window.Res = res
	return sc, nil
}

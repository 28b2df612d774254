package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/internal/shell"
	"github.com/actfuzz/actfuzz/netenv/symbolic"
)

// hasSeedFlag reports whether `actfuzz sym` was given --seed (not --seeds).
func hasSeedFlag(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && name == "seed" {
			return true
		}
	}
	return false
}

// helpAsked reports a -h or --help among args.
func helpAsked(args []string) bool {
	for _, a := range args {
		switch a {
		case "-h", "--h", "-help", "--help":
			return true
		}
	}
	return false
}

// runSymSeed is `actfuzz sym --seed SEED.json --window W`: a window of the
// seed's packets explored on its whole configuration (corpus.ExploreSeed).
func runSymSeed(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, f := symSeedFlags(stderr)
	positional, ok, code := parseInterleaved(fs, args, stderr)
	if !ok {
		return code
	}
	return symSeedRun(ctx, positional, f, stdout, stderr)
}

// symSeedFlagVals are the flags of `actfuzz sym --seed`.
type symSeedFlagVals struct {
	seed, window, rng, reds, out *string
	flow, maxBranches, maxSeeds  *int
	res                          *float64
	noSeeds, asJSON, noSnap      *bool
	timeLimit                    *time.Duration
}

// symSeedUsage introduces the --seed flags in `actfuzz sym --help`.
const symSeedUsage = `
actfuzz sym --seed SEED.json --window W [--range LO..HI] [--reductions SCI] [--out DIR]

Explores a window of a native seed's packets (W: 'last N before hit', 'data A..B'
or 'acks A..B') on the seed's whole configuration, every other packet keeping
its seeded random delay; classes hitting the seed's condition become witness
seeds (exit 1 when one does).

flags with --seed:`

func symSeedFlags(stderr io.Writer) (*flag.FlagSet, symSeedFlagVals) {
	fs := flag.NewFlagSet("actfuzz sym --seed", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f symSeedFlagVals
	f.seed = fs.String("seed", "", "explore a window of this native seed's packets on its whole configuration (`SEED.json`)")
	f.window = fs.String("window", "", "the window: 'last N before hit' (a seed with a finding), 'data A..B' or 'acks A..B' (packet indices of the flow)")
	f.flow = fs.Int("flow", -1, "the window's flow (default: the finding's, else 0)")
	f.rng = fs.String("range", "1..1024ms", "each window packet's extra delay, LO..HI (ms, or s with a unit)")
	f.res = fs.Float64("res", 1, "resolution of the extra delays (ms)")
	f.reds = fs.String("reductions", "SCI", "SEIB reductions: none, or letters from S, C (or Ce, Cc, Coc) and I")
	f.out = fs.String("out", "", "write a witness seed for every class that hits into `DIR` (default: beside the seed)")
	f.noSeeds = fs.Bool("no-seeds", false, "write no witness seeds")
	f.maxSeeds = fs.Int("max-seeds", 50, "witness seeds written per condition, for the first classes that hit (0: one for every class)")
	f.maxBranches = fs.Int("max-branches", symbolic.DefaultMaxBranches, "stop after this many classes (the report is then incomplete)")
	f.timeLimit = fs.Duration("time-limit", 0, "stop the exploration after this wall time (the report is then incomplete)")
	f.asJSON = fs.Bool("json", false, "print the result as JSON")
	f.noSnap = fs.Bool("no-snapshot", false, "run every class from time zero instead of from a snapshot at the window's start (to compare)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, strings.TrimPrefix(symSeedUsage, "\n"))
		fs.PrintDefaults()
	}
	return fs, f
}

func symSeedRun(ctx context.Context, positional []string, f symSeedFlagVals, stdout, stderr io.Writer) int {
	seedPath, window, flow, rng, res, reds, out, noSeeds, maxBranches, timeLimit, asJSON :=
		f.seed, f.window, f.flow, f.rng, f.res, f.reds, f.out, f.noSeeds, f.maxBranches, f.timeLimit, f.asJSON
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "actfuzz sym: "+format+"\n", a...)
		return exitUsage
	}
	if len(positional) > 0 {
		return bad("--seed: a scenario file (%s) does not combine with --seed", strings.Join(positional, " "))
	}
	if *seedPath == "" {
		return bad("--seed: give a seed file")
	}
	if *window == "" {
		return bad("--window: give 'last N before hit', 'data A..B' or 'acks A..B'")
	}
	ws, err := corpus.ParseWindowSpec(*window)
	if err != nil {
		return bad("--window: %v", err)
	}
	lo, hi, err := corpus.ParseRangeMS(*rng)
	if err != nil {
		return bad("--range: %v", err)
	}
	if math.IsNaN(*res) || *res <= 0 || *res > 1e6 {
		return bad("--res: %v ms must be a positive resolution", *res)
	}
	resD := time.Duration(math.Round(*res * 1e6))
	if lo%resD != 0 || hi%resD != 0 {
		return bad("--range: %v..%v must be multiples of the resolution %v (--res)", lo, hi, resD)
	}
	red, err := symbolic.ParseReductions(*reds)
	if err != nil {
		return bad("--reductions: %v", err)
	}
	if red.H {
		return bad("--reductions: H (state hashing) needs a topology (UDP) scenario; a seed's run is TCP")
	}
	if *maxBranches < 1 {
		return bad("--max-branches: %d must be ≥ 1", *maxBranches)
	}
	if *timeLimit < 0 {
		return bad("--time-limit: %v must be ≥ 0", *timeLimit)
	}
	if *f.maxSeeds < 0 {
		return bad("--max-seeds: %d must be ≥ 0", *f.maxSeeds)
	}
	if *noSeeds && *out != "" {
		return bad("--no-seeds: does not combine with --out")
	}
	seed, err := corpus.ReadSeed(*seedPath)
	if err != nil {
		return bad("--seed: %v", err)
	}
	name := strings.TrimSuffix(filepath.Base(*seedPath), filepath.Ext(*seedPath))
	dir := *out
	if dir == "" && !*noSeeds {
		dir = filepath.Dir(*seedPath)
	}
	if seed.Finding != nil && *flow >= 0 && *flow != seed.Finding.Flow && ws.Kind == "before" {
		fmt.Fprintf(stderr, "actfuzz sym: note: the window is on flow %d, the finding on flow %d\n", *flow, seed.Finding.Flow)
	}
	r, err := corpus.ExploreSeed(ctx, seed, corpus.SymSeedOptions{
		Window: ws, Flow: *flow, Lo: lo, Hi: hi, Res: resD, Reductions: red,
		MaxBranches: *maxBranches, TimeLimit: *timeLimit, OutDir: dir, Name: name, MaxSeeds: *f.maxSeeds, NoSnapshot: *f.noSnap,
	})
	var ue *corpus.UsageError
	if errors.As(err, &ue) {
		return bad("%v", ue)
	}
	if r != nil && r.Report != nil {
		if *asJSON {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			_ = enc.Encode(r)
		} else {
			writeSymSeed(stdout, *seedPath, ws.Text, r)
		}
		if len(r.Seeds) > 0 {
			fmt.Fprintf(stderr, "actfuzz sym: wrote %d witness seeds to %s (replay: %s replay %s)\n", len(r.Seeds), dir, commandName(), shell.Quote(r.Seeds[0]))
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(stderr, "actfuzz sym: interrupted: %v\n", err)
			return exitInterrupted
		}
		fmt.Fprintf(stderr, "actfuzz sym: %v\n", err)
		return exitInternal
	}
	for _, c := range r.Conditions {
		if c.Classes > 0 {
			return exitFound
		}
	}
	return exitOK
}

func writeSymSeed(w io.Writer, path, window string, r *corpus.SymSeedResult) {
	rep := r.Report
	kind := "data segments"
	if r.Kind == "ack" {
		kind = "ACKs"
	}
	fmt.Fprintf(w, "seed %s, window %q: %s %d..%d of flow %d, extra delays in [%g, %g] ms, reductions %s\n",
		path, window, kind, r.From, r.From+uint64(r.N)-1, r.Flow, rep.Vars[0].LoMS, rep.Vars[0].HiMS, rep.Reductions)
	complete := "complete"
	if !rep.Complete {
		complete = "INCOMPLETE: the classes do not cover every delay vector"
	}
	fmt.Fprintf(w, "classes      %d (%s)\n", rep.Branches, complete)
	fmt.Fprintf(w, "runs %d, events %d (%d simulated), forks %d, wall time %.3f s\n", rep.Runs, rep.Events, rep.EventsSimulated, rep.Forks, rep.WallSeconds)
	if rep.Snapshot != "" {
		fmt.Fprintf(w, "snapshot %s\n", rep.Snapshot)
	}
	if rep.Concretized > 0 {
		fmt.Fprintf(w, "note: %d classes took an RTT-dependent timer offset at its witness value: they may be approximations\n", rep.Concretized)
		if rep.PaceConcretized > 0 {
			fmt.Fprintf(w, "note: %d of them took a pacing gap whose rate follows a sample that varies with the delays\n", rep.PaceConcretized)
		}
	}
	if rep.Diverged > 0 {
		fmt.Fprintf(w, "WARNING: %d classes diverged (a timer depends on a window delay): their classes are approximations\n", rep.Diverged)
	}
	if len(r.Conditions) == 0 {
		fmt.Fprintln(w, "conditions   none (the seed has no finding)")
	}
	for _, c := range r.Conditions {
		fmt.Fprintf(w, "condition %s: %d of %d classes hit", c.Condition, c.Classes, rep.Branches)
		if c.Classes > 0 {
			fmt.Fprintf(w, "; extra delay min %s max %s ms", fmtMS(c.MinMS), fmtMS(c.MaxMS))
		}
		fmt.Fprintf(w, "; %d witness seeds", c.Seeds)
		if c.Unwritten > 0 {
			fmt.Fprintf(w, " (%d more classes hit: --max-seeds)", c.Unwritten)
		}
		if c.Mismatch > 0 {
			fmt.Fprintf(w, "; %d witnesses did not hit on replay", c.Mismatch)
		}
		fmt.Fprintln(w)
	}
}

func fmtMS(v []float64) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprintf("d%d=%g", i+1, x)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

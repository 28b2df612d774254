package act

import (
	"context"
	"crypto/sha256"
	"fmt"
	"github.com/actfuzz/actfuzz/coverage"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/corpus"
)

// symCampaign is smallCampaign with the symbolic step on.
func symCampaign(t *testing.T) *Campaign {
	t.Helper()
	src := string(smallCampaign(t).Source) + "symbolic: {n: 2, range_ms: [1, 50], every: 64, max_branches: 6}\n"
	c, err := ParseCampaign("c.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// symOutcome is what must not depend on workers or resumes.
type symOutcome struct {
	regions  []uint64
	steps    map[Step]int
	found    []uint64
	stats    SymbolicStats
	findings []string
}

func outcomeOf(c *Campaign, rep *Report) symOutcome {
	o := symOutcome{steps: rep.StepSims, found: rep.StepRegions[StepSymbolic]}
	for _, k := range c.Space.Ks() {
		o.regions = append(o.regions, rep.Store.VisitedRegions(k))
	}
	if rep.Symbolic != nil {
		o.stats = *rep.Symbolic
	}
	for _, g := range rep.Findings {
		o.findings = append(o.findings, g.key+" "+g.Step.String())
	}
	return o
}

func (o symOutcome) equal(p symOutcome) bool {
	return slices.Equal(o.regions, p.regions) && maps.Equal(o.steps, p.steps) && slices.Equal(o.found, p.found) &&
		o.stats == p.stats && slices.Equal(o.findings, p.findings)
}

// With the symbolic step on, a campaign's regions, findings, charges and
// step counts are the same at 1 and 2 workers and after a resume; the
// step's regions are part of the coverage accounting (every region is
// counted under the step that found it first), and the budget is spent in
// simulations plus simulation-equivalents.
func TestSymbolicDeterministic(t *testing.T) {
	if testing.Short() {
		t.Skip("runs five small campaigns")
	}
	c := symCampaign(t)
	const budget = 384
	var outs []symOutcome
	var reps []*Report
	for _, w := range []int{1, 2} {
		rep, err := Run(context.Background(), c, Options{Budget: budget, Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		outs, reps = append(outs, outcomeOf(c, rep)), append(reps, rep)
	}
	if !outs[0].equal(outs[1]) {
		t.Fatalf("1 vs 2 workers differ:\n%+v\n%+v", outs[0], outs[1])
	}
	rep := reps[0]
	st := rep.Symbolic
	if st == nil || st.Windows == 0 || st.Branches == 0 || st.Charged == 0 {
		t.Fatalf("the symbolic step did not run: %+v", st)
	}
	if rep.StepSims[StepSymbolic] != st.Charged {
		t.Fatalf("step symbolic counts %d sims, charged %d", rep.StepSims[StepSymbolic], st.Charged)
	}
	if rep.Sims+st.Charged < budget || rep.Sims+st.Charged > budget+c.Symbolic.MaxBranches+2 {
		t.Fatalf("%d sims + %d sim-equivalents for a budget of %d", rep.Sims, st.Charged, budget)
	}
	ks := c.Space.Ks()
	for l, k := range ks {
		var sum uint64
		for _, found := range rep.StepRegions {
			sum += found[l]
		}
		if got := rep.Store.VisitedRegions(k); sum != got {
			t.Fatalf("k=%d: the steps found %d regions, the store has %d", k, sum, got)
		}
	}
	if found := rep.StepRegions[StepSymbolic]; found == nil || found[0] == 0 {
		t.Fatalf("no region at k=1 is counted to the symbolic step: %v", found)
	}
	if st.Capped == 0 {
		t.Fatalf("max_branches 6 should cap some window: %+v", st)
	}

	// Resume: a campaign cut part-way ends as the uninterrupted one.
	whole := t.TempDir()
	full, err := Run(context.Background(), c, Options{Budget: budget, Out: whole, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if o := outcomeOf(c, full); !o.equal(outs[0]) {
		t.Fatalf("with --out the campaign differs:\n%+v\n%+v", o, outs[0])
	}
	cut := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	_, err = Run(ctx, c, Options{Budget: budget, Out: cut, Workers: 2, CheckpointEvery: 1,
		Progress: func(st Status) {
			if st.Sims >= 192 {
				cancel()
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	resumed, err := Run(context.Background(), c, Options{Budget: budget, Out: cut, Workers: 1, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if o := outcomeOf(c, resumed); !o.equal(outs[0]) {
		t.Fatalf("resumed differs:\n%+v\n%+v", o, outs[0])
	}

	// Interrupted inside a window: the window stays pending in the
	// checkpoint, uncommitted, and the resume runs it first.
	cut = t.TempDir()
	ctx, cancel = context.WithCancel(context.Background())
	branches := 0
	part, err := Run(ctx, c, Options{Budget: budget, Out: cut, Workers: 2, CheckpointEvery: 1,
		onSymBranch: func(*coverage.Batch) {
			if branches++; branches == st.Branches/2 {
				cancel()
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if part.Symbolic.Branches >= st.Branches/2 {
		t.Fatalf("the cut campaign committed %d branches, the cut came at %d", part.Symbolic.Branches, st.Branches/2)
	}
	resumed, err = Run(context.Background(), c, Options{Budget: budget, Out: cut, Workers: 1, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if o := outcomeOf(c, resumed); !o.equal(outs[0]) {
		t.Fatalf("resumed after a cut inside a window differs:\n%+v\n%+v", o, outs[0])
	}
	t.Logf("%d sims + %d sim-equivalents; symbolic: %v; regions %v", rep.Sims, st.Charged, st, outs[0].regions)
}

// The use case: on a path without loss or random delay no simulation ever
// leaves ca_state open, so the concrete runs miss the condition; the
// symbolic window reorders two segments, the receiver's duplicate ACKs put
// the sender in disorder, and the finding's seed pins those delays and
// replays. (max_branches 64: with tcp_cwnd_validate as Linux has it since
// 6.1 the first reordering class of the window is its 54th.)
func TestSymbolicFindsWhatConcreteRunsMiss(t *testing.T) {
	src := `
ccai: [reno]
bytes: 150000
params:
  loss: {min: 0, max: 0, step: 1}
  bw: {min: 10, max: 10, step: 1}
  delay: {min: 20, max: 20, step: 1}
  qshape: {min: 0, max: 0, step: 1}
  qscale: {min: 0, max: 0, step: 1}
  app: {min: 1000, max: 1000, step: 1}
  buffer: {min: 1000, max: 1000, step: 1}
# Without loss ssthresh stays infinite, outside any range: S leaves it out.
state:
  cwnd: {min: 1, max: 1024, step: 1}
  srtt: {min: 0, max: 2048, step: 4}
  ca_state: {values: [open, disorder, cwr, recovery, loss]}
conditions:
  - {name: reordered, when: 'ca_state == "disorder"'}
directed: off
symbolic: {n: 2, range_ms: [1, 60], every: 1, max_branches: 64}
`
	c, err := ParseCampaign("c.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	rep, err := Run(context.Background(), c, Options{Budget: 128, Workers: 2, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	var sym *FindingGroup
	for _, g := range rep.Findings {
		if g.Step != StepSymbolic {
			t.Fatalf("a concrete run (step %v) hit: %+v", g.Step, g.Seed.Finding)
		}
		sym = g
	}
	if sym == nil {
		t.Fatalf("no finding; symbolic step: %v", rep.Symbolic)
	}
	s, err := corpus.ReadSeed(sym.Path)
	if err != nil {
		t.Fatal(err)
	}
	if s.Pinned == nil || len(s.Pinned.DelaysMS) != 2 {
		t.Fatalf("the seed pins no window: %+v", s.Pinned)
	}
	if !strings.Contains(filepath.Base(sym.Path), "-sym-b") {
		t.Fatalf("seed file %s", sym.Path)
	}
	r, err := corpus.Replay(context.Background(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Reproduced {
		t.Fatalf("the seed does not replay: %v", r.Diff)
	}
	pinned := s.Pinned
	// Without the pinned window the same configuration does not hit.
	s.Pinned = nil
	r, err = corpus.Replay(context.Background(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Reproduced {
		t.Fatal("the configuration hits without the window: the use case proves nothing")
	}
	if _, err := os.Stat(filepath.Join(out, "findings.md")); err != nil {
		t.Fatal(err)
	}
	t.Logf("found by the symbolic step: %s (delays %v ms); %v", filepath.Base(sym.Path), pinned.DelaysMS, rep.Symbolic)
}

// Every key of symbolic: is validated and a bad value names its field; the
// step is off without the key and on with its defaults for symbolic: {}.
// Branches restored from a snapshot of the window's start record what
// branches run from time zero record: the same states (prefix included),
// branch by branch, through the first window (later windows may differ,
// as the step is charged what it simulated).
func TestSymbolicSnapshotAgrees(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two small campaigns")
	}
	c := symCampaign(t)
	const budget = 384
	digests := func(noSnapshot bool) []string {
		var out []string
		_, err := Run(context.Background(), c, Options{Budget: budget, Workers: 2, symNoSnapshot: noSnapshot,
			onSymWindow: func(bs []*coverage.Batch) {
				for _, b := range bs {
					raw, err := b.MarshalBinary()
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, fmt.Sprintf("%d states %x", b.Len(), sha256.Sum256(raw)))
				}
			}})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	from0, snap := digests(true), digests(false)
	n := min(len(from0), len(snap), c.Symbolic.MaxBranches)
	if n == 0 {
		t.Fatal("no symbolic branch ran")
	}
	for i := range n {
		if from0[i] != snap[i] {
			t.Fatalf("branch %d: from time zero %s, from the snapshot %s", i, from0[i], snap[i])
		}
	}
	t.Logf("%d branches agree", n)
}

func TestSymbolicKeys(t *testing.T) {
	parse := func(sym string) (*Campaign, error) {
		return ParseCampaign("c.yaml", []byte("ccai: [reno]\n"+sym))
	}
	c, err := parse("")
	if err != nil || c.Symbolic != nil {
		t.Fatalf("without the key: %v, %+v", err, c.Symbolic)
	}
	c, err = parse("symbolic: {}\n")
	if err != nil || c.Symbolic == nil || c.Symbolic.N != DefaultSymN || c.Symbolic.Every != DefaultSymEvery ||
		c.Symbolic.MaxBranches != DefaultSymMaxBranches || c.Symbolic.Hi != 200*time.Millisecond || !c.Symbolic.Reductions.I {
		t.Fatalf("symbolic: {}: %v, %+v", err, c.Symbolic)
	}
	for _, tc := range []struct{ sym, field string }{
		{"{n: 0}", "symbolic.n"},
		{"{n: 9}", "symbolic.n"},
		{"{range_ms: [5, 1]}", "symbolic.range_ms"},
		{"{range_ms: [1]}", "symbolic.range_ms"},
		{"{range_ms: [-1, 3]}", "symbolic.range_ms"},
		{"{range_ms: [1.5, 3]}", "symbolic.range_ms"},
		{"{res_ms: 0}", "symbolic.res_ms"},
		{"{every: 0}", "symbolic.every"},
		{"{max_branches: 0}", "symbolic.max_branches"},
		{"{reductions: XYZ}", "symbolic.reductions"},
		{"{reductions: SH}", "symbolic.reductions"},
		{"{windows: 3}", "windows"},
	} {
		_, err := parse("symbolic: " + tc.sym + "\n")
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("symbolic: %s: %v, want an error naming %s", tc.sym, err, tc.field)
		}
	}
	c, err = parse("symbolic: {n: 3, range_ms: [2, 100], res_ms: 2, every: 10, max_branches: 5, reductions: none}\n")
	if err != nil {
		t.Fatal(err)
	}
	if sp := c.Symbolic; sp.N != 3 || sp.Lo != 2*time.Millisecond || sp.Res != 2*time.Millisecond || sp.Every != 10 || sp.MaxBranches != 5 || sp.Reductions.I {
		t.Fatalf("%+v", sp)
	}
}

// A window that finishes no simulation within the watchdog is abandoned:
// the campaign goes on without the symbolic step, with a hang fault of the
// trigger's configuration that names the window. The abandoned goroutine
// here finishes on its own and must then touch nothing (the race
// detector checks); a CCAI spinning for ever would keep it running.
func TestSymbolicWatchdog(t *testing.T) {
	c := symCampaign(t)
	const budget = 256
	out := t.TempDir()
	// Each branch's hook sleeps, so that the window cannot finish before
	// the watchdog's select runs, however late the machine's load makes
	// it: without it, a loaded machine (CI beside a cluster bench) once
	// finished a window of 6 branches first, and the select, finding
	// both the result and the timer ready, took the result.
	slow := func(*coverage.Batch) { time.Sleep(200 * time.Millisecond) }
	rep, err := Run(context.Background(), c, Options{Budget: budget, Workers: 2, Out: out, IsolateOptions: IsolateOptions{Watchdog: time.Microsecond},
		onSymBranch: slow})
	if err != nil {
		t.Fatal(err)
	}
	st := rep.Symbolic
	if st == nil || st.Hangs != 1 || st.Windows != 0 || st.Branches != 0 || st.Charged != 0 {
		t.Fatalf("want one hung window and no other: %+v", st)
	}
	if rep.Sims != budget {
		t.Fatalf("%d sims of a budget of %d", rep.Sims, budget)
	}
	i := slices.IndexFunc(rep.Findings, func(g *FindingGroup) bool { return g.key == "fault|hang|symbolic" })
	if i < 0 {
		t.Fatalf("no hang finding among %d groups", len(rep.Findings))
	}
	f := rep.Findings[i].Seed.Finding
	if f.Kind != corpus.FaultHang || f.TimeNS <= 0 || !strings.Contains(f.Detail, "watchdog") || rep.Findings[i].Step != StepSymbolic {
		t.Fatalf("finding %+v (step %v)", f, rep.Findings[i].Step)
	}
	if !strings.Contains(st.String(), "abandoned by the watchdog") {
		t.Fatalf("the step's summary does not say so: %s", st)
	}
	// The seed carries the window, which an ordinary replay of the
	// configuration would not explore.
	seed := rep.Findings[i].Seed
	w := seed.SymWindow
	if w == nil || w.Window != "last 2 before hit" || w.AtNS != f.TimeNS || w.Flow != nil || w.LoMS != 1 || w.HiMS != 50 || w.ResMS != 1 ||
		w.Reductions != "SCI" || w.MaxBranches != 6 || w.WatchdogNS != int64(time.Microsecond) {
		t.Fatalf("symbolic_window %+v", w)
	}
	path := filepath.Join(t.TempDir(), "hang.json")
	if err := seed.Write(path); err != nil {
		t.Fatal(err)
	}
	read, err := corpus.ReadSeed(path)
	if err != nil {
		t.Fatal(err)
	}
	// Replayed under the campaign's watchdog, the window hangs again;
	// under a watchdog it cannot reach, it finishes and says what it ran.
	for _, tc := range []struct {
		watchdog time.Duration
		hung     bool
	}{
		{0, true}, // the seed's: 1 µs
		{time.Hour, false},
	} {
		r, err := ReplaySymbolicWindow(context.Background(), read, tc.watchdog)
		if err != nil {
			t.Fatalf("watchdog %v: %v", tc.watchdog, err)
		}
		if r.Hung != tc.hung {
			t.Fatalf("watchdog %v: hung %v, want %v (%+v)", tc.watchdog, r.Hung, tc.hung, r)
		}
		if !tc.hung && (r.Branches == 0 || r.N != 2 || r.Kind != "data" || r.Events == 0) {
			t.Fatalf("watchdog %v: %+v", tc.watchdog, r)
		}
		if tc.hung && r.Watchdog != time.Microsecond {
			t.Fatalf("watchdog %v: replayed under %v, want the seed's 1µs", tc.watchdog, r.Watchdog)
		}
	}
	// A seed without the window is refused.
	bare := *read
	bare.SymWindow = nil
	if _, err := ReplaySymbolicWindow(context.Background(), &bare, time.Hour); err == nil || !strings.Contains(err.Error(), "symbolic_window") {
		t.Fatalf("a seed without symbolic_window: %v", err)
	}
}

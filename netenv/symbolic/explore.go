package symbolic

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"time"
)

// Options control an exploration.
type Options struct {
	Reductions Reductions
	// MaxBranches stops the exploration after this many branches; the
	// report is then incomplete (0: DefaultMaxBranches).
	MaxBranches int
	// KeepBranches is how many branches keep their details in the report
	// (0: DefaultKeepBranches; negative: none).
	KeepBranches int
	// Verify re-runs up to this many further integer points of every
	// branch (extreme points of its class) concretely and checks that they
	// give the branch's outcome; a mismatch marks the branch unsound (0: no
	// verification).
	Verify int
	// NodeGranularity makes I decompose the simulation into topology
	// nodes, as SEIB's ns-3 does, instead of state components.
	NodeGranularity bool
	// TimeLimit stops the exploration after this much wall time (0: no
	// limit); the report is then incomplete. It only bounds the search:
	// nothing in a simulation reads the clock.
	TimeLimit time.Duration
	// Progress, when set, is called after every 1024 branches.
	Progress func(branches int)
	// OnBranch, when set, sees every branch as it is found, with its
	// constraints, metrics and, when conditions hold in it, RangesMS; an
	// error stops the exploration.
	OnBranch func(b *Branch) error
	// NoSnapshot runs every branch from time zero instead of from a
	// snapshot at the window's start (prefix.go).
	NoSnapshot bool

	hashTrace bool // tests: every run computes its trace hash (Branch.hash)
}

// Defaults.
const (
	DefaultMaxBranches  = 2_000_000
	DefaultKeepBranches = 20_000
)

// Var describes one uncertain delay.
type Var struct {
	Name  string  `json:"name"`
	LoMS  float64 `json:"lo_ms"`
	HiMS  float64 `json:"hi_ms"`
	ResMS float64 `json:"resolution_ms"`
}

// Metric is a named value of an outcome.
type Metric struct {
	Name  string `json:"name"`
	Value int64  `json:"value"`
}

// Branch is one equivalence class of delay vectors: every vector that
// satisfies Constraints makes the simulator execute the same event order and
// reach Outcome. Witness is one such vector (ms).
type Branch struct {
	ID          int       `json:"id"`
	Constraints []string  `json:"constraints"`
	Witness     []float64 `json:"witness_ms"`
	Outcome     string    `json:"outcome"`
	Metrics     []Metric  `json:"metrics"`
	Conditions  []string  `json:"conditions,omitempty"`
	Events      uint64    `json:"events"`
	// Diverged: re-executing this branch did not follow the decisions of
	// the branch it was forked from, which means a handler computed a
	// delay from the uncertain delays (the linear model does not hold).
	Diverged bool `json:"diverged,omitempty"`
	// Concretized: the run took a timer offset that may depend on the
	// delays (an RTO from an RTT sample the linear forms could not
	// follow, rtt.go; a pacing gap from a rate that follows the delays,
	// abstime.go) at its witness value, so the class may be an
	// approximation even when no child diverged.
	Concretized bool `json:"concretized,omitempty"`
	// RangesMS is, per uncertain delay, its least and greatest value (ms)
	// over the class (Options.OnBranch, branches where conditions hold).
	RangesMS [][2]float64 `json:"ranges_ms,omitempty"`
	// Unsound: verification found a vector of the class with another
	// outcome.
	Unsound bool `json:"unsound,omitempty"`

	cons []lincon
	w    [MaxVars]int64
	hash string // trace SHA-256 (Options.hashTrace)
	// paceOnly: concretized only for a pacing gap (abstime.go).
	paceOnly bool
}

// Extreme is the worst and best value of a metric over all branches, each
// with a witness.
type Extreme struct {
	Metric     string    `json:"metric"`
	Min        int64     `json:"min"`
	MinBranch  int       `json:"min_branch"`
	MinWitness []float64 `json:"min_witness_ms"`
	Max        int64     `json:"max"`
	MaxBranch  int       `json:"max_branch"`
	MaxWitness []float64 `json:"max_witness_ms"`
}

// Report is the result of an exploration.
type Report struct {
	Scenario   string `json:"scenario"`
	Reductions string `json:"reductions"`
	Vars       []Var  `json:"vars"`
	// Branches is the number of equivalence classes (runs of the
	// exploration).
	Branches int `json:"branches"`
	// Complete is false when the exploration stopped early (MaxBranches
	// or cancellation): the branches then do not cover the space.
	Complete bool `json:"complete"`
	// Comparisons counts the timestamp comparisons whose two timestamps
	// differ by a non-constant expression (the comparisons that may fork),
	// once per node of the execution tree.
	Comparisons uint64 `json:"comparisons"`
	// Overlapping counts those of them whose timestamp intervals overlap
	// under the path's variable bounds (SEIB's "comparisons of overlapping
	// timestamps"): the exact solver decides them.
	Overlapping uint64 `json:"overlapping"`
	// AllComparisons counts every Before over every run.
	AllComparisons uint64 `json:"all_comparisons"`
	// Forks is the number of comparisons where both outcomes were feasible.
	Forks        uint64 `json:"forks"`
	SolverCalls  uint64 `json:"solver_calls"`
	SolverGaveUp uint64 `json:"solver_gave_up"`
	Runs         int    `json:"runs"`
	Events       uint64 `json:"events"`
	// EventsSimulated is the part of Events the exploration executed:
	// runs that start from the snapshot at the window's start do not
	// execute the prefix (Snapshot).
	EventsSimulated uint64 `json:"events_simulated"`
	// Snapshot says where the prefix snapshot was taken and its size, or
	// why every run started from time zero ("off: …").
	Snapshot string `json:"snapshot,omitempty"`
	Diverged int    `json:"diverged"`
	// Concretized counts the branches whose run concretized a timer
	// offset that may depend on the delays (Branch.Concretized).
	Concretized int `json:"concretized"`
	// PaceConcretized counts those of them whose run took a pacing gap
	// at its witness value because the pacing rate may depend on the
	// delays (a delivery-rate or RTT sample that varies over the class,
	// abstime.go).
	PaceConcretized int `json:"pace_concretized,omitempty"`
	// Merged counts the runs that state hashing (H) stopped at a state an
	// earlier run had reached; they are not branches.
	Merged       int     `json:"merged,omitempty"`
	StatesStored int     `json:"states_stored,omitempty"`
	Unsound      int     `json:"unsound"`
	WallSeconds  float64 `json:"wall_s"`
	PeakHeapMB   float64 `json:"peak_heap_mb"`
	// rttMismatch counts RTT forms whose witness value disagreed with
	// the sender's (rtt.go; a bug: the tests want 0).
	rttMismatch uint64
	// Outcomes is the sorted list of distinct outcomes.
	Outcomes []string  `json:"outcomes"`
	Extremes []Extreme `json:"extremes"`
	// BranchList holds the first KeepBranches branches.
	BranchList []Branch `json:"branch_list,omitempty"`
	Truncated  bool     `json:"branch_list_truncated,omitempty"`
	// MergedList holds the first KeepBranches merged runs (H): the region
	// each covered when it reached an earlier state (no outcome of its
	// own: its vectors have the outcomes of the classes below that state).
	MergedList []Branch `json:"merged_list,omitempty"`

	// Witnesses, per distinct outcome, of the first branch that reached
	// it (index into Outcomes), and that branch.
	OutcomeWitness [][]float64 `json:"outcome_witness_ms"`
	OutcomeBranch  []int       `json:"outcome_branch"`

	n       int
	notable map[int]*notableBranch // outcome firsts and extremes, by ID
}

// notableBranch is what Witnesses needs of a branch that is not kept.
type notableBranch struct {
	witness []float64
	cons    []lincon
	outcome string
}

// WitnessRef is a branch whose witness deserves a seed.
type WitnessRef struct {
	Branch      int
	DelaysMS    []float64
	Constraints []string
	Outcome     string
	// Why: "outcome K" (the first branch of Outcomes[K]), "min METRIC",
	// "max METRIC", or "branch" (every kept branch).
	Why []string
}

// Witnesses lists the branches whose witnesses seeds are written for: the
// first branch of every distinct outcome and the branches holding the worst
// and best value of every metric, in branch order; with every, also every
// kept branch (BranchList).
func (r *Report) Witnesses(every bool) []WitnessRef {
	why := map[int][]string{}
	for k, id := range r.OutcomeBranch {
		why[id] = append(why[id], fmt.Sprintf("outcome %d", k))
	}
	for _, e := range r.Extremes {
		why[e.MinBranch] = append(why[e.MinBranch], "min "+e.Metric)
		why[e.MaxBranch] = append(why[e.MaxBranch], "max "+e.Metric)
	}
	if every {
		for _, b := range r.BranchList {
			if _, ok := why[b.ID]; !ok {
				why[b.ID] = []string{"branch"}
			}
		}
	}
	var out []WitnessRef
	for id, ws := range why {
		ref := WitnessRef{Branch: id, Why: slices.Compact(ws)}
		if nb, ok := r.notable[id]; ok {
			ref.DelaysMS, ref.Constraints, ref.Outcome = nb.witness, formatCons(nb.cons, r.n), nb.outcome
		} else if i, ok := slices.BinarySearchFunc(r.BranchList, id, func(b Branch, id int) int { return b.ID - id }); ok {
			b := &r.BranchList[i]
			ref.DelaysMS, ref.Constraints, ref.Outcome = b.Witness, b.Constraints, b.Outcome
		} else {
			continue
		}
		out = append(out, ref)
	}
	slices.SortFunc(out, func(a, b WitnessRef) int { return a.Branch - b.Branch })
	return out
}

// explorer holds one exploration.
type explorer struct {
	c      *compiled
	opt    Options
	n      int
	res    int64 // R
	unit   int64 // u = R/D (path.go)
	lo, hi [MaxVars]int64
	vt     *vecTable
	solver solver
	stack  []*job
	forks  uint64
	sch    *sched                 // reused from run to run
	seen   map[[2]uint64]struct{} // states reached (H)
	pre    prefixSnap
	// simulated counts the events executed (Report.EventsSimulated).
	simulated uint64
}

func (x *explorer) push(j *job) { x.stack = append(x.stack, j) }

// Explore enumerates the equivalence classes of delay vectors of a scenario
// by concolic re-execution: every run executes the normal simulator on a
// concrete witness vector with the symbolic scheduler, which forks (pushes
// the other decision with a witness for it) at every comparison whose other
// outcome is feasible under the path condition.
func Explore(ctx context.Context, sc *Scenario, opt Options) (*Report, error) {
	c, err := sc.compile()
	if err != nil {
		return nil, err
	}
	return explore(ctx, c, opt)
}

func newExplorer(c *compiled, opt Options) *explorer {
	scale := int64(1)
	if c.sc.TCP != nil {
		scale = unitScale(c.res) // rtt.go's divisions need it
	}
	x := &explorer{c: c, opt: opt, n: c.n, res: c.res, unit: c.res / scale, lo: c.lo, hi: c.hi, vt: newVecTable(int32(scale))}
	return x
}

func (x *explorer) msVec(w *[MaxVars]int64) []float64 {
	out := make([]float64, x.n)
	for i := range out {
		out[i] = float64(w[i]*x.res) / 1e6
	}
	return out
}

// runOne executes one job: a concolic run (fixed=false) or a concrete run at
// the witness (fixed=true).
func (x *explorer) runOne(ctx context.Context, j *job, fixed bool) (*path, *outcome, *sched, error) {
	p := x.newPath(j, fixed)
	lay := &x.c.layout
	if x.opt.NodeGranularity {
		lay = &x.c.nodeLayout
	}
	s := x.sch
	if s == nil || s.lay != lay {
		s = newSched(p, x.opt.Reductions, x.vt, lay)
		x.sch = s
	}
	if err := x.prepare(ctx, s, p); err != nil {
		return nil, nil, nil, err
	}
	var r *scRun
	if x.pre.snap != nil {
		r = x.restore(p)
	} else {
		s.reset(p)
		var err error
		if r, err = x.c.start(s, &p.w, nil, x.opt.hashTrace); err != nil {
			return nil, nil, nil, err
		}
	}
	before := r.events()
	o, err := r.finish(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	x.simulated += o.events - before
	if !x.pre.known {
		x.pre.known = true
		if s.sawUncertain {
			x.pre.at = s.prefix
		}
	}
	p.finishPrefix()
	return p, o, s, nil
}

func explore(ctx context.Context, c *compiled, opt Options) (*Report, error) {
	start := time.Now()
	if opt.MaxBranches <= 0 {
		opt.MaxBranches = DefaultMaxBranches
	}
	keep := opt.KeepBranches
	if keep == 0 {
		keep = DefaultKeepBranches
	}
	if opt.Reductions.H {
		switch {
		case opt.Reductions.I:
			return nil, errors.New("reductions: H (state hashing) does not combine with I: under I ties are broken by event histories the hash does not see")
		case c.sc.Topology == nil:
			return nil, errors.New("reductions: H (state hashing) needs a topology (UDP) scenario; TCP endpoints do not expose their state")
		}
	}
	x := newExplorer(c, opt)
	if opt.Reductions.H {
		x.seen = map[[2]uint64]struct{}{}
	}
	rep := &Report{Scenario: c.sc.Name, Reductions: opt.Reductions.String(), Complete: true, n: c.n, notable: map[int]*notableBranch{}}
	resMS := float64(c.res) / 1e6
	for i := 0; i < c.n; i++ {
		rep.Vars = append(rep.Vars, Var{Name: fmt.Sprintf("d%d", i+1), LoMS: float64(c.lo[i]) * resMS, HiMS: float64(c.hi[i]) * resMS, ResMS: resMS})
	}
	// The root runs at the centre of the box.
	var root job
	for i := 0; i < c.n; i++ {
		root.witness[i] = c.lo[i] + (c.hi[i]-c.lo[i])/2
	}
	x.push(&root)
	tally := newOutcomeTally(len(c.metrics))
	var peak uint64
	sample := func() {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapAlloc)
	}
	var runErr error
	for len(x.stack) > 0 {
		if err := ctx.Err(); err != nil {
			rep.Complete = false
			runErr = err
			break
		}
		if rep.Branches >= opt.MaxBranches {
			rep.Complete = false
			break
		}
		if opt.TimeLimit > 0 && rep.Branches%64 == 0 && time.Since(start) > opt.TimeLimit {
			rep.Complete = false
			break
		}
		j := x.stack[len(x.stack)-1]
		x.stack[len(x.stack)-1] = nil
		x.stack = x.stack[:len(x.stack)-1]
		p, o, s, err := x.runOne(ctx, j, false)
		if err != nil {
			rep.Complete = false
			runErr = err
			break
		}
		rep.Runs++
		rep.Comparisons += p.symCmp
		rep.Overlapping += p.overlap
		rep.AllComparisons += s.cmps
		rep.rttMismatch += s.rttMismatch
		rep.Events += o.events
		if p.merged {
			rep.Merged++
			if keep > 0 && len(rep.MergedList) < keep {
				rep.MergedList = append(rep.MergedList, Branch{ID: rep.Merged - 1, Witness: x.msVec(&p.w), cons: p.pc, w: p.w, Constraints: formatCons(p.pc, c.n)})
			}
			continue
		}
		id := rep.Branches
		rep.Branches++
		key := c.key(o)
		w := x.msVec(&p.w)
		if tally.note(id, key, w, o.values) {
			rep.notable[id] = &notableBranch{witness: w, cons: slices.Clone(p.pc), outcome: key}
		}
		b := Branch{ID: id, Outcome: key, Witness: w, Conditions: o.hits, Events: o.events, Diverged: p.diverged, Concretized: p.concretized || p.paceConcretized, cons: p.pc, w: p.w, hash: o.hash, paceOnly: p.paceConcretized && !p.concretized}
		if p.diverged {
			rep.Diverged++
		}
		if b.Concretized {
			rep.Concretized++
		}
		if p.paceConcretized {
			rep.PaceConcretized++
		}
		if opt.Verify > 0 {
			bad, err := x.verify(ctx, &b, p, key)
			if err != nil {
				rep.Complete = false
				runErr = err
				break
			}
			rep.Runs += bad.runs
			if bad.unsound {
				b.Unsound = true
				rep.Unsound++
			}
		}
		if opt.OnBranch != nil {
			ob := b
			ob.Constraints = formatCons(b.cons, c.n)
			ob.Metrics = branchMetrics(c, o.values)
			if len(o.hits) > 0 {
				ob.RangesMS = x.rangesMS(p.pc)
			}
			if err := opt.OnBranch(&ob); err != nil {
				rep.Complete = false
				runErr = err
				break
			}
		}
		if keep > 0 && len(rep.BranchList) < keep {
			b.Metrics = branchMetrics(c, o.values)
			b.Constraints = formatCons(b.cons, c.n)
			rep.BranchList = append(rep.BranchList, b)
		} else if keep > 0 {
			rep.Truncated = true
		}
		if rep.Branches%256 == 0 {
			sample()
		}
		if opt.Progress != nil && rep.Branches%1024 == 0 {
			opt.Progress(rep.Branches)
		}
	}
	sample()
	tally.finish(rep, c)
	x.finishReport(rep, start, peak)
	return rep, runErr
}

// formatCons renders a path condition without duplicate constraints.
func formatCons(cons []lincon, n int) []string {
	out := []string{}
	for _, c := range dedup(cons) {
		out = append(out, c.format(n))
	}
	return out
}

type verdict struct {
	runs    int
	unsound bool
}

// verify re-runs extreme points of a branch's class concretely: for each
// variable its minimum and maximum over the class (with the others at an
// integer point of the class), up to opt.Verify points.
func (x *explorer) verify(ctx context.Context, b *Branch, p *path, key string) (verdict, error) {
	var v verdict
	var pts [][MaxVars]int64
	seen := map[[MaxVars]int64]bool{p.w: true}
	bx := box{lo: x.lo, hi: x.hi}
	for i := 0; i < x.n && len(pts) < x.opt.Verify; i++ {
		for _, hiSide := range []bool{false, true} {
			lo, hi, ok := x.rangeOf(p.pc, &bx, i)
			if !ok {
				continue
			}
			val := lo
			if hiSide {
				val = hi
			}
			var fix lincon
			fix.a[i], fix.b = 1, val
			var fix2 lincon
			fix2.a[i], fix2.b = -1, -val
			cons := append(slices.Clone(p.pc), fix, fix2)
			w, ok := x.solver.point(x.n, &bx, cons)
			if ok && !seen[w] && len(pts) < x.opt.Verify {
				seen[w] = true
				pts = append(pts, w)
			}
		}
	}
	for _, w := range pts {
		_, o, _, err := x.runOne(ctx, &job{witness: w}, true)
		if err != nil {
			return v, err
		}
		v.runs++
		if x.c.key(o) != key {
			v.unsound = true
		}
	}
	return v, nil
}

// rangesMS is every variable's range (ms) over a class.
func (x *explorer) rangesMS(cons []lincon) [][2]float64 {
	bx := box{lo: x.lo, hi: x.hi}
	out := make([][2]float64, x.n)
	for i := range out {
		lo, hi, ok := x.rangeOf(cons, &bx, i)
		if !ok {
			lo, hi = x.lo[i], x.hi[i]
		}
		out[i] = [2]float64{float64(lo*x.res) / 1e6, float64(hi*x.res) / 1e6}
	}
	return out
}

// rangeOf is the integer range of x_i over the class (by projection).
func (x *explorer) rangeOf(cons []lincon, bx *box, i int) (lo, hi int64, ok bool) {
	sys := make([]lincon, 0, len(cons)+2*x.n)
	// Put variable i first so that project leaves it.
	swap := func(c lincon) lincon {
		c.a[0], c.a[i] = c.a[i], c.a[0]
		return c
	}
	for _, c := range cons {
		sys = append(sys, swap(c))
	}
	for k := 0; k < x.n; k++ {
		var up, dn lincon
		up.a[k], up.b = 1, bx.hi[k]
		dn.a[k], dn.b = -1, -bx.lo[k]
		sys = append(sys, swap(up), swap(dn))
	}
	return project(x.n, 0, sys)
}

// Replayed is one concrete run of a scenario at a witness.
type Replayed struct {
	// Outcome is in the form of Report.Outcomes.
	Outcome    string   `json:"outcome"`
	Metrics    []Metric `json:"metrics"`
	Conditions []string `json:"conditions,omitempty"`
	// TraceSHA256 hashes the run's state records (TCP) or deliveries
	// (topologies), as netenv's runs do.
	TraceSHA256 string `json:"trace_sha256"`
	Events      uint64 `json:"events"`
}

// Replay runs a scenario once on netenv's default scheduler (the binary
// heap that every other run uses) with the given delays (ms, one per
// uncertain packet): what replaying a witness does. tr may be nil.
func Replay(ctx context.Context, sc *Scenario, delaysMS []float64, tr *Tracing) (*Replayed, error) {
	c, err := sc.compile()
	if err != nil {
		return nil, err
	}
	w, err := c.units(delaysMS)
	if err != nil {
		return nil, err
	}
	if tr == nil {
		tr = &Tracing{}
	}
	o, err := c.simulate(ctx, nil, &w, tr)
	if err != nil {
		return nil, err
	}
	r := &Replayed{Outcome: c.key(o), Conditions: o.hits, TraceSHA256: o.hash, Events: o.events}
	for i, m := range c.metrics {
		r.Metrics = append(r.Metrics, Metric{Name: m.name, Value: o.values[i]})
	}
	return r, nil
}

// CheckDelays checks a delay vector (ms) against the scenario's window:
// one delay per uncertain packet, each a multiple of the resolution in
// range.
func (sc *Scenario) CheckDelays(delaysMS []float64) error {
	c, err := sc.compile()
	if err != nil {
		return err
	}
	_, err = c.units(delaysMS)
	return err
}

// units converts delays in ms to integer units of the resolution, checking
// the window.
func (c *compiled) units(delaysMS []float64) ([MaxVars]int64, error) {
	var w [MaxVars]int64
	if len(delaysMS) != c.n {
		return w, fmt.Errorf("witness: %d delays for %d uncertain packets", len(delaysMS), c.n)
	}
	for i, d := range delaysMS {
		ns := d * 1e6
		u := int64(ns) / c.res
		if float64(u*c.res) != ns || u < c.lo[i] || u > c.hi[i] {
			return w, fmt.Errorf("witness: d%d = %g ms is not a multiple of the resolution in [%g, %g] ms", i+1, d, float64(c.lo[i]*c.res)/1e6, float64(c.hi[i]*c.res)/1e6)
		}
		w[i] = u
	}
	return w, nil
}

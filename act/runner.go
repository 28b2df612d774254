package act

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/coverage"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
	"github.com/actfuzz/actfuzz/netenv/sim"
)

// newSource is the selector's PRNG source for a method; it is kept so
// that checkpoints can save its state.
func newSource(seed uint64, stream string) *rand.PCG {
	h := fnv.New64a()
	h.Write([]byte(stream))
	return rand.NewPCG(seed, h.Sum64())
}

// Outcome is what one run of a configuration produced. The states it
// visited are in the batch given to Runner.Run.
type Outcome struct {
	Result netenv.Result
	// Err is a configuration error or a cancelled context (not a fault).
	Err error
	// Hits holds the first hit of each condition, in order.
	Hits []Hit
	// Fault is a subject fault as a campaign records it ("panic", "hang",
	// "zero-cwnd", "nan", "event-cap"), a condition that failed to run
	// (corpus.FaultCondition), or nil.
	Fault *corpus.Finding
	// Capped: the run reached a time cap (not a fault).
	Capped bool
	// Mean is the mean state over every record, in the order of S (nil
	// when the run produced no record): ACT's profile of P → S̄.
	Mean []float64
	// Best and BestAt are, per condition of the campaign, the smallest
	// branch distance reached and when (+Inf and 0 for a condition without
	// one); nil unless the campaign is directed (see directed.go).
	Best   []float64
	BestAt []int64
}

// Finding reports whether the run found what a campaign records as a
// finding: a condition hit or a subject fault.
func (o *Outcome) Finding() bool { return len(o.Hits) > 0 || o.Fault != nil }

// String summarizes the findings of a run (for panics and test failures).
func (o *Outcome) String() string {
	s := ""
	for _, h := range o.Hits {
		s += fmt.Sprintf("condition %q (%s) held at %v on flow %d: %v; ", h.Condition, h.When, time.Duration(h.TimeNS), h.Flow, h.State)
	}
	if o.Fault != nil {
		s += fmt.Sprintf("subject fault %s at %v: %s %v; ", o.Fault.Kind, time.Duration(o.Fault.TimeNS), o.Fault.Detail, o.Fault.State)
	}
	if s == "" {
		return "no finding"
	}
	return s[:len(s)-2]
}

// Runner runs configurations of one campaign: the one run tail of every
// consumer (ACT's workers, in process or isolated, and the fuzz
// harnesses). Every state record is projected onto S into a coverage
// batch, the campaign's conditions are watched, and subject faults are
// recorded as findings. A Runner is not safe for concurrent use; give
// each goroutine its own.
type Runner struct {
	// The campaign, subject and space are read only during a run, so a
	// snapshot of a run (the symbolic step's) shares them.
	c     *Campaign      `snapshot:"shared"`
	subj  netenv.Subject `snapshot:"shared"`
	space coverage.Space `snapshot:"shared"`
	// Limits caps each run; zero fields take netenv's defaults, as in a
	// campaign. Reaching netenv's default event cap is a subject fault
	// ("event-cap"); reaching a cap set here is not.
	Limits sim.Limits
	// Extra, if set, sees every state record after the watcher.
	Extra observe.Observer

	watch   *corpus.Watcher
	proj    [][]int // per flow: observation index of each S variable
	state   []float64
	sum     []float64
	samples int
	last    [][]float64 // per flow: the state last given to the batch
	hasLast []bool
	seen    map[string]bool
	batch   *coverage.Batch
	out     *Outcome
	// The last observation of the run: a subject fault (a CCAI panic)
	// is dated by it, the last moment the run was seen sound.
	lastAt   time.Duration
	lastFlow int
	// Directed ACT: per flow, each condition's branch distance (nil for
	// one without), and the flow's previous observation.
	dists   [][]*corpus.Distance
	distEnv *netenv.Env // the environment the distances read p.X from
	prevObs [][]float64
	hasPrev []bool
}

// NewRunner prepares a runner of campaign c on subject subj (the native
// simulator when nil), projecting states onto space (c.Space when its
// Vars are empty).
func NewRunner(c *Campaign, subj netenv.Subject, space coverage.Space) (*Runner, error) {
	if subj == nil {
		subj = netenv.Native{}
	}
	if len(space.Vars) == 0 {
		space = c.Space
	}
	caps := subj.Capabilities()
	// Runners of one campaign start together (one per worker): each
	// checks it against its subject without writing it.
	oracles, _, err := c.checkSubject(caps)
	if err != nil {
		return nil, err
	}
	// Observations have the subject's schema: what it provides, by its
	// own names.
	w, err := corpus.NewWatcherFor(caps, c.CCAI, slices.Concat(c.Conditions, oracles))
	if err != nil {
		return nil, fmt.Errorf("conditions: %w", err)
	}
	r := &Runner{c: c, subj: subj, space: space, watch: w, state: make([]float64, len(space.Vars)), sum: make([]float64, len(space.Vars))}
	for _, sc := range w.Schemas {
		idx := make([]int, len(space.Vars))
		for i, v := range space.Vars {
			idx[i] = sc.Index(v.Name)
		}
		r.proj = append(r.proj, idx)
		r.last = append(r.last, make([]float64, len(space.Vars)))
	}
	r.hasLast = make([]bool, len(r.proj))
	if c.DirectedOn() {
		for _, sc := range w.Schemas {
			ds := make([]*corpus.Distance, len(c.Conditions))
			for ci, sp := range c.Conditions {
				if d, err := corpus.CompileDistance(sp, sc); err == nil {
					ds[ci] = d
				}
			}
			r.dists = append(r.dists, ds)
			r.prevObs = append(r.prevObs, make([]float64, len(sc)))
		}
		r.hasPrev = make([]bool, len(w.Schemas))
	}
	w.OnObservation = r.observe
	w.OnHit = r.hit
	return r, nil
}

// Campaign returns the runner's campaign.
func (r *Runner) Campaign() *Campaign { return r.c }

// Subject returns the subject the runner runs.
func (r *Runner) Subject() netenv.Subject { return r.subj }

// NetConfig is the run configuration of G under the campaign.
func (r *Runner) NetConfig(g Config) netenv.Config {
	cfg := r.c.Setup.Config(g.Seed, g.Schedule)
	cfg.Limits = r.Limits
	return cfg
}

func (r *Runner) observe(flow int, obs []float64, at time.Duration) {
	r.lastAt, r.lastFlow = at, flow
	for i, k := range r.proj[flow] {
		if k < 0 {
			r.state[i] = math.NaN()
		} else {
			r.state[i] = obs[k]
		}
		r.sum[i] += r.state[i]
	}
	r.samples++
	// Consecutive ACKs mostly leave S unchanged; the batch keeps first
	// visits only, so repeating the previous state adds nothing.
	if last := r.last[flow]; !r.hasLast[flow] || !sameState(last, r.state) {
		r.batch.Observe(r.state, int64(at))
		copy(last, r.state)
		r.hasLast[flow] = true
	}
	if r.dists != nil {
		r.distances(flow, obs, at)
	}
	if r.out.Fault != nil {
		return
	}
	if obs[0] == 0 {
		r.out.Fault = &corpus.Finding{Kind: "zero-cwnd", TimeNS: int64(at), Flow: flow, State: corpus.StateMap(r.watch.Schemas[flow], obs)}
		return
	}
	for _, v := range obs {
		if math.IsNaN(v) {
			r.out.Fault = &corpus.Finding{Kind: "nan", TimeNS: int64(at), Flow: flow, State: corpus.StateMap(r.watch.Schemas[flow], obs)}
			return
		}
	}
}

func (r *Runner) hit(flow int, c *corpus.Condition, obs []float64, at time.Duration) {
	if r.seen[c.Name] {
		return
	}
	r.seen[c.Name] = true
	r.out.Hits = append(r.out.Hits, Hit{Condition: c.Name, When: c.When, While: c.While, For: c.For, Flow: flow, TimeNS: int64(at),
		State: corpus.StateMap(r.watch.Schemas[flow], obs)})
}

type tee struct{ a, b observe.Observer }

func (t tee) Observe(rec *observe.Record) { t.a.Observe(rec); t.b.Observe(rec) }

// Run simulates g, adding the states it visits to batch (which it does
// not reset).
func (r *Runner) Run(ctx context.Context, g Config, batch *coverage.Batch) Outcome {
	var out Outcome
	r.begin(&out, batch, g.Schedule)
	defer func() { r.out, r.batch = nil, nil }()
	var obs observe.Observer = r.watch
	if r.Extra != nil {
		obs = tee{r.watch, r.Extra}
	}
	res, err := r.subj.Run(ctx, r.NetConfig(g), obs)
	out.Result = res
	var fault *netenv.Fault
	switch {
	case errors.As(err, &fault):
		// A subject fault replaces a zero-cwnd or NaN seen on the way
		// (the crash is what the user must see first).
		out.Fault = &corpus.Finding{Kind: fault.Kind, Detail: fault.Detail, TimeNS: int64(r.lastAt), Flow: r.lastFlow}
	case err != nil:
		out.Err = err
	case res.Capped && res.CapReason == "events" && r.Limits.MaxEvents == 0:
		if out.Fault == nil {
			out.Fault = &corpus.Finding{Kind: "event-cap", Detail: "the run reached the event cap", TimeNS: int64(res.SimTime)}
		}
	case res.Capped:
		out.Capped = true
	}
	r.finish()
	return out
}

// begin prepares a run whose outcome goes to out and whose states go to
// batch: Run's, and each branch's of a symbolic window (symstep.go).
func (r *Runner) begin(out *Outcome, batch *coverage.Batch, sched netenv.Schedule) {
	r.out, r.batch = out, batch
	r.seen = map[string]bool{}
	clear(r.sum)
	clear(r.hasLast)
	r.samples = 0
	r.lastAt, r.lastFlow = 0, 0
	r.watch.Start(sched)
	r.distEnv = nil
	if r.dists != nil {
		clear(r.hasPrev)
		out.Best, out.BestAt = make([]float64, len(r.c.Conditions)), make([]int64, len(r.c.Conditions))
		for i := range out.Best {
			out.Best[i] = math.Inf(1)
		}
	}
}

// finish completes the outcome of the run begun: a condition's error as a
// fault, and the mean state.
func (r *Runner) finish() {
	out := r.out
	if r.watch.Err != nil && out.Fault == nil {
		if cf, ok := corpus.AsConditionFault(r.watch.Err); ok {
			out.Fault = cf.Finding()
		} else {
			out.Fault = &corpus.Finding{Kind: corpus.FaultCondition, Detail: r.watch.Err.Error()}
		}
	}
	if r.samples > 0 {
		out.Mean = make([]float64, len(r.sum))
		for i, s := range r.sum {
			out.Mean[i] = s / float64(r.samples)
		}
	}
}

// worker is a Runner feeding ACT's executor: batches come from and go
// back to a pool.
type worker struct {
	run0    *Runner
	space   coverage.Space
	batches chan *coverage.Batch // batches merged and reset, for reuse
}

func newWorker(c *Campaign, space coverage.Space, subj netenv.Subject, batches chan *coverage.Batch) *worker {
	r, err := NewRunner(c, subj, space)
	if err != nil {
		panic(err) // checked against the subject at start (CheckSubject)
	}
	return &worker{run0: r, space: space, batches: batches}
}

func (w *worker) run(ctx context.Context, j job) result {
	var b *coverage.Batch
	select {
	case b = <-w.batches:
	default:
		b, _ = coverage.NewBatch(w.space) // the space was validated with the store
	}
	o := w.run0.Run(ctx, j.g, b)
	// A cancelled run's result is discarded by the caller's ctx check.
	// Any other error is the subject refusing a configuration ACT chose
	// (ns-3 cannot change its queue discipline between phases): a
	// finding of its own, never a silently empty run.
	if o.Err != nil && ctx.Err() == nil && o.Fault == nil {
		o.Fault = &corpus.Finding{Kind: "refused", Detail: o.Err.Error()}
	}
	return result{idx: j.idx, batch: b, mean: o.Mean, best: o.Best, bestAt: o.BestAt, hits: o.Hits, fault: o.Fault, capped: o.Capped, events: o.Result.Events}
}

func sameState(a, b []float64) bool {
	for i := range a {
		if a[i] != b[i] && !(math.IsNaN(a[i]) && math.IsNaN(b[i])) {
			return false
		}
	}
	return true
}

// distances keeps, per condition, the smallest branch distance the run has
// reached and when, over the flows (directed ACT). prev is the flow's
// previous observation, as the watcher gives it to conditions.
func (r *Runner) distances(flow int, obs []float64, at time.Duration) {
	prev := r.prevObs[flow]
	if !r.hasPrev[flow] {
		copy(prev, obs)
		r.hasPrev[flow] = true
	}
	if env := r.watch.Env(); env != r.distEnv && env != nil {
		// A new phase: p.X operands read its parameters.
		for _, ds := range r.dists {
			for _, d := range ds {
				if d != nil {
					d.SetEnv(env)
				}
			}
		}
		r.distEnv = env
	}
	for ci, d := range r.dists[flow] {
		if d == nil {
			continue
		}
		if v := d.Eval(obs, prev); v < r.out.Best[ci] {
			r.out.Best[ci], r.out.BestAt[ci] = v, int64(at)
		}
	}
	copy(prev, obs)
}

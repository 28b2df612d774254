package act

import (
	"context"
	"errors"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"time"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/coverage"
	"github.com/actfuzz/actfuzz/netenv"
)

// newSource is the selector's PRNG source for a method; it is kept so
// that checkpoints can save its state.
func newSource(seed uint64, stream string) *rand.PCG {
	h := fnv.New64a()
	h.Write([]byte(stream))
	return rand.NewPCG(seed, h.Sum64())
}

// worker runs simulations and turns their traces into coverage batches,
// mean states and condition hits.
type worker struct {
	c       *Campaign
	subj    netenv.Subject
	batches chan *coverage.Batch // batches merged and reset, for reuse
	space   coverage.Space
	watch   *corpus.Watcher
	proj    [][]int // per flow: observation index of each S variable
	state   []float64
	cur     *result
	seen    map[string]bool
	sum     []float64
	samples int
	last    [][]float64 // per flow: the state last given to the batch
	hasLast []bool
	// The last observation of the run: a subject fault (a CCAI panic)
	// is dated by it, the last moment the run was seen sound.
	lastAt   time.Duration
	lastFlow int
}

func newWorker(c *Campaign, space coverage.Space, subj netenv.Subject, batches chan *coverage.Batch) *worker {
	w := &worker{c: c, space: space, subj: subj, batches: batches, state: make([]float64, len(space.Vars)), sum: make([]float64, len(space.Vars))}
	var err error
	w.watch, err = corpus.NewWatcherFor(subj.Capabilities(), c.CCAI, c.Conditions)
	if err != nil {
		panic(err) // checked against the subject at start (CheckSubject)
	}
	for _, sc := range w.watch.Schemas {
		idx := make([]int, len(space.Vars))
		for i, v := range space.Vars {
			idx[i] = sc.Index(v.Name)
		}
		w.proj = append(w.proj, idx)
	}
	w.last = make([][]float64, len(w.proj))
	for i := range w.last {
		w.last[i] = make([]float64, len(space.Vars))
	}
	w.hasLast = make([]bool, len(w.proj))
	w.watch.OnObservation = w.observe
	w.watch.OnHit = w.hit
	return w
}

func (w *worker) observe(flow int, obs []float64, at time.Duration) {
	w.lastAt, w.lastFlow = at, flow
	for i, k := range w.proj[flow] {
		if k < 0 {
			w.state[i] = math.NaN()
		} else {
			w.state[i] = obs[k]
		}
		w.sum[i] += w.state[i]
	}
	w.samples++
	// Consecutive ACKs mostly leave S unchanged; the batch keeps first
	// visits only, so repeating the previous state adds nothing.
	if last := w.last[flow]; !w.hasLast[flow] || !sameState(last, w.state) {
		w.cur.batch.Observe(w.state, int64(at))
		copy(last, w.state)
		w.hasLast[flow] = true
	}
	if obs[0] == 0 && w.cur.fault == nil {
		w.cur.fault = &corpus.Finding{Kind: "zero-cwnd", TimeNS: int64(at), Flow: flow, State: corpus.StateMap(w.watch.Schemas[flow], obs)}
	}
	for _, v := range obs {
		if math.IsNaN(v) && w.cur.fault == nil {
			w.cur.fault = &corpus.Finding{Kind: "nan", TimeNS: int64(at), Flow: flow, State: corpus.StateMap(w.watch.Schemas[flow], obs)}
		}
	}
}

func (w *worker) hit(flow int, c *corpus.Condition, obs []float64, at time.Duration) {
	if w.seen[c.Name] {
		return
	}
	w.seen[c.Name] = true
	w.cur.hits = append(w.cur.hits, hit{cond: c.Name, when: c.When, flow: flow, at: at,
		state: corpus.StateMap(w.watch.Schemas[flow], obs)})
}

func (w *worker) run(ctx context.Context, j job) result {
	var b *coverage.Batch
	select {
	case b = <-w.batches:
	default:
		b, _ = coverage.NewBatch(w.space) // the space was validated with the store
	}
	r := result{idx: j.idx, batch: b}
	w.cur = &r
	w.seen = map[string]bool{}
	clear(w.sum)
	clear(w.hasLast)
	w.samples = 0
	w.lastAt, w.lastFlow = 0, 0
	w.watch.Reset()
	cfg := netenv.Config{Seed: j.g.Seed, Schedule: j.g.Schedule, Topology: w.c.Topology, SACK: w.c.SACK, Profile: w.c.Profile, Handshake: w.c.Handshake}
	for _, name := range w.c.CCAI {
		cfg.Flows = append(cfg.Flows, netenv.Flow{CCA: name, Bytes: w.c.Bytes})
	}
	res, err := w.subj.Run(ctx, cfg, w.watch)
	var fault *netenv.Fault
	switch {
	case errors.As(err, &fault):
		r.fault = &corpus.Finding{Kind: fault.Kind, Detail: fault.Detail, TimeNS: int64(w.lastAt), Flow: w.lastFlow}
	case err != nil:
		// Cancelled: the result is discarded by the caller's ctx check.
	case res.Capped && res.CapReason == "events":
		r.fault = &corpus.Finding{Kind: "event-cap", Detail: "the run reached the event cap", TimeNS: int64(res.SimTime)}
	case res.Capped:
		r.capped = true
	}
	if w.watch.Err != nil && r.fault == nil {
		r.fault = &corpus.Finding{Kind: "condition-error", Detail: w.watch.Err.Error()}
	}
	if w.samples > 0 {
		r.mean = make([]float64, len(w.sum))
		for i, s := range w.sum {
			r.mean[i] = s / float64(w.samples)
		}
	}
	return r
}

func sameState(a, b []float64) bool {
	for i := range a {
		if a[i] != b[i] && !(math.IsNaN(a[i]) && math.IsNaN(b[i])) {
			return false
		}
	}
	return true
}

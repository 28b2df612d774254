package fuzz

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/coverage"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/sim"
	"github.com/actfuzz/actfuzz/netenv/tcp"
)

// Hit is the first time a campaign condition held in a run.
type Hit struct {
	Condition string
	When      string
	Flow      int
	At        time.Duration
	State     map[string]any
}

// Outcome is what one simulation produced. The states it visited are in
// the runner's Batch until the next Run.
type Outcome struct {
	Result netenv.Result
	// Err is a configuration error or a cancelled context (not a fault).
	Err error
	// Hits holds the first hit of each condition, in order.
	Hits []Hit
	// Fault is a subject fault as a campaign records it ("panic",
	// "zero-cwnd", "nan", "event-cap", "condition-error"), or nil.
	Fault *corpus.Finding
}

// Finding reports whether the run found what a campaign would record as a
// finding: a condition hit or a subject fault.
func (o *Outcome) Finding() bool { return len(o.Hits) > 0 || o.Fault != nil }

// String summarizes the findings of a run (for panics and test failures).
func (o *Outcome) String() string {
	s := ""
	for _, h := range o.Hits {
		s += fmt.Sprintf("condition %q (%s) held at %v on flow %d: %v; ", h.Condition, h.When, h.At, h.Flow, h.State)
	}
	if o.Fault != nil {
		s += fmt.Sprintf("subject fault %s at %v: %s %v; ", o.Fault.Kind, time.Duration(o.Fault.TimeNS), o.Fault.Detail, o.Fault.State)
	}
	if s == "" {
		return "no finding"
	}
	return s[:len(s)-2]
}

// HarnessLimits are the caps of the go-fuzz and native region harnesses:
// cheaper than a campaign's (netenv.DefaultMaxTime, DefaultMaxEvents), so
// that inputs near the corners of P (an application rate of a few bit/s
// keeps a run going for hours of simulated time) cost at most a few
// hundred milliseconds under fuzzing instrumentation. A typical 15 MB run
// needs about 30,000–60,000 events.
var HarnessLimits = sim.Limits{MaxTime: time.Hour, MaxEvents: 150_000}

// Runner runs configurations of one campaign the way act's workers do:
// every state record is projected onto S and collected in a coverage.Batch,
// and the campaign's conditions are watched through a corpus.Watcher. A
// Runner is not safe for concurrent use; give each goroutine its own.
type Runner struct {
	c *act.Campaign
	// Subject runs the simulations (NewRunnerFor's; the observation
	// schema is its, so set another only with the same capabilities).
	Subject netenv.Subject
	// Limits caps each run; zero fields take netenv's defaults, as in a
	// campaign. Reaching netenv's default event cap is a subject fault
	// ("event-cap", as in a campaign); reaching a cap set here is not.
	Limits sim.Limits
	// Extra, if set, sees every state record after the watcher.
	Extra tcp.Observer

	watch *corpus.Watcher
	proj  [][]int
	state []float64
	batch *coverage.Batch
	seen  map[string]bool
	out   *Outcome
}

// NewRunner prepares a runner for campaign c on the native subject.
func NewRunner(c *act.Campaign) (*Runner, error) { return NewRunnerFor(c, netenv.Native{}) }

// NewRunnerFor prepares a runner for campaign c on subj: observations
// have the subject's schema, so it must not be changed afterwards.
func NewRunnerFor(c *act.Campaign, subj netenv.Subject) (*Runner, error) {
	if err := c.CheckSubject(subj.Capabilities()); err != nil {
		return nil, err
	}
	b, err := coverage.NewBatch(c.Space)
	if err != nil {
		return nil, fmt.Errorf("state space: %w", err)
	}
	w, err := corpus.NewWatcherFor(subj.Capabilities(), c.CCAI, c.Conditions)
	if err != nil {
		return nil, fmt.Errorf("conditions: %w", err)
	}
	r := &Runner{c: c, Subject: subj, watch: w, batch: b, state: make([]float64, len(c.Space.Vars))}
	for _, sc := range w.Schemas {
		idx := make([]int, len(c.Space.Vars))
		for i, v := range c.Space.Vars {
			idx[i] = sc.Index(v.Name)
		}
		r.proj = append(r.proj, idx)
	}
	w.OnObservation = r.observe
	w.OnHit = r.hit
	return r, nil
}

// Campaign returns the runner's campaign.
func (r *Runner) Campaign() *act.Campaign { return r.c }

// Batch holds the distinct states of S visited by the last run.
func (r *Runner) Batch() *coverage.Batch { return r.batch }

// TakeBatch hands over the last run's batch and gives the runner a new one.
func (r *Runner) TakeBatch() *coverage.Batch {
	b := r.batch
	r.batch, _ = coverage.NewBatch(r.c.Space)
	return b
}

// NetConfig is the native configuration of G under the campaign.
func (r *Runner) NetConfig(g act.Config) netenv.Config {
	cfg := netenv.Config{Seed: g.Seed, Schedule: g.Schedule, Topology: r.c.Topology, SACK: r.c.SACK, Handshake: r.c.Handshake,
		Profile: r.c.Profile, Limits: r.Limits}
	for _, name := range r.c.CCAI {
		cfg.Flows = append(cfg.Flows, netenv.Flow{CCA: name, Bytes: r.c.Bytes})
	}
	return cfg
}

func (r *Runner) observe(flow int, obs []float64, at time.Duration) {
	for i, k := range r.proj[flow] {
		if k < 0 {
			r.state[i] = math.NaN()
		} else {
			r.state[i] = obs[k]
		}
	}
	r.batch.Observe(r.state, int64(at))
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
	r.out.Hits = append(r.out.Hits, Hit{Condition: c.Name, When: c.When, Flow: flow, At: at,
		State: corpus.StateMap(r.watch.Schemas[flow], obs)})
}

type tee struct{ a, b tcp.Observer }

func (t tee) Observe(rec *tcp.StateRecord) { t.a.Observe(rec); t.b.Observe(rec) }

// Run simulates g. The batch is reset first.
func (r *Runner) Run(ctx context.Context, g act.Config) Outcome {
	var out Outcome
	r.out = &out
	r.seen = map[string]bool{}
	r.batch.Reset()
	r.watch.Reset()
	var obs tcp.Observer = r.watch
	if r.Extra != nil {
		obs = tee{r.watch, r.Extra}
	}
	res, err := r.Subject.Run(ctx, r.NetConfig(g), obs)
	out.Result = res
	var fault *netenv.Fault
	switch {
	case errors.As(err, &fault):
		out.Fault = &corpus.Finding{Kind: fault.Kind, Detail: fault.Detail}
	case err != nil:
		out.Err = err
	case res.Capped && res.CapReason == "events" && r.Limits.MaxEvents == 0:
		if out.Fault == nil {
			out.Fault = &corpus.Finding{Kind: "event-cap", Detail: "the run reached the event cap", TimeNS: int64(res.SimTime)}
		}
	}
	if r.watch.Err != nil && out.Fault == nil {
		out.Fault = &corpus.Finding{Kind: "condition-error", Detail: r.watch.Err.Error()}
	}
	r.out = nil
	return out
}

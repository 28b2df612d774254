package symbolic

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/actfuzz/actfuzz/internal/exprcheck"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
	"github.com/actfuzz/actfuzz/netenv/sim"
)

// outcome is what one run produced.
type outcome struct {
	all    map[string]map[string]int64 // flow → metric → value
	values []int64                     // the selected metrics, in order
	hits   []string                    // conditions that hold
	events uint64
	hash   string // trace SHA-256, when traced
}

// Tracing lets a replay record more than its outcome.
type Tracing struct {
	// State sees every TCP state record (TCP scenarios).
	State observe.Observer
	// Delivery sees every datagram that reaches its destination (topology
	// scenarios).
	Delivery func(netenv.Delivery)
}

// simulate runs the scenario once with the given scheduler and delay vector
// (units of the resolution). tr, if not nil, traces the run and makes it
// compute the trace hash.
func (c *compiled) simulate(ctx context.Context, s sim.Scheduler, w *[MaxVars]int64, tr *Tracing) (*outcome, error) {
	r, err := c.start(s, w, tr, false)
	if err != nil {
		return nil, err
	}
	return r.finish(ctx)
}

// scRun is one run of a scenario: a native session (TCP) or a topology
// session (UDP) with the window's delay hook. It is the root of a prefix
// snapshot (prefix.go): everything the run holds is reachable from it,
// including the hook's state, which the sessions do not see.
type scRun struct {
	c     *compiled `snapshot:"shared"` // immutable
	tcp   *netenv.Session
	topo  *netenv.TopoSession
	hook  *windowDelays
	hop   *hopDelays
	watch RunWatcher
}

// start prepares a run (no event executed yet). hash makes it compute the
// trace hash without tracing anything else.
func (c *compiled) start(s sim.Scheduler, w *[MaxVars]int64, tr *Tracing, hash bool) (*scRun, error) {
	r := &scRun{c: c}
	res := time.Duration(c.res)
	lim := sim.Limits{MaxTime: c.sc.End}
	win := c.sc.Window
	if c.sc.Topology != nil {
		r.hop = &hopDelays{flow: win.Flow, hop: [2]sim.NodeID{sim.NodeID(c.hop[0]), sim.NodeID(c.hop[1])}, first: c.first, n: uint64(c.n), res: res, w: w}
		tc := netenv.TopoConfig{Topology: *c.sc.Topology, Limits: lim, Scheduler: s, DelayHook: r.hop.hook, HashTrace: hash}
		if ss, ok := s.(*sched); ok && ss.red.H {
			tc.OnStart = func(src sim.StateSource) { ss.src = src }
		}
		if tr != nil {
			tc.HashTrace, tc.OnDelivery = true, tr.Delivery
		}
		ts, err := netenv.NewTopoSession(tc)
		if err != nil {
			return nil, err
		}
		r.topo = ts
		return r, nil
	}
	t := c.sc.TCP
	r.hook = &windowDelays{flow: win.Flow, kind: c.kind, first: c.first, n: uint64(c.n), res: res, w: w}
	cfg := netenv.Config{
		Seed: t.Seed, Schedule: netenv.Constant(t.Env), Flows: t.Flows, SACK: t.SACK, Profile: t.Profile,
		Handshake: t.Handshake,
	}
	if t.Base != nil {
		cfg = *t.Base
		cfg.DelayHookAdds = true
	}
	cfg.Limits, cfg.Scheduler, cfg.DelayHook, cfg.HashTrace = lim, s, r.hook.hook, hash
	var obs observe.Observer
	if tr != nil {
		cfg.HashTrace, obs = true, tr.State
	}
	if t.Watch != nil {
		t.Watch.Reset()
		r.watch = t.Watch
		if obs != nil {
			obs = teeObs{t.Watch, obs}
		} else {
			obs = t.Watch
		}
	}
	ts, err := netenv.NewSession(cfg, obs)
	if err != nil {
		return nil, err
	}
	r.tcp = ts
	return r, nil
}

// events is the number of events executed so far.
func (r *scRun) events() uint64 {
	if r.topo != nil {
		return r.topo.Events()
	}
	return r.tcp.Events()
}

// now is the simulated time.
func (r *scRun) now() time.Duration {
	if r.topo != nil {
		return r.topo.Now()
	}
	return r.tcp.Now()
}

// runTo executes events until n have run in all, or the run ends.
func (r *scRun) runTo(ctx context.Context, n uint64) error {
	if r.topo != nil {
		return r.topo.RunTo(ctx, n)
	}
	return r.tcp.RunTo(ctx, n)
}

// witnessRead reports whether the run's hook has read a delay.
func (r *scRun) witnessRead() bool {
	return r.hop != nil && r.hop.read || r.hook != nil && r.hook.read
}

// setWitness makes the run's hook read the delays of w (after a restore).
func (r *scRun) setWitness(w *[MaxVars]int64) {
	if r.hop != nil {
		r.hop.w = w
	}
	if r.hook != nil {
		r.hook.w = w
	}
}

// finish runs to the end and computes the outcome.
func (r *scRun) finish(ctx context.Context) (*outcome, error) {
	c := r.c
	out := &outcome{all: map[string]map[string]int64{}}
	if r.topo != nil {
		res, err := r.topo.Finish(ctx)
		if err != nil {
			return nil, err
		}
		out.events, out.hash = res.Events, res.TraceSHA256
		for f, fr := range res.Flows {
			out.all[fmt.Sprintf("flow%d", f)] = map[string]int64{
				"received": int64(fr.Received), "received_bytes": int64(fr.ReceivedBytes),
				"sent": int64(fr.Sent), "dropped": int64(fr.Dropped), "reordered": int64(fr.Reordered),
			}
		}
	} else {
		res, err := r.tcp.Finish(ctx)
		if err != nil {
			return nil, err
		}
		if r.watch != nil {
			out.hits = append(out.hits, r.watch.Hits()...)
		}
		out.events, out.hash = res.Events, res.TraceSHA256
		for f, fr := range res.Flows {
			done := int64(0)
			if fr.Done {
				done = 1
			}
			out.all[fmt.Sprintf("flow%d", f)] = map[string]int64{
				"delivered_bytes": int64(fr.DeliveredBytes), "cwnd": int64(fr.Final.Cwnd),
				"ssthresh": int64(fr.Final.SSThresh), "retransmits": int64(fr.Retransmits),
				"timeouts": int64(fr.Timeouts), "recoveries": int64(fr.Recoveries), "done": done,
				"syn_retransmits": int64(fr.SynRetransmits),
			}
		}
	}
	for _, m := range c.metrics {
		out.values = append(out.values, out.all[fmt.Sprintf("flow%d", m.flow)][m.m])
	}
	if len(c.conds) > 0 {
		env := map[string]any{}
		for k, v := range out.all {
			m := map[string]any{}
			for n, x := range v {
				m[n] = x
			}
			env[k] = m
		}
		for i, prog := range c.conds {
			v, err := exprcheck.Run(prog, env)
			if err != nil {
				return nil, fmt.Errorf("condition %q: %w", c.sc.Conditions[i].Name, err)
			}
			if b, _ := v.(bool); b {
				out.hits = append(out.hits, c.sc.Conditions[i].Name)
			}
		}
	}
	return out, nil
}

// key renders an outcome as its canonical string: the selected metrics in
// order, then the conditions that hold.
func (c *compiled) key(o *outcome) string {
	var b strings.Builder
	for i, m := range c.metrics {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%d", m.name, o.values[i])
	}
	if len(o.hits) > 0 {
		fmt.Fprintf(&b, " hits=%s", strings.Join(o.hits, ","))
	}
	return b.String()
}

type teeObs struct{ a, b observe.Observer }

func (t teeObs) Observe(r *observe.Record) { t.a.Observe(r); t.b.Observe(r) }

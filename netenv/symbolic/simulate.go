package symbolic

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/expr-lang/expr"

	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/sim"
	"github.com/actfuzz/actfuzz/netenv/tcp"
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
	State tcp.Observer
	// Delivery sees every datagram that reaches its destination (topology
	// scenarios).
	Delivery func(netenv.Delivery)
}

// simulate runs the scenario once with the given scheduler and delay vector
// (units of the resolution). tr, if not nil, traces the run and makes it
// compute the trace hash.
func (c *compiled) simulate(ctx context.Context, s sim.Scheduler, w *[MaxVars]int64, tr *Tracing) (*outcome, error) {
	out := &outcome{all: map[string]map[string]int64{}}
	res := time.Duration(c.res)
	lim := sim.Limits{MaxTime: c.sc.End}
	win := c.sc.Window
	if c.sc.Topology != nil {
		hop := [2]sim.NodeID{sim.NodeID(c.hop[0]), sim.NodeID(c.hop[1])}
		hook := func(from, to sim.NodeID, p *sim.Packet) (time.Duration, int16, bool) {
			if int(p.Flow) != win.Flow || from != hop[0] || to != hop[1] || p.Seq < c.first || p.Seq >= c.first+uint64(c.n) {
				return 0, 0, false
			}
			i := p.Seq - c.first
			return time.Duration(w[i]) * res, int16(i + 1), true
		}
		tc := netenv.TopoConfig{Topology: *c.sc.Topology, Limits: lim, Scheduler: s, DelayHook: hook}
		if ss, ok := s.(*sched); ok && ss.red.H {
			tc.OnStart = func(src sim.StateSource) { ss.src = src }
		}
		if tr != nil {
			tc.HashTrace, tc.OnDelivery = true, tr.Delivery
		}
		r, err := netenv.RunTopology(ctx, tc)
		if err != nil {
			return nil, err
		}
		out.events, out.hash = r.Events, r.TraceSHA256
		for f, fr := range r.Flows {
			out.all[fmt.Sprintf("flow%d", f)] = map[string]int64{
				"received": int64(fr.Received), "received_bytes": int64(fr.ReceivedBytes),
				"sent": int64(fr.Sent), "dropped": int64(fr.Dropped), "reordered": int64(fr.Reordered),
			}
		}
	} else {
		t := c.sc.TCP
		hook := windowHook(win.Flow, c.kind, c.first, uint64(c.n), func(i uint64) time.Duration { return time.Duration(w[i]) * res })
		cfg := netenv.Config{
			Seed: t.Seed, Schedule: netenv.Constant(t.Env), Flows: t.Flows, SACK: t.SACK, Profile: t.Profile,
			Handshake: t.Handshake,
		}
		if t.Base != nil {
			cfg = *t.Base
			cfg.DelayHookAdds = true
		}
		cfg.Limits, cfg.Scheduler, cfg.DelayHook = lim, s, hook
		var obs tcp.Observer
		if tr != nil {
			cfg.HashTrace, obs = true, tr.State
		}
		if t.Watch != nil {
			t.Watch.Reset()
			if obs != nil {
				obs = teeObs{t.Watch, obs}
			} else {
				obs = t.Watch
			}
		}
		r, err := netenv.Run(ctx, cfg, obs)
		if err != nil {
			return nil, err
		}
		if t.Watch != nil {
			out.hits = append(out.hits, t.Watch.Hits()...)
		}
		out.events, out.hash = r.Events, r.TraceSHA256
		for f, fr := range r.Flows {
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
			v, err := expr.Run(prog, env)
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

type teeObs struct{ a, b tcp.Observer }

func (t teeObs) Observe(r *tcp.StateRecord) { t.a.Observe(r); t.b.Observe(r) }

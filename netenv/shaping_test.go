package netenv_test

import (
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/netenvtest"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

// TestQueueDisciplines: over a 1,000-packet buffer at 10 Mbit/s (1.2 s of
// queue), a CUBIC flow fills the drop-tail queue (bufferbloat), while CoDel
// holds the queuing delay near its 5 ms target, RED near its 5–15 packet
// thresholds and PIE near its 15 ms target; they drop by their own
// decision, which drop-tail never does.
func TestQueueDisciplines(t *testing.T) {
	base := netenv.DefaultEnv()
	base.Loss, base.BW, base.Delay, base.Buffer = 0, 10, 20, 1000
	for _, tc := range []struct {
		aqm            netenv.AQM
		target         float64 // codel_target, ms (0: the RFC's)
		minRTT, maxRTT float64 // mean srtt after 2 s, ms (base RTT 40 ms)
		aqmDrops       bool
	}{
		{aqm: netenv.AQMDropTail, minRTT: 200, maxRTT: 2000},
		{aqm: netenv.AQMCoDel, minRTT: 40, maxRTT: 70, aqmDrops: true},
		{aqm: netenv.AQMCoDel, target: 30, minRTT: 55, maxRTT: 120, aqmDrops: true},
		{aqm: netenv.AQMRED, minRTT: 40, maxRTT: 70, aqmDrops: true},
		// PIE holds the queuing delay near its 15 ms target.
		{aqm: netenv.AQMPIE, minRTT: 45, maxRTT: 85, aqmDrops: true},
	} {
		env := base
		env.AQM, env.CoDelTarget = tc.aqm, tc.target
		cfg := single("cubic", env, 8_000_000, 1)
		res, rec := run(t, cfg)
		rtt := netenvtest.MeanSRTT(rec.recs, 2*time.Second)
		t.Logf("%v target %v: mean srtt %.1f ms, aqm drops %d, tail drops %d, done %v", tc.aqm, tc.target, rtt, res.AQMDrops, res.Drops, res.Flows[0].Done)
		if rtt < tc.minRTT || rtt > tc.maxRTT {
			t.Errorf("%v target %v: mean srtt %.1f ms, want [%v, %v]", tc.aqm, tc.target, rtt, tc.minRTT, tc.maxRTT)
		}
		if (res.AQMDrops > 0) != tc.aqmDrops || !res.Flows[0].Done {
			t.Errorf("%v: %d AQM drops (want some: %v), done %v", tc.aqm, res.AQMDrops, tc.aqmDrops, res.Flows[0].Done)
		}
		again, _ := run(t, cfg)
		if again.TraceSHA256 != res.TraceSHA256 {
			t.Errorf("%v: two runs of one seed differ", tc.aqm)
		}
	}
}

// TestPolicer: a 5 Mbit/s policer with a 30 kB bucket on a 100 Mbit/s link
// drops what exceeds, so the goodput stays near 5 Mbit/s.
func TestPolicer(t *testing.T) {
	env := netenv.DefaultEnv()
	env.Loss, env.BW, env.Delay = 0, 100, 10
	for _, tc := range []struct {
		rate, burst float64
		minG, maxG  float64 // goodput, Mbit/s
		wantPoliced bool
		name        string
	}{
		{name: "no policer", minG: 30, maxG: 100},
		{name: "5 Mbit/s", rate: 5, burst: 30, minG: 2, maxG: 5.5, wantPoliced: true},
		// The floor is ours, not Linux's: the flow keeps making
		// progress. PRR's slow-start segment only on an ACK that
		// advanced snd_una and marked nothing lost (Linux's
		// tcp_cwnd_reduction since 5.11, tcp.Sender prrSSExtra) sends
		// less into a bucket that drops nearly every burst: 0.45
		// Mbit/s where the extra segment gave 0.57.
		{name: "tiny bucket is one packet", rate: 5, burst: 0, minG: 0.4, maxG: 5.5, wantPoliced: true},
	} {
		e := env
		e.PolicerRate, e.PolicerBurst = tc.rate, tc.burst
		res, _ := run(t, single("cubic", e, 3_000_000, 2))
		f := res.Flows[0]
		if !f.Done {
			t.Fatalf("%s: not done", tc.name)
		}
		g := float64(f.DeliveredBytes) * 8 / f.DoneAtS / 1e6
		t.Logf("%s: goodput %.2f Mbit/s, policed %d, retransmits %d", tc.name, g, res.Policed, f.Retransmits)
		if g < tc.minG || g > tc.maxG || (res.Policed > 0) != tc.wantPoliced {
			t.Errorf("%s: goodput %.2f Mbit/s (want [%v, %v]), policed %d", tc.name, g, tc.minG, tc.maxG, res.Policed)
		}
	}
}

// TestAckAggregation: with ACKs released every 10 ms, they reach the
// sender in bursts just after each release (one-way delay 20 ms later),
// not spread over the period; with at most 4 held, a burst is at most 4.
func TestAckAggregation(t *testing.T) {
	env := netenv.DefaultEnv()
	env.Loss, env.BW, env.Delay = 0, 10, 20
	const period = 10 * time.Millisecond
	// nearBoundary is the share of ACK records that arrive within 2 ms
	// after a release boundary shifted by the one-way delay.
	nearBoundary := func(recs []observe.Record) float64 {
		n, near := 0, 0
		for _, r := range recs {
			if r.Reason != observe.ReasonAck || r.Time < time.Second {
				continue
			}
			n++
			if (r.Time-20*time.Millisecond)%period < 2*time.Millisecond {
				near++
			}
		}
		return float64(near) / float64(max(n, 1))
	}
	_, plain := run(t, single("reno", env, 2_000_000, 3))
	agg := env
	agg.AckAgg = 10
	res, held := run(t, single("reno", agg, 2_000_000, 3))
	p, h := nearBoundary(plain.recs), nearBoundary(held.recs)
	t.Logf("ACK records within 2 ms of a release: %.0f%% plain, %.0f%% aggregated", 100*p, 100*h)
	if h < 0.9 || p > 0.5 || !res.Flows[0].Done {
		t.Errorf("ACKs near a release: %.2f aggregated, %.2f plain (want ≥ 0.9 and ≤ 0.5), done %v", h, p, res.Flows[0].Done)
	}
	// A cap of 4 ACKs releases early: fewer ACKs wait for the boundary.
	capped := agg
	capped.AckAggMax = 4
	_, c := run(t, single("reno", capped, 2_000_000, 3))
	if cb := nearBoundary(c.recs); cb >= h {
		t.Errorf("with at most 4 held, %.2f of ACKs near a release, not fewer than %.2f", cb, h)
	}
}

// TestTraceLink: a trace-driven bottleneck delivers at the trace's rate,
// whatever bw says, and repeats the trace past its end; the scale
// multiplies the rate.
func TestTraceLink(t *testing.T) {
	env := netenv.DefaultEnv()
	env.Loss, env.BW, env.Delay, env.Buffer = 0, 100, 10, 200
	for _, tc := range []struct {
		trace      string
		scale      float64
		minG, maxG float64 // goodput, Mbit/s
	}{
		{"steady", 0, 9, 12.1},    // 12 Mbit/s; the 1 s trace repeats
		{"steady", 2, 18, 24.1},   // twice as fast
		{"steady", 0.5, 4.5, 6.1}, // half
		{"lte", 0, 1, 30},
		{"wifi", 0, 10, 35},
	} {
		e := env
		var tr netenv.LinkTrace
		if err := tr.UnmarshalText([]byte(tc.trace)); err != nil {
			t.Fatal(err)
		}
		e.Trace, e.TraceScale = tr, tc.scale
		cfg := single("cubic", e, 4_000_000, 4)
		res, _ := run(t, cfg)
		f := res.Flows[0]
		g := float64(f.DeliveredBytes) * 8 / f.DoneAtS / 1e6
		t.Logf("%s ×%v: goodput %.2f Mbit/s, done at %.2f s, drops %d", tc.trace, tc.scale, g, f.DoneAtS, res.Drops)
		if !f.Done || g < tc.minG || g > tc.maxG {
			t.Errorf("%s ×%v: done %v, goodput %.2f Mbit/s, want [%v, %v]", tc.trace, tc.scale, f.Done, g, tc.minG, tc.maxG)
		}
		if again, _ := run(t, cfg); again.TraceSHA256 != res.TraceSHA256 {
			t.Errorf("%s: two runs of one seed differ", tc.trace)
		}
	}
}

// TestECN: with ECN on, a RED or step-marking bottleneck marks instead of
// dropping, the receiver echoes, and the sender reduces in CWR (RFC 3168);
// DCTCP over step marking at K keeps the queue near K with no loss and a
// fractional α (RFC 8257). Without ECN nothing is marked.
func TestECN(t *testing.T) {
	base := netenv.DefaultEnv()
	base.Loss, base.BW, base.Delay, base.Buffer = 0, 100, 1, 400
	for _, tc := range []struct {
		name       string
		cca        string
		ecn        bool
		aqm        netenv.AQM
		k          int
		marks      bool
		maxDrops   uint64
		maxSRTT    float64 // ms, mean after 1 s
		alphaRange [2]float64
	}{
		{name: "cubic red ecn", cca: "cubic", ecn: true, aqm: netenv.AQMRED, marks: true, maxDrops: 20, maxSRTT: 5},
		// PIE marks while its probability is at most 10% (RFC 8033 §5.1)
		// and holds the delay near its 15 ms target.
		{name: "cubic pie ecn", cca: "cubic", ecn: true, aqm: netenv.AQMPIE, marks: true, maxDrops: 20, maxSRTT: 30},
		{name: "cubic red no ecn", cca: "cubic", aqm: netenv.AQMRED, maxDrops: 1 << 30, maxSRTT: 5},
		{name: "dctcp step K=20", cca: "dctcp", ecn: true, k: 20, marks: true, maxDrops: 0, maxSRTT: 5, alphaRange: [2]float64{0.01, 0.9}},
		// CoDel acts only after an interval above target: slow start
		// overflows the buffer first, as it would on a real CoDel queue.
		{name: "reno codel ecn", cca: "reno", ecn: true, aqm: netenv.AQMCoDel, marks: true, maxDrops: 1000, maxSRTT: 12},
	} {
		e := base
		e.AQM, e.ECNK = tc.aqm, tc.k
		if tc.ecn {
			e.ECN = netenv.ECNOn
		}
		res, rec := run(t, single(tc.cca, e, 20_000_000, 5))
		f := res.Flows[0]
		rtt := netenvtest.MeanSRTT(rec.recs, time.Second)
		t.Logf("%s: marks %d, aqm drops %d, tail drops %d, ECN reductions %d, recoveries %d, mean srtt %.2f ms, done %v at %.2f s",
			tc.name, res.Marks, res.AQMDrops, res.Drops, f.ECNReductions, f.Recoveries, rtt, f.Done, f.DoneAtS)
		if !f.Done || (res.Marks > 0) != tc.marks || (f.ECNReductions > 0) != tc.marks || res.AQMDrops+res.Drops > tc.maxDrops || rtt > tc.maxSRTT {
			t.Errorf("%s: done %v, marks %d, reductions %d, drops %d+%d (≤ %d), srtt %.2f ms (≤ %v)", tc.name, f.Done, res.Marks, f.ECNReductions, res.AQMDrops, res.Drops, tc.maxDrops, rtt, tc.maxSRTT)
		}
		if tc.alphaRange[1] > 0 {
			var lo, hi float64 = 2, -1
			for _, r := range rec.recs {
				if r.Time > time.Second && len(r.Vars) > 0 {
					lo, hi = min(lo, r.Vars[0]), max(hi, r.Vars[0])
				}
			}
			if lo < tc.alphaRange[0] || hi > tc.alphaRange[1] {
				t.Errorf("%s: α in [%.3f, %.3f] after 1 s, want within %v", tc.name, lo, hi, tc.alphaRange)
			}
		}
	}
}

package ns3

import (
	"context"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/netenvtest"
)

// TestQueueDisciplines is netenv's TestQueueDisciplines on ns-3: over a
// 1,000-packet buffer at 10 Mbit/s (1.2 s of queue), TcpCubic fills the
// drop-tail queue (bufferbloat), while CoDelQueueDisc holds the queuing
// delay near its target and RedQueueDisc near its 5–15 packet thresholds,
// each dropping by its own decision; with ECN they mark instead (RED's
// forced drops, average beyond 2·max_th, stay drops: slow start's
// overshoot on this link gives some, as natively).
func TestQueueDisciplines(t *testing.T) {
	s := realSubject(t)
	base := netenv.DefaultEnv()
	base.Loss, base.BW, base.Delay, base.Buffer = 0, 10, 20, 1000
	for _, tc := range []struct {
		aqm            netenv.AQM
		target         float64 // codel_target, ms (0: the RFC's)
		ecn            bool
		minRTT, maxRTT float64 // mean srtt after 2 s, ms (base RTT 40 ms)
		aqmDrops       bool
		anyDrops       bool // AQM drops or none: RED's forced drops (avg ≥ 2·max_th) stay drops with ECN
		marks          bool
	}{
		{aqm: netenv.AQMDropTail, minRTT: 200, maxRTT: 2000},
		{aqm: netenv.AQMCoDel, minRTT: 40, maxRTT: 80, aqmDrops: true},
		{aqm: netenv.AQMCoDel, target: 30, minRTT: 55, maxRTT: 130, aqmDrops: true},
		{aqm: netenv.AQMRED, minRTT: 40, maxRTT: 80, aqmDrops: true},
		{aqm: netenv.AQMCoDel, ecn: true, minRTT: 40, maxRTT: 80, marks: true},
		{aqm: netenv.AQMRED, ecn: true, minRTT: 40, maxRTT: 80, anyDrops: true, marks: true},
	} {
		env := base
		env.AQM, env.CoDelTarget = tc.aqm, tc.target
		if tc.ecn {
			env.ECN = netenv.ECNOn
		}
		cfg := netenv.Config{Seed: 1, Schedule: netenv.Constant(env), SACK: true, HashTrace: true,
			Flows: []netenv.Flow{{CCA: "cubic", Bytes: 8_000_000}}}
		run := func() (netenv.Result, *collect) {
			t.Helper()
			var c collect
			res, err := s.Run(context.Background(), cfg, &c)
			if err != nil {
				t.Fatal(err)
			}
			return res, &c
		}
		res, rec := run()
		rtt := netenvtest.MeanSRTT(rec.recs, 2*time.Second)
		t.Logf("%v target %v ecn %v: mean srtt %.1f ms (after 4 s: %.1f ms), aqm drops %d, marks %d, tail drops %d, done %v at %.2f s",
			tc.aqm, tc.target, tc.ecn, rtt, netenvtest.MeanSRTT(rec.recs, 4*time.Second), res.AQMDrops, res.Marks, res.Drops, res.Flows[0].Done, res.Flows[0].DoneAtS)
		if rtt < tc.minRTT || rtt > tc.maxRTT {
			t.Errorf("%v target %v ecn %v: mean srtt %.1f ms, want [%v, %v]", tc.aqm, tc.target, tc.ecn, rtt, tc.minRTT, tc.maxRTT)
		}
		if ((res.AQMDrops > 0) != tc.aqmDrops && !tc.anyDrops) || (res.Marks > 0) != tc.marks || !res.Flows[0].Done {
			t.Errorf("%v ecn %v: %d AQM drops (want some: %v), %d marks (want some: %v), done %v",
				tc.aqm, tc.ecn, res.AQMDrops, tc.aqmDrops, res.Marks, tc.marks, res.Flows[0].Done)
		}
		if again, _ := run(); again.TraceSHA256 != res.TraceSHA256 {
			t.Errorf("%v: two runs of one seed differ", tc.aqm)
		}
	}
}

// TestAQMMustNotChange: one root queue disc per run, so a schedule that
// changes aqm between phases is refused before it reaches the driver.
func TestAQMMustNotChange(t *testing.T) {
	s := realSubject(t)
	a, b := netenv.DefaultEnv(), netenv.DefaultEnv()
	b.AQM = netenv.AQMCoDel
	cfg := netenv.Config{Seed: 1, Schedule: netenv.Schedule{{Env: a, Until: 1e9}, {Env: b}},
		Flows: []netenv.Flow{{CCA: "cubic", Bytes: 100_000}}}
	if _, err := s.Run(context.Background(), cfg, nil); err == nil {
		t.Fatal("a schedule changing aqm was accepted")
	}
}

// TestAQMPhases: within one discipline the buffer, CoDel's parameters and
// ecn follow the phases: a buffer shrunk from 1,000 to 10 packets keeps
// what the disc holds and drops arrivals until it drains (tail drops),
// and marking starts with the phase that turns ecn on.
func TestAQMPhases(t *testing.T) {
	s := realSubject(t)
	for _, aqm := range []netenv.AQM{netenv.AQMRED, netenv.AQMCoDel} {
		a := netenv.DefaultEnv()
		a.Loss, a.BW, a.Delay, a.Buffer, a.AQM, a.CoDelTarget = 0, 10, 20, 1000, aqm, 50
		b := a
		b.BW, b.Buffer, b.ECN, b.CoDelTarget = 5, 10, netenv.ECNOn, 0
		cfg := netenv.Config{Seed: 1, Schedule: netenv.Schedule{{Env: a, Until: 2 * time.Second}, {Env: b}}, SACK: true,
			Flows: []netenv.Flow{{CCA: "cubic", Bytes: 8_000_000}}}
		res, err := s.Run(context.Background(), cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%v: aqm drops %d, marks %d, tail drops %d, done %v at %.2f s", aqm, res.AQMDrops, res.Marks, res.Drops, res.Flows[0].Done, res.Flows[0].DoneAtS)
		if !res.Flows[0].Done || res.Marks == 0 || res.Drops == 0 {
			t.Errorf("%v: done %v, marks %d, tail drops %d: want done, marks and drops from the shrunk buffer", aqm, res.Flows[0].Done, res.Marks, res.Drops)
		}
	}
}

// TestECNWithoutAQM: ecn on over drop-tail negotiates ECN but nothing
// marks (no ecn_k on ns-3), as natively.
func TestECNWithoutAQM(t *testing.T) {
	s := realSubject(t)
	env := netenv.DefaultEnv()
	env.Loss, env.Buffer, env.ECN = 0, 20, netenv.ECNOn
	cfg := netenv.Config{Seed: 1, Schedule: netenv.Constant(env), SACK: true,
		Flows: []netenv.Flow{{CCA: "cubic", Bytes: 2_000_000}}}
	res, err := s.Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Flows[0].Done || res.Marks != 0 || res.AQMDrops != 0 || res.Drops == 0 {
		t.Errorf("done %v, marks %d, aqm drops %d, tail drops %d: want done, only tail drops", res.Flows[0].Done, res.Marks, res.AQMDrops, res.Drops)
	}
}

package netenv_test

import (
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/netenv"
)

// TestAppRateEveryPhase: the application writes at the rate of each phase
// into a bounded send buffer (netenv/tcp/app.go), so a slow phase after a
// fast one makes the flow application-limited mid-transfer: in-flight
// falls below cwnd/2 in that phase. With the old unlimited buffer the fast
// first phase wrote the whole transfer at once and the slow phase changed
// nothing.
func TestAppRateEveryPhase(t *testing.T) {
	fast := netenv.Env{BW: 100, Delay: 20, App: 100_000, Buffer: 200}
	slow := fast
	slow.App = 5
	const bytes = 40_000_000
	for _, tc := range []struct {
		name        string
		sched       netenv.Schedule
		wantLimited bool // in-flight < cwnd/2 in [1.5 s, 3 s)
	}{
		{"fast throughout", netenv.Constant(fast), false},
		{"slow second phase", netenv.Schedule{
			{Env: fast, Until: time.Second}, {Env: slow, Until: 3 * time.Second}, {Env: fast},
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := netenv.Config{Seed: 1, Schedule: tc.sched, Flows: []netenv.Flow{{CCA: "cubic", Bytes: bytes}}, SACK: true}
			res, rec := run(t, cfg)
			f := res.Flows[0]
			if !f.Done {
				t.Fatalf("transfer incomplete: %+v", f)
			}
			limited := 0
			for _, r := range rec.recs {
				if r.Time >= 1500*time.Millisecond && r.Time < 3*time.Second && r.InFlight < r.Cwnd/2 {
					limited++
				}
			}
			t.Logf("done at %.2f s, %d events; %d records with in-flight < cwnd/2 in [1.5 s, 3 s)", f.DoneAtS, res.Events, limited)
			if (limited > 0) != tc.wantLimited {
				t.Errorf("%d application-limited records in the second phase, want any: %v", limited, tc.wantLimited)
			}
			if tc.wantLimited && f.DoneAtS < 3 {
				t.Errorf("done at %.2f s: the slow phase did not slow the transfer", f.DoneAtS)
			}
		})
	}
}

// TestSlowPhaseAfterFast is the measurement of the issue: app 10000 Mbit/s,
// then 0.01 Mbit/s from 0.5 s, used to finish 15 MB at 2.5 s as if the
// second phase did not exist. Now the application has written at most the
// send buffer's 4 MB beyond what was acknowledged by 0.5 s, and the rest
// comes at 0.01 Mbit/s.
func TestSlowPhaseAfterFast(t *testing.T) {
	fast := netenv.DefaultEnv()
	slow := fast
	slow.App = 0.01
	cfg := netenv.Config{Seed: 1, Flows: []netenv.Flow{{CCA: "cubic", Bytes: netenv.DefaultBytes}}, SACK: true,
		Schedule: netenv.Schedule{{Env: fast, Until: 500 * time.Millisecond}, {Env: slow}}}
	cfg.Limits.MaxTime = 60 * time.Second
	res, _ := run(t, cfg)
	f := res.Flows[0]
	t.Logf("after 60 s: done %v, delivered %d bytes", f.Done, f.DeliveredBytes)
	if f.Done || f.DeliveredBytes > 6_000_000 {
		t.Errorf("done %v with %d bytes delivered: the slow phase changed nothing", f.Done, f.DeliveredBytes)
	}
}

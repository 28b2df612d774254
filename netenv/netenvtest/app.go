// Package netenvtest holds checks shared by the tests of every subject.
package netenvtest

import (
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

// RunFunc runs a configuration on a subject and returns its state records.
type RunFunc func(t *testing.T, cfg netenv.Config) (netenv.Result, []observe.Record)

// AppRateEveryPhase checks that the application rate means something in
// every phase: the subject's application writes at the phase's rate into
// a bounded send buffer, so after a fast first phase a slow second one
// (5 Mbit/s over 100 Mbit/s, from 1 s to 3 s) leaves in-flight below
// cwnd/2, and a fast application throughout never does mid-transfer.
func AppRateEveryPhase(t *testing.T, run RunFunc, cca string, bytes uint64) {
	fast := netenv.Env{BW: 100, Delay: 20, App: 100_000, Buffer: 200}
	slow := fast
	slow.App = 5
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
			cfg := netenv.Config{Seed: 1, Schedule: tc.sched, Flows: []netenv.Flow{{CCA: cca, Bytes: bytes}}, SACK: true}
			res, recs := run(t, cfg)
			f := res.Flows[0]
			if !f.Done {
				t.Fatalf("transfer incomplete: %+v", f)
			}
			// The last RTTs are the transfer's tail, not an
			// application limit.
			end := min(3*time.Second, time.Duration(f.DoneAtS*1e9)-200*time.Millisecond)
			limited := 0
			for _, r := range recs {
				if r.Time >= 1500*time.Millisecond && r.Time < end && r.InFlight < r.Cwnd/2 {
					limited++
				}
			}
			t.Logf("done at %.2f s; %d records with in-flight < cwnd/2 in [1.5 s, %v)", f.DoneAtS, limited, end)
			if (limited > 0) != tc.wantLimited {
				t.Errorf("%d application-limited records, want any: %v", limited, tc.wantLimited)
			}
			if tc.wantLimited && f.DoneAtS < 3 {
				t.Errorf("done at %.2f s: the slow phase did not slow the transfer", f.DoneAtS)
			}
		})
	}
}

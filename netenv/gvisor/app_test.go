package gvisor

import (
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/netenv"
)

// TestAppRateEveryPhase: as natively (netenv's TestAppRateEveryPhase), the
// 4 MB send buffer keeps a fast first phase from writing the whole
// transfer, so a slow second phase leaves in-flight below cwnd/2.
func TestAppRateEveryPhase(t *testing.T) {
	fast := netenv.Env{BW: 100, Delay: 20, App: 100_000, Buffer: 200}
	slow := fast
	slow.App = 5
	const bytes = 20_000_000
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
			obs := &recObs{}
			res := run(t, cfg, obs)
			f := res.Flows[0]
			if !f.Done {
				t.Fatalf("transfer incomplete: %+v", f)
			}
			limited := 0
			// Records of the last RTTs are the transfer's tail, not
			// application limits.
			end := time.Duration(f.DoneAtS*1e9) - 200*time.Millisecond
			for _, r := range obs.recs {
				if r.Time >= 1500*time.Millisecond && r.Time < min(3*time.Second, end) && r.InFlight < r.Cwnd/2 {
					limited++
				}
			}
			t.Logf("done at %.2f s; %d records with in-flight < cwnd/2 in [1.5 s, 3 s)", f.DoneAtS, limited)
			if tc.wantLimited && (limited == 0 || f.DoneAtS < 3) {
				t.Errorf("%d application-limited records in the slow phase, done at %.2f s", limited, f.DoneAtS)
			}
			if !tc.wantLimited && limited > 0 {
				t.Errorf("%d application-limited records with a fast application", limited)
			}
		})
	}
}

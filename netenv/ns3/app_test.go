package ns3

import (
	"context"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/tcp"
)

type recs struct{ r []tcp.StateRecord }

func (o *recs) Observe(r *tcp.StateRecord) { o.r = append(o.r, *r) }

// TestAppRateEveryPhase: as natively (netenv's TestAppRateEveryPhase), the
// driver's 4 MB send buffer keeps a fast first phase from writing the
// whole transfer, so a slow second phase leaves in-flight below cwnd/2.
func TestAppRateEveryPhase(t *testing.T) {
	s := realSubject(t)
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
			cfg := netenv.Config{Seed: 1, Schedule: tc.sched, Flows: []netenv.Flow{{CCA: "TcpCubic", Bytes: 30_000_000}}, SACK: true}
			o := &recs{}
			res, err := s.Run(context.Background(), cfg, o)
			if err != nil {
				t.Fatal(err)
			}
			f := res.Flows[0]
			if !f.Done {
				t.Fatalf("transfer incomplete: %+v", f)
			}
			end := time.Duration(f.DoneAtS*1e9) - 200*time.Millisecond
			limited := 0
			for _, r := range o.r {
				if r.Time >= 1500*time.Millisecond && r.Time < min(3*time.Second, end) && r.InFlight < r.Cwnd/2 {
					limited++
				}
			}
			t.Logf("done at %.2f s; %d records with in-flight < cwnd/2 in [1.5 s, 3 s)", f.DoneAtS, limited)
			if (limited > 0) != tc.wantLimited {
				t.Errorf("%d application-limited records in [1.5 s, 3 s), want any: %v", limited, tc.wantLimited)
			}
		})
	}
}

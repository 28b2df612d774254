package ns3

import (
	"context"
	"slices"
	"sort"
	"testing"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv"
)

// TestCapabilitiesMatchTheDriver: the subject declares what the driver
// reports: its models, every base variable (each is seen away from zero
// in a lossy BBR run, so none is a constant the schema should leave out),
// no variables of its own; and the pacing rate is in bytes/s as natively
// (the driver prints bit/s: 8× too large otherwise).
func TestCapabilitiesMatchTheDriver(t *testing.T) {
	s := realSubject(t)
	caps := s.Capabilities()
	if !slices.Equal(caps.CCAs, s.CCAs()) || caps.Profiles || caps.Base != nil {
		t.Fatalf("capabilities %+v for models %v", caps, s.CCAs())
	}
	for _, m := range caps.CCAs {
		if len(caps.VarsOf(m)) != 0 {
			t.Errorf("%s declares variables %v: the driver reports none", m, caps.VarsOf(m))
		}
	}
	env := netenv.Env{Loss: 1e-2, BW: 10, Delay: 10, App: 10000, Buffer: 50}
	cfg := netenv.Config{Seed: 3, Schedule: netenv.Constant(env), SACK: true, Flows: []netenv.Flow{{CCA: "TcpBbr", Bytes: 2_000_000}}}
	var c collect
	if _, err := s.Run(context.Background(), cfg, &c); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var pacing []float64
	for _, r := range c.recs {
		if len(r.Vars) != 0 {
			t.Fatalf("record with variables %v", r.Vars)
		}
		for name, v := range map[string]bool{"cwnd": r.Cwnd > 0, "ssthresh": r.SSThresh > 0 && r.SSThresh < ccai.InfiniteSSThresh,
			"srtt": r.SRTT > 0, "rttvar": r.RTTVar > 0, "ca_state": r.CAState != 0, "prev_ca_state": r.PrevCAState != 0,
			"prior_cwnd": r.PriorCwnd > 0, "in_flight": r.InFlight > 0, "delivered": r.Delivered > 0, "rto": r.RTO > 0,
			"pacing_rate": r.PacingRate > 0, "time": r.Time > 0, "flow": true} {
			seen[name] = seen[name] || v
		}
		if r.PacingRate > 0 && r.Time.Seconds() > 1 {
			pacing = append(pacing, float64(r.PacingRate)*8/(env.BW*1e6))
		}
	}
	for _, v := range netenv.BaseVars {
		if !seen[v] {
			t.Errorf("base variable %s never set: declared but not reported", v)
		}
	}
	if len(pacing) == 0 {
		t.Fatal("no pacing rate after 1 s")
	}
	sort.Float64s(pacing)
	if med := pacing[len(pacing)/2]; med < 0.5 || med > 4 {
		t.Errorf("median pacing rate %.2f× the bottleneck: want bytes/s, about 1–3×", med)
	}
}

package gvisor

import (
	"testing"

	"github.com/actfuzz/actfuzz/netenv"
)

// TestTopologies: every topology of netenv runs on gVisor with its own
// links (a dumbbell's access links, a parking lot's bottlenecks in series),
// not silently as a single link.
func TestTopologies(t *testing.T) {
	env := netenv.Env{Loss: 1e-3, BW: 20, Delay: 10, App: 10000, Buffer: 50}
	const bytes = 400_000
	flows := []netenv.Flow{{CCA: "reno", Bytes: bytes}, {CCA: "cubic", Bytes: bytes}, {CCA: "reno", Bytes: bytes}}
	hashes := map[string]string{}
	for _, tc := range []struct {
		topo  string
		links int // links of the plan
	}{
		{netenv.TopoSingleLink, 2},
		{netenv.TopoDumbbell, 2 + 2*len(flows)},
		{netenv.TopoParkingLot, 2 * (len(flows) - 1)},
	} {
		t.Run(tc.topo, func(t *testing.T) {
			cfg := netenv.Config{Seed: 3, Schedule: netenv.Constant(env), Flows: flows, Topology: tc.topo, SACK: true, HashTrace: true}
			h := newHarness(&cfg, nil, hooks{})
			res, err := h.run(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if len(h.links) != tc.links {
				t.Fatalf("%d links, want %d", len(h.links), tc.links)
			}
			var done []float64
			for i, f := range res.Flows {
				if !f.Done || f.DeliveredBytes != bytes {
					t.Fatalf("flow %d incomplete: %+v", i, f)
				}
				done = append(done, f.DoneAtS)
			}
			t.Logf("completion %.3f s, drops %d, losses %d", done, res.Drops, res.Losses)
			if tc.topo == netenv.TopoParkingLot && done[0] <= done[1] && done[0] <= done[2] {
				t.Errorf("parking lot: the flow crossing both bottlenecks finished first (%v)", done)
			}
			hashes[tc.topo] = res.TraceSHA256
		})
	}
	if hashes[netenv.TopoSingleLink] == hashes[netenv.TopoDumbbell] || hashes[netenv.TopoSingleLink] == hashes[netenv.TopoParkingLot] {
		t.Errorf("a topology ran as the single link: %v", hashes)
	}
}

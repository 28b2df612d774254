package netenv_test

import (
	"testing"

	"github.com/actfuzz/actfuzz/netenv"
)

func TestTopologies(t *testing.T) {
	env := netenv.Env{Loss: 0, BW: 20, Delay: 10, App: 10000, Buffer: 50}
	flows := []netenv.Flow{{CCA: "reno", Bytes: 3_000_000}, {CCA: "reno", Bytes: 3_000_000}, {CCA: "reno", Bytes: 3_000_000}}
	for _, topo := range []string{netenv.TopoSingleLink, netenv.TopoDumbbell, netenv.TopoParkingLot} {
		cfg := netenv.Config{Seed: 1, Schedule: netenv.Constant(env), Flows: flows, Topology: topo, SACK: true}
		res, _ := run(t, cfg)
		var done []float64
		for i, f := range res.Flows {
			if !f.Done || f.DeliveredBytes != 3_000_000 {
				t.Fatalf("%s: flow %d incomplete: %+v", topo, i, f)
			}
			done = append(done, f.DoneAtS)
		}
		t.Logf("%s: completion times %.2f s, drops %d", topo, done, res.Drops)
		// Three flows share 20 Mbit/s: none can finish 3 MB before the
		// link alone would have carried its share plus the others'.
		alone := 3e6 * 8 / 20e6
		for i, d := range done {
			if d < alone {
				t.Errorf("%s: flow %d finished in %.2f s, faster than the bottleneck allows (%.2f s)", topo, i, d, alone)
			}
		}
		if topo == netenv.TopoParkingLot && done[0] <= done[1] && done[0] <= done[2] {
			t.Errorf("parking lot: the flow crossing both bottlenecks finished first (%v)", done)
		}
	}
}

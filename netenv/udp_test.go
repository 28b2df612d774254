package netenv

import (
	"context"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/netenv/sim"
)

func TestUDP4Run(t *testing.T) {
	topo := UDP4()
	res, err := RunTopology(context.Background(), TopoConfig{Topology: topo, Limits: sim.Limits{MaxTime: 11 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range res.Flows {
		want := topo.CBR[i].Count()
		if f.Sent != want || f.Received != want || f.Dropped != 0 || f.Reordered != 0 {
			t.Errorf("flow %d: %+v, want %d sent and received", i, f, want)
		}
	}
	if want := uint64(2399); topo.CBR[0].Count() != want {
		t.Errorf("flow 0 sends %d packets, want %d (every 3.75 ms from 1 s to 10 s)", topo.CBR[0].Count(), want)
	}
	// A hook that delays the first packet by a second reorders it.
	hook := func(from, to sim.NodeID, p *sim.Packet) (time.Duration, int16, bool) {
		return time.Second, 1, from == 0 && to == 2 && p.Seq == 0
	}
	res, err = RunTopology(context.Background(), TopoConfig{Topology: topo, Limits: sim.Limits{MaxTime: 11 * time.Second}, DelayHook: hook})
	if err != nil {
		t.Fatal(err)
	}
	if res.Flows[0].Reordered != 1 {
		t.Errorf("reordered = %d, want 1", res.Flows[0].Reordered)
	}
}

func TestTopologyComponents(t *testing.T) {
	topo := UDP4()
	c, err := topo.Components(false)
	if err != nil {
		t.Fatal(err)
	}
	// Flow 0 (n0→n2) feeds sink 2; flow 1 (n3→n2→n1) feeds link 2→1,
	// which feeds sink 1.
	idx := map[string]int{}
	for i, n := range c.Names {
		idx[n] = i
	}
	in := func(to string) []int { return c.In[idx[to]] }
	if got := in("sink2"); len(got) != 1 || got[0] != idx["link0-2"] {
		t.Errorf("sink2 is fed by %v", got)
	}
	if got := in("link2-1"); len(got) != 1 || got[0] != idx["link3-2"] {
		t.Errorf("link2-1 is fed by %v", got)
	}
	if got := in("sink1"); len(got) != 1 || got[0] != idx["link2-1"] {
		t.Errorf("sink1 is fed by %v", got)
	}
	n, err := topo.Components(true)
	if err != nil || n.N != 4 || len(n.In[2]) != 2 {
		t.Errorf("node components: %+v, %v", n, err)
	}
	bad := topo
	bad.CBR = append(bad.CBR[:0:0], CBRFlow{Src: 0, Dst: 0, PacketBytes: 1, Rate: 1, Stop: time.Second})
	if err := bad.Validate(); err == nil {
		t.Error("a flow from a node to itself is accepted")
	}
}

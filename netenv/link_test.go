package netenv

import (
	"slices"
	"testing"
)

// TestPlanTopology pins the link order of each topology: a link's position
// selects its random streams, so every subject must build the same order.
func TestPlanTopology(t *testing.T) {
	for _, tc := range []struct {
		topo     string
		flows    int
		kinds    []LinkKind
		fwd, rev [][]int
	}{
		{TopoSingleLink, 2, []LinkKind{LinkData, LinkAck}, [][]int{{0}, {0}}, [][]int{{1}, {1}}},
		{TopoDumbbell, 2, []LinkKind{LinkData, LinkAck, LinkAccessData, LinkAccessAck, LinkAccessData, LinkAccessAck},
			[][]int{{2, 0}, {4, 0}}, [][]int{{1, 3}, {1, 5}}},
		{TopoParkingLot, 3, []LinkKind{LinkData, LinkAck, LinkData, LinkAck},
			[][]int{{0, 2}, {0}, {2}}, [][]int{{3, 1}, {1}, {3}}},
		{TopoParkingLot, 1, []LinkKind{LinkData, LinkAck}, [][]int{{0}}, [][]int{{1}}},
	} {
		lp := PlanTopology(tc.topo, tc.flows)
		var kinds []LinkKind
		for _, l := range lp.Links {
			kinds = append(kinds, l.Kind)
		}
		eq := func(a, b [][]int) bool { return slices.EqualFunc(a, b, slices.Equal[[]int]) }
		if !slices.Equal(kinds, tc.kinds) || !eq(lp.Fwd, tc.fwd) || !eq(lp.Rev, tc.rev) {
			t.Errorf("%s/%d: kinds %v fwd %v rev %v, want %v %v %v", tc.topo, tc.flows, kinds, lp.Fwd, lp.Rev, tc.kinds, tc.fwd, tc.rev)
		}
	}
}

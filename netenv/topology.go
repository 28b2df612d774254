package netenv

// Topology names.
const (
	TopoSingleLink = "single-link"
	TopoDumbbell   = "dumbbell"
	TopoParkingLot = "parking-lot"
)

// Topologies:
//   - single-link: every flow crosses one bottleneck (ACT §4.1's virtual
//     link); its reverse direction carries the ACKs.
//   - dumbbell: as single-link, but each flow first crosses an access link
//     of its own (accessSpeedup × the bottleneck rate, no delay, loss or
//     random queuing), so flows' packets are spaced by their access links
//     before they meet at the bottleneck.
//   - parking-lot: max(1, m−1) bottlenecks in series, all with the same
//     environment; flow 0 crosses every one of them and flow i ≥ 1 crosses
//     bottleneck i only, as cross traffic.

// LinkSpec is one link of a plan.
type LinkSpec struct {
	Kind LinkKind
	// Hooked links take the configuration's DelayHook (the bottleneck of
	// the symbolic back-end's window).
	Hooked bool
}

// LinkPlan is a topology for m flows: its links in creation order (a
// link's position is its Index, which selects its random streams) and, per
// flow, the links its data and its ACKs cross, in order. Every subject
// builds its links from the plan, so they share the random streams.
type LinkPlan struct {
	Links    []LinkSpec
	Fwd, Rev [][]int // per flow: indices into Links
}

// PlanTopology returns the plan of topology (TopoSingleLink when empty)
// for flows flows.
func PlanTopology(topology string, flows int) LinkPlan {
	var lp LinkPlan
	add := func(k LinkKind, hooked bool) int {
		lp.Links = append(lp.Links, LinkSpec{Kind: k, Hooked: hooked})
		return len(lp.Links) - 1
	}
	lp.Fwd = make([][]int, flows)
	lp.Rev = make([][]int, flows)
	switch topology {
	case TopoParkingLot:
		nb := max(1, flows-1)
		fwd, rev := make([]int, nb), make([]int, nb)
		for j := range nb {
			fwd[j], rev[j] = add(LinkData, j == 0), add(LinkAck, j == 0)
		}
		for i := range flows {
			if i == 0 {
				lp.Fwd[0] = fwd
				for j := nb - 1; j >= 0; j-- {
					lp.Rev[0] = append(lp.Rev[0], rev[j])
				}
				continue
			}
			lp.Fwd[i] = []int{fwd[i-1]}
			lp.Rev[i] = []int{rev[i-1]}
		}
	case TopoDumbbell:
		fwd, rev := add(LinkData, true), add(LinkAck, true)
		for i := range flows {
			afwd, arev := add(LinkAccessData, false), add(LinkAccessAck, false)
			lp.Fwd[i] = []int{afwd, fwd}
			lp.Rev[i] = []int{rev, arev}
		}
	default:
		fwd, rev := add(LinkData, true), add(LinkAck, true)
		for i := range flows {
			lp.Fwd[i] = []int{fwd}
			lp.Rev[i] = []int{rev}
		}
	}
	return lp
}

// Paths maps the plan's per-flow paths onto a subject's links, given in
// plan order.
func Paths[T any](lp LinkPlan, links []T) (fwd, rev [][]T) {
	pick := func(idx [][]int) [][]T {
		out := make([][]T, len(idx))
		for i, path := range idx {
			for _, j := range path {
				out[i] = append(out[i], links[j])
			}
		}
		return out
	}
	return pick(lp.Fwd), pick(lp.Rev)
}

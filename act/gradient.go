package act

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// profile is the mapping p → mean state S̄ sampled by step 1 (ACT §3,
// "profile the mapping from P to S"). Gradients dS̄_j/dp_i are estimated
// by local linear regression (least squares with gonum) over the nearest
// samples in normalized P.
type profile struct {
	dimP, dimS int
	p          [][]float64
	s          [][]float64
	// index finds the nearest samples (nearest.go); near is its scratch.
	index nearIndex
	near  nearSet
}

// newProfile returns the empty profile of a campaign, whose samples are
// indexed for nearest-neighbour queries as they come.
func newProfile(dimP, dimS int) *profile {
	return &profile{dimP: dimP, dimS: dimS, index: nearIndex{block: nearBlock}}
}

// gradNeighbours is how many nearest step-1 samples fit the local plane.
const gradNeighbours = 48

func (pr *profile) add(p, s []float64) {
	pr.p = append(pr.p, slices.Clone(p))
	pr.s = append(pr.s, slices.Clone(s))
}

// signs returns sign(dS̄_j/dp_i) at pc for every i: +1, −1 or 0 when the
// fit is inconclusive (too few samples, or a coefficient within noise).
func (pr *profile) signs(pc []float64, j int, out []int) []int {
	out = out[:0]
	n := len(pr.p)
	need := pr.dimP + 2
	if n < need || j >= pr.dimS {
		for i := 0; i < pr.dimP; i++ {
			out = append(out, 0)
		}
		return out
	}
	k := min(gradNeighbours, n)
	near := pr.nearest(pc, k)
	x := mat.NewDense(k, pr.dimP+1, nil)
	y := mat.NewVecDense(k, nil)
	var mean float64
	for r := 0; r < k; r++ {
		c := near[r]
		x.Set(r, 0, 1)
		for q := 0; q < pr.dimP; q++ {
			x.Set(r, q+1, pr.p[c][q]-pc[q])
		}
		v := pr.s[c][j]
		if math.IsNaN(v) || math.IsInf(v, 0) {
			v = 0
		}
		y.SetVec(r, v)
		mean += math.Abs(v)
	}
	var beta mat.VecDense
	if err := beta.SolveVec(x, y); err != nil {
		for i := 0; i < pr.dimP; i++ {
			out = append(out, 0)
		}
		return out
	}
	scale := mean/float64(k) + 1e-9
	for i := 0; i < pr.dimP; i++ {
		b := beta.AtVec(i + 1)
		switch {
		case math.Abs(b) < 1e-3*scale || math.IsNaN(b):
			out = append(out, 0)
		case b > 0:
			out = append(out, 1)
		default:
			out = append(out, -1)
		}
	}
	return out
}

// nearest returns the indices of the k samples nearest to pc in
// (squared Euclidean distance, index) order: ties go to the earlier
// sample, as in a stable sort of all of them. A profile made with
// newProfile keeps its samples in k-d trees (nearest.go); a zero one (the
// directed step's, a few thousand samples rebuilt per query) scans them
// all, about 8 ns a sample (BenchmarkProfileNearest).
func (pr *profile) nearest(pc []float64, k int) []int {
	dim := pr.dimP
	if dim == 0 { // every sample at distance 0: the first k
		out := make([]int, min(k, len(pr.p)))
		for i := range out {
			out[i] = i
		}
		return out
	}
	pr.index.sync(pr.p, dim)
	s := &pr.near
	s.reset(k)
	pr.index.nearest(pc, s)
	h := s.h
	slices.SortFunc(h, func(a, b nearCand) int {
		if a.d != b.d {
			if a.d < b.d {
				return -1
			}
			return 1
		}
		return a.i - b.i
	})
	out := make([]int, len(h))
	for r, c := range h {
		out[r] = c.i
	}
	return out
}

// nearCand is sample i at squared distance d.
type nearCand struct {
	d float64
	i int
}

// nearHeap keeps the k nearest samples seen, the farthest at the root
// ((distance, index) order).
type nearHeap []nearCand

func (h nearHeap) Len() int { return len(h) }
func (h nearHeap) Less(i, j int) bool {
	if h[i].d != h[j].d {
		return h[i].d > h[j].d
	}
	return h[i].i > h[j].i
}
func (h nearHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *nearHeap) Push(x any)   { *h = append(*h, x.(nearCand)) }
func (h *nearHeap) Pop() any {
	x := (*h)[len(*h)-1]
	*h = (*h)[:len(*h)-1]
	return x
}

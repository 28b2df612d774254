package act

import (
	"container/heap"
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
	// flat is p[0], p[1], … in one slice: the nearest samples are
	// found by a scan of all of them, which reads 5 to 10 times faster
	// from one array than through a slice per sample.
	flat []float64
}

// gradNeighbours is how many nearest step-1 samples fit the local plane.
const gradNeighbours = 48

func (pr *profile) add(p, s []float64) {
	pr.p = append(pr.p, slices.Clone(p))
	pr.s = append(pr.s, slices.Clone(s))
}

// samples is flat, brought up to date with p (a checkpoint or the
// directed step sets p at once).
func (pr *profile) samples(dim int) []float64 {
	if len(pr.flat) > len(pr.p)*dim {
		pr.flat = pr.flat[:0]
	}
	for _, x := range pr.p[len(pr.flat)/dim:] {
		pr.flat = append(pr.flat, x[:dim]...)
	}
	return pr.flat
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
// sample, as in a stable sort of all of them. The profile grows with every
// step-1 simulation (about half of a long campaign's), and sorting it all
// per gradient was most of an older campaign's coordinator; one scan that
// keeps k is 5 to 26 times faster at 1,000 to 100,000 samples
// (BenchmarkProfileNearest), and still linear: about 8 ns per sample. A
// k-d tree (gonum's spatial/kdtree) was slower than the scan with 7 varied
// parameters and 48 neighbours: it visits most of the tree.
func (pr *profile) nearest(pc []float64, k int) []int {
	h := make(nearHeap, 0, k)
	// worst is the distance a sample must beat: a later sample at the
	// same distance as the farthest kept comes after it.
	worst := math.Inf(1)
	keep := func(d float64, i int) {
		if len(h) < k {
			heap.Push(&h, nearCand{d, i})
		} else {
			h[0] = nearCand{d, i}
			heap.Fix(&h, 0)
		}
		if len(h) == k {
			worst = h[0].d
		}
	}
	dim := pr.dimP
	if dim == 0 { // every sample at distance 0: the first k
		out := make([]int, min(k, len(pr.p)))
		for i := range out {
			out[i] = i
		}
		return out
	}
	pc = pc[:dim]
	flat := pr.samples(dim)
	n, i := len(flat)/dim, 0
	// Four samples at a time: each distance is summed in dimension order
	// (the same float64 as one at a time), and the four sums do not wait
	// for each other's additions.
	for ; i+4 <= n; i += 4 {
		a, b, c, e := flat[i*dim:(i+1)*dim], flat[(i+1)*dim:(i+2)*dim], flat[(i+2)*dim:(i+3)*dim], flat[(i+3)*dim:(i+4)*dim]
		a, b, c, e = a[:len(pc)], b[:len(pc)], c[:len(pc)], e[:len(pc)]
		var da, db, dc, de float64
		for q, x := range pc {
			ya, yb, yc, ye := a[q]-x, b[q]-x, c[q]-x, e[q]-x
			da += ya * ya
			db += yb * yb
			dc += yc * yc
			de += ye * ye
		}
		// In order: a sample kept raises the bar for the next.
		if da < worst || len(h) < k {
			keep(da, i)
		}
		if db < worst || len(h) < k {
			keep(db, i+1)
		}
		if dc < worst || len(h) < k {
			keep(dc, i+2)
		}
		if de < worst || len(h) < k {
			keep(de, i+3)
		}
	}
	for ; i < n; i++ {
		var d float64
		for q, x := range flat[i*dim : (i+1)*dim] {
			x -= pc[q]
			d += x * x
		}
		if d < worst || len(h) < k {
			keep(d, i)
		}
	}
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

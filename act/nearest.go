package act

import (
	"container/heap"
	"math"
	"slices"
)

// The k nearest samples of a profile that grows all campaign long.
//
// The profile gains a sample with every step-1 simulation (under the
// adaptive schedule 1,577 of the bench campaign's first 15,000, 42,651 of
// 100,000 with 1 MB flows; 30% under the paper's), and nearly every
// configuration of steps 2 and 3 asks a gradient for its gradNeighbours
// nearest samples. A scan of all of them costs about 8 ns a sample
// (BenchmarkProfileNearest: 0.76–0.86 ms at 100,000 samples, 7.6–11.6 ms
// at a million; the trees below take 0.13 and 0.31–0.37 ms). 100 worker
// cores run about 2,200 of the bench campaign's 45 ms simulations a
// second, so even at a tenth of them the profile passes 100,000 samples
// within 8 minutes, and a million within 8 hours: a scan would then cost
// 17–26% of the simulation it helps select, and the coordinator's target
// is 1% for all its work.
// So samples are kept in k-d trees (Friedman, Bentley and Finkel, ACM TOMS
// 3(3), 1977), as many as the bits of the count of full blocks (Bentley
// and Saxe's logarithmic method, J. Algorithms 1(4), 1980): the newest
// samples, fewer than a block, are scanned; a full block becomes a tree,
// and two trees of one size become one, rebuilt over both, so each sample
// is rebuilt about log2(n/block) times (BenchmarkProfileIndex: 2–4 µs a
// sample in all) and a query searches at most that many trees.
//
// Why not gonum's spatial/kdtree: tried before, it was slower than the
// scan at these sizes; among samples at one distance its NKeeper keeps the
// one found later in the tree's order, where the campaign's choices need
// the earlier sample; and its Insert does not rebalance.
//
// The answer is exact, the scan's to the bit: a sample's distance is
// summed over the dimensions in order wherever it is computed, and a
// subtree is skipped only when the distance from pc to its cell, summed
// the same way from the splits crossed to reach it, is greater than the
// k-th kept distance (see visit). Ties go to the earlier sample, as in a
// stable sort: a candidate is kept when (distance, index) is below the
// farthest kept.

// nearBlock is the number of the newest samples scanned before they
// become a tree: at a thousand samples a tree and a scan cost the same
// (BenchmarkProfileNearest), about 27 µs.
const nearBlock = 1024

// nearLeaf is the most samples a leaf of a tree holds.
const nearLeaf = 24

// nearIndex keeps the first n samples of a profile (dim coordinates
// each) for nearest-neighbour queries: trees over consecutive ranges of
// samples, then the tail, the newest, flat. A zero nearIndex with block 0
// never builds trees: it scans.
type nearIndex struct {
	dim   int
	block int // samples scanned at most before they become a tree (0: always scan)
	n     int // samples indexed: trees, then tail
	trees []*kdTree
	tail  []float64 // the samples after the last tree's, dim each
	gaps  []float64 // a query's scratch
}

// kdTree is a k-d tree over the samples [first, first+len(ids)) of a
// profile, their coordinates copied in the tree's order.
type kdTree struct {
	first int
	pts   []float64 // dim coordinates per sample, in tree order
	ids   []int32   // the profile index of each, in tree order
	nodes []kdNode
}

// kdNode holds the samples [start, end) of its tree; an inner node's
// children are left and left+1, split at split in coordinate axis (left
// holds those at or below it, in the order of the median selection).
type kdNode struct {
	start, end int32
	left       int32 // 0: a leaf (the root is node 0, never a child)
	axis       int32
	split      float64
}

// nearSet is the k nearest candidates seen, the farthest at the root.
type nearSet struct {
	h nearHeap
	k int
	// worstD and worstI are the farthest kept (Inf until k are kept).
	worstD float64
	worstI int
}

func (s *nearSet) reset(k int) {
	s.h, s.k, s.worstD, s.worstI = s.h[:0], k, math.Inf(1), math.MaxInt
}

// beats reports whether sample i at distance d comes before the farthest
// kept, or there is room for it.
func (s *nearSet) beats(d float64, i int) bool {
	return d < s.worstD || d == s.worstD && i < s.worstI || len(s.h) < s.k
}

func (s *nearSet) keep(d float64, i int) {
	if len(s.h) < s.k {
		heap.Push(&s.h, nearCand{d, i})
	} else {
		s.h[0] = nearCand{d, i}
		heap.Fix(&s.h, 0)
	}
	if len(s.h) == s.k {
		s.worstD, s.worstI = s.h[0].d, s.h[0].i
	}
}

// scan offers the samples of flat (dim coordinates each) to s; sample r is
// index ids[r], or first+r without ids.
func (s *nearSet) scan(flat []float64, dim int, pc []float64, ids []int32, first int) {
	pc = pc[:dim]
	n, r := len(flat)/dim, 0
	id := func(r int) int {
		if ids != nil {
			return int(ids[r])
		}
		return first + r
	}
	// Four samples at a time: each distance is summed in dimension order
	// (the same float64 as one at a time), and the four sums do not wait
	// for each other's additions. Each square is rounded before it is
	// added (the conversion forbids a fused multiply-add, which the
	// compiler emits on arm64, ppc64le and s390x), so that distances, and
	// the nearest samples, are the same on every machine.
	for ; r+4 <= n; r += 4 {
		a, b, c, e := flat[r*dim:(r+1)*dim], flat[(r+1)*dim:(r+2)*dim], flat[(r+2)*dim:(r+3)*dim], flat[(r+3)*dim:(r+4)*dim]
		a, b, c, e = a[:len(pc)], b[:len(pc)], c[:len(pc)], e[:len(pc)]
		var da, db, dc, de float64
		for q, x := range pc {
			ya, yb, yc, ye := a[q]-x, b[q]-x, c[q]-x, e[q]-x
			da += float64(ya * ya)
			db += float64(yb * yb)
			dc += float64(yc * yc)
			de += float64(ye * ye)
		}
		// In order: a sample kept raises the bar for the next.
		if i := id(r); s.beats(da, i) {
			s.keep(da, i)
		}
		if i := id(r + 1); s.beats(db, i) {
			s.keep(db, i)
		}
		if i := id(r + 2); s.beats(dc, i) {
			s.keep(dc, i)
		}
		if i := id(r + 3); s.beats(de, i) {
			s.keep(de, i)
		}
	}
	for ; r < n; r++ {
		var d float64
		for q, x := range flat[r*dim : (r+1)*dim] {
			x -= pc[q]
			d += float64(x * x)
		}
		if i := id(r); s.beats(d, i) {
			s.keep(d, i)
		}
	}
}

// sync brings the index up to the samples p: it adds those after the
// first n. Samples are only ever appended to a profile, or the profile
// replaced at once before its first query (a checkpoint's); a profile
// shorter than the index is such a replacement, and the index starts
// again.
func (x *nearIndex) sync(p [][]float64, dim int) {
	if x.n > len(p) || x.dim != dim {
		x.dim = dim
		x.trees, x.tail, x.n = nil, x.tail[:0], 0
	}
	for _, s := range p[x.n:] {
		x.tail = append(x.tail, s[:x.dim]...)
		x.n++
		if x.block > 0 && len(x.tail) == x.block*x.dim {
			x.addBlock()
		}
	}
}

// addBlock makes the tail a tree, then merges the last two trees while
// they have one size: the sizes are then the bits of n/block, largest
// first.
func (x *nearIndex) addBlock() {
	first := x.n - len(x.tail)/x.dim
	x.trees = append(x.trees, buildKD(x.dim, first, slices.Clone(x.tail), nil))
	x.tail = x.tail[:0]
	for len(x.trees) >= 2 {
		a, b := x.trees[len(x.trees)-2], x.trees[len(x.trees)-1]
		if len(a.ids) != len(b.ids) {
			break
		}
		x.trees = append(x.trees[:len(x.trees)-2], mergeKD(x.dim, a, b))
	}
}

// mergeKD builds one tree over the samples of a and b (a's range just
// before b's).
func mergeKD(dim int, a, b *kdTree) *kdTree {
	n := len(a.ids) + len(b.ids)
	pts := make([]float64, n*dim)
	for _, tr := range []*kdTree{a, b} {
		for r, id := range tr.ids {
			copy(pts[(int(id)-a.first)*dim:], tr.pts[r*dim:(r+1)*dim])
		}
	}
	return buildKD(dim, a.first, pts, nil)
}

// nearest offers every indexed sample to s (reset to k beforehand).
func (x *nearIndex) nearest(pc []float64, s *nearSet) {
	if len(x.gaps) != x.dim {
		x.gaps = make([]float64, x.dim)
	}
	for _, t := range x.trees { // the largest first: its samples set the bar
		t.search(x.dim, pc, x.gaps, s)
	}
	s.scan(x.tail, x.dim, pc, nil, x.n-len(x.tail)/x.dim)
}

// buildKD builds a tree over the samples flat (dim coordinates each, the
// first one profile index first); the tree keeps flat, reordered. ids, if
// given, is scratch of len(flat)/dim.
func buildKD(dim, first int, flat []float64, ids []int32) *kdTree {
	n := len(flat) / dim
	t := &kdTree{first: first, pts: flat}
	if ids == nil {
		ids = make([]int32, n)
	}
	for r := range ids {
		ids[r] = int32(first + r)
	}
	t.ids = ids
	// Node count: a complete binary split of n into leaves of nearLeaf.
	t.nodes = make([]kdNode, 1, 2*(n/nearLeaf+1))
	t.nodes[0] = kdNode{start: 0, end: int32(n)}
	box := make([]float64, 2*dim)
	// Breadth first, so that the children of a node are adjacent.
	for i := 0; i < len(t.nodes); i++ {
		nd := &t.nodes[i]
		s, e := int(nd.start), int(nd.end)
		if e-s <= nearLeaf {
			continue
		}
		box = t.boxOf(dim, s, e, box[:0])
		lo, hi := box[:dim], box[dim:]
		axis, spread := 0, -1.0
		for q := range dim {
			if w := hi[q] - lo[q]; w > spread {
				axis, spread = q, w
			}
		}
		if spread <= 0 {
			continue // every sample the same point: a leaf however many
		}
		m := (s + e) / 2
		t.selectNth(dim, s, e, m, axis)
		nd.axis = int32(axis)
		nd.split = t.pts[m*dim+axis]
		nd.left = int32(len(t.nodes))
		t.nodes = append(t.nodes, kdNode{start: int32(s), end: int32(m)}, kdNode{start: int32(m), end: int32(e)})
	}
	return t
}

// boxOf appends the bounding box of samples [s, e) to box.
func (t *kdTree) boxOf(dim, s, e int, box []float64) []float64 {
	at := len(box)
	box = append(box, t.pts[s*dim:(s+1)*dim]...)
	box = append(box, t.pts[s*dim:(s+1)*dim]...)
	lo, hi := box[at:at+dim], box[at+dim:at+2*dim]
	for r := s + 1; r < e; r++ {
		for q, v := range t.pts[r*dim : (r+1)*dim] {
			lo[q] = min(lo[q], v)
			hi[q] = max(hi[q], v)
		}
	}
	return box
}

// swap exchanges samples r and u of the tree.
func (t *kdTree) swap(dim, r, u int) {
	t.ids[r], t.ids[u] = t.ids[u], t.ids[r]
	a, b := t.pts[r*dim:(r+1)*dim], t.pts[u*dim:(u+1)*dim]
	for q := range a {
		a[q], b[q] = b[q], a[q]
	}
}

// selectNth reorders samples [s, e) so that sample m has the coordinate
// axis it would have sorted, those before it no greater and those after
// no smaller (Hoare's FIND, with the median of three as pivot).
func (t *kdTree) selectNth(dim, s, e, m, axis int) {
	at := func(r int) float64 { return t.pts[r*dim+axis] }
	lo, hi := s, e-1
	for hi > lo {
		mid := lo + (hi-lo)/2
		// Median of three to position mid.
		if at(mid) < at(lo) {
			t.swap(dim, mid, lo)
		}
		if at(hi) < at(lo) {
			t.swap(dim, hi, lo)
		}
		if at(hi) < at(mid) {
			t.swap(dim, hi, mid)
		}
		pivot := at(mid)
		i, j := lo, hi
		for i <= j {
			for at(i) < pivot {
				i++
			}
			for at(j) > pivot {
				j--
			}
			if i <= j {
				t.swap(dim, i, j)
				i++
				j--
			}
		}
		switch {
		case m <= j:
			hi = j
		case m >= i:
			lo = i
		default:
			return
		}
	}
}

// search offers to s the samples of t that can beat its farthest kept.
// gaps is scratch of dim zeros, and zeros again on return.
func (t *kdTree) search(dim int, pc, gaps []float64, s *nearSet) {
	t.visit(0, dim, pc, gaps, s)
}

// visit searches node i, whose samples are at least gaps[q] from pc in
// each coordinate q: the splits crossed on the way from the root bound
// the cell they lie in (Friedman, Bentley and Finkel, ACM TOMS 3(3),
// 1977), with no box to read per node.
func (t *kdTree) visit(i, dim int, pc, gaps []float64, s *nearSet) {
	nd := t.nodes[i]
	if nd.left == 0 {
		st, en := int(nd.start), int(nd.end)
		s.scan(t.pts[st*dim:en*dim], dim, pc, t.ids[st:en], 0)
		return
	}
	// The left child's samples are at or below the split, the right
	// child's at or above it.
	diff := pc[nd.axis] - nd.split
	near, far := nd.left, nd.left+1
	if diff > 0 {
		near, far = far, near
	}
	t.visit(int(near), dim, pc, gaps, s)
	// A sample x beyond the split is as far as the split or farther in
	// this coordinate: |x−c| ≥ |split−c| holds after rounding, since
	// rounding to nearest is monotone (and fl(c−x) = −fl(x−c)).
	old := gaps[nd.axis]
	gaps[nd.axis] = max(old, math.Abs(diff))
	if len(s.h) < s.k || bound(gaps, dim) <= s.worstD {
		t.visit(int(far), dim, pc, gaps, s)
	}
	gaps[nd.axis] = old
}

// bound is the squared distance of the gaps, summed in dimension order
// and rounded as a sample's distance is (scan): no sample of the cell is
// nearer. A cell at
// exactly the k-th distance is searched, since a sample in it could tie
// and come earlier.
func bound(gaps []float64, dim int) float64 {
	var d float64
	for _, g := range gaps[:dim] {
		d += float64(g * g)
	}
	return d
}

package act

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// nearestBySort is the k nearest samples by sorting them all (what
// profile.signs did before the k-d tree): the reference.
func nearestBySort(p [][]float64, pc []float64, k int) []int {
	type cand struct {
		d float64
		i int
	}
	cands := make([]cand, len(p))
	for i, x := range p {
		var d float64
		for q := range x {
			v := x[q] - pc[q]
			d += v * v
		}
		cands[i] = cand{d, i}
	}
	slices.SortFunc(cands, func(a, b cand) int {
		if a.d != b.d {
			if a.d < b.d {
				return -1
			}
			return 1
		}
		return a.i - b.i
	})
	out := make([]int, k)
	for r := range out {
		out[r] = cands[r].i
	}
	return out
}

// profileSample draws a normalized environment; with levels > 0 each
// coordinate takes one of levels values, so that many samples tie.
func profileSample(rng *rand.Rand, dim, levels int) []float64 {
	x := make([]float64, dim)
	for q := range x {
		if levels > 0 {
			x[q] = float64(rng.IntN(levels)) / float64(levels)
		} else {
			x[q] = rng.Float64()
		}
	}
	return x
}

// The index finds the samples the full sort finds, in its order, ties
// included, as the profile grows between queries: scanning them all
// (block 0, the directed step's profile), and in k-d trees built from
// blocks of a few samples (so that many trees are built and merged) or of
// the campaign's nearBlock.
func TestProfileNearest(t *testing.T) {
	for _, tc := range []struct {
		n, dim, levels, k int
	}{
		{60, 2, 0, 48},
		{500, 5, 0, 48},
		{3000, 7, 0, 48},
		{800, 3, 3, 48}, // 27 distinct points: ties everywhere
		{800, 6, 2, 48},
		{48, 4, 0, 48}, // k = n
		{2000, 1, 5, 7},
		{100, 0, 0, 48}, // nothing varied
		{5000, 7, 4, 48},
		{3000, 2, 0, 1},
	} {
		for _, block := range []int{0, 1, 5, 64, nearBlock} {
			t.Run(fmt.Sprintf("n%d-dim%d-levels%d-k%d-block%d", tc.n, tc.dim, tc.levels, tc.k, block), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(tc.n), uint64(tc.dim*10+tc.levels)))
				pr := &profile{dimP: tc.dim, dimS: 2, index: nearIndex{block: block}}
				var queries int
				for i := range tc.n {
					p := profileSample(rng, tc.dim, tc.levels)
					s := []float64{rng.Float64(), rng.Float64()}
					pr.add(p, s)
					// Every time while there are few, one in ten after.
					if i+1 < tc.k || i+1 > tc.k+20 && rng.IntN(10) != 0 && i+1 < tc.n {
						continue
					}
					queries++
					pc := profileSample(rng, tc.dim, tc.levels)
					want := nearestBySort(pr.p, pc, tc.k)
					if got := pr.nearest(pc, tc.k); !slices.Equal(got, want) {
						t.Fatalf("%d samples: index %v, sort %v", i+1, got, want)
					}
				}
				if queries < min(3, tc.n-tc.k+1) {
					t.Fatalf("only %d queries", queries)
				}
				if block > 0 && tc.dim > 0 && tc.n >= 2*block {
					sizes := 0
					for _, tr := range pr.index.trees {
						sizes += len(tr.ids)
					}
					if len(pr.index.trees) == 0 || sizes != tc.n/block*block {
						t.Fatalf("%d trees holding %d samples, want %d", len(pr.index.trees), sizes, tc.n/block*block)
					}
				}
			})
		}
	}
}

// A profile replaced at once (a checkpoint's, before its first query) is
// indexed again from its first sample.
func TestProfileNearestReplaced(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	pr := &profile{dimP: 3, dimS: 1, index: nearIndex{block: 8}}
	for range 100 {
		pr.add(profileSample(rng, 3, 0), []float64{0})
	}
	pc := profileSample(rng, 3, 0)
	pr.nearest(pc, 5)
	other := &profile{dimP: 3, dimS: 1}
	for range 60 {
		other.add(profileSample(rng, 3, 0), []float64{0})
	}
	pr.p, pr.s = other.p, other.s
	if got, want := pr.nearest(pc, 5), nearestBySort(pr.p, pc, 5); !slices.Equal(got, want) {
		t.Fatalf("after the replacement: %v, want %v", got, want)
	}
}

// BenchmarkProfileNearest finds the gradNeighbours nearest samples of a
// profile of n step-1 simulations (7 varied parameters, uniform in the
// normalized P as step 1 draws them) by the full sort (what the first
// version did), by the scan that keeps the nearest (the directed step's
// profile) and by the campaign's k-d trees, built before the timing.
//
//	go test ./act -run '^$' -bench ProfileNearest
func BenchmarkProfileNearest(b *testing.B) {
	for _, n := range []int{1000, 15000, 100000, 1000000} {
		rng := rand.New(rand.NewPCG(1, uint64(n)))
		scan := &profile{dimP: 7, dimS: 1}
		for range n {
			scan.add(profileSample(rng, 7, 0), []float64{0})
		}
		trees := newProfile(7, 1)
		trees.p, trees.s = scan.p, scan.s
		trees.nearest(profileSample(rng, 7, 0), gradNeighbours)
		for _, m := range []struct {
			name string
			f    func(pc []float64) []int
		}{
			{"sort", func(pc []float64) []int { return nearestBySort(scan.p, pc, gradNeighbours) }},
			{"scan", func(pc []float64) []int { return scan.nearest(pc, gradNeighbours) }},
			{"trees", func(pc []float64) []int { return trees.nearest(pc, gradNeighbours) }},
		} {
			if m.name == "sort" && n > 100000 {
				continue
			}
			b.Run(fmt.Sprintf("%s/n=%d", m.name, n), func(b *testing.B) {
				for b.Loop() {
					m.f(profileSample(rng, 7, 0))
				}
			})
		}
	}
}

// BenchmarkProfileIndex is the cost of indexing a profile's samples as they
// come (each a block's scan, then about log2(n/nearBlock) rebuilds), per
// sample, for n samples.
//
//	go test ./act -run '^$' -bench ProfileIndex
func BenchmarkProfileIndex(b *testing.B) {
	for _, n := range []int{100000, 1000000} {
		rng := rand.New(rand.NewPCG(2, uint64(n)))
		pr := &profile{dimP: 7, dimS: 1}
		for range n {
			pr.add(profileSample(rng, 7, 0), []float64{0})
		}
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			for b.Loop() {
				x := nearIndex{block: nearBlock}
				x.sync(pr.p, 7)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/sample")
		})
	}
}

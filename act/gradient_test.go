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

// The scan finds the samples the full sort finds, in its order, ties
// included, as the profile grows between queries.
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
	} {
		t.Run(fmt.Sprintf("n%d-dim%d-levels%d", tc.n, tc.dim, tc.levels), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(tc.n), uint64(tc.dim*10+tc.levels)))
			pr := &profile{dimP: tc.dim, dimS: 2}
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
					t.Fatalf("%d samples: scan %v, sort %v", i+1, got, want)
				}
			}
			if queries < min(3, tc.n-tc.k+1) {
				t.Fatalf("only %d queries", queries)
			}
		})
	}
}

// BenchmarkProfileNearest finds the gradNeighbours nearest samples of a
// profile of n step-1 simulations (7 varied parameters) by the full sort
// (before) and by the scan that keeps the nearest.
//
//	go test ./act -run '^$' -bench ProfileNearest
func BenchmarkProfileNearest(b *testing.B) {
	for _, n := range []int{1000, 15000, 100000} {
		rng := rand.New(rand.NewPCG(1, uint64(n)))
		pr := &profile{dimP: 7, dimS: 1}
		for range n {
			pr.add(profileSample(rng, 7, 0), []float64{0})
		}
		for _, m := range []struct {
			name string
			f    func(pc []float64) []int
		}{
			{"sort", func(pc []float64) []int { return nearestBySort(pr.p, pc, gradNeighbours) }},
			{"scan", func(pc []float64) []int { return pr.nearest(pc, gradNeighbours) }},
		} {
			b.Run(fmt.Sprintf("%s/n=%d", m.name, n), func(b *testing.B) {
				for b.Loop() {
					m.f(profileSample(rng, 7, 0))
				}
			})
		}
	}
}

package coverage

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// modelLine is the brute-force line through R(star, 2^l) along j.
func (m *model) line(star []float64, j, l int) []uint32 {
	gs, _ := m.granules(star)
	rs := m.region(gs, l)
	set := map[uint32]bool{}
	for _, g := range m.states {
		r := m.region(g, l)
		same := true
		for i := range r {
			if i != j && r[i] != rs[i] {
				same = false
				break
			}
		}
		if same {
			set[uint32(r[j])] = true
		}
	}
	var out []uint32
	for p := range set {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// regionOf returns the level-l region vector of a state of the store.
func (m *model) regionOf(st []float64, l int) []int64 {
	g, ok := m.granules(st)
	if !ok {
		return nil
	}
	return m.region(g, l)
}

// filled returns a store and its model with n random states of sp, clustered
// so that lines are neither empty nor full.
func filled(t testing.TB, sp Space, n int, seed uint64) (*Store, *model) {
	rng := rand.New(rand.NewPCG(seed, 99))
	s := mustStore(t, sp, Options{Seed: seed})
	m := newModel(sp)
	for i := range n {
		st := randomState(rng, sp)
		if i%2 == 1 { // half of them near the low corner
			for j, v := range sp.Vars {
				if !v.Categorical() {
					st[j] = v.Value(rng.Int64N(max(1, v.Granules()/4)))
				}
			}
		}
		s.Add(st, Visit{Config: uint64(i), At: int64(i)})
		m.add(st)
	}
	return s, m
}

func TestLineAgainstModel(t *testing.T) {
	for _, tc := range []struct {
		name string
		sp   Space
		n    int
	}{
		{"small", smallSpace(), 200},
		{"default", DefaultSpace(), 3000},
	} {
		s, m := filled(t, tc.sp, tc.n, 1)
		rng := rand.New(rand.NewPCG(2, 3))
		s.initScratch()
		for range 60 {
			star := randomState(rng, tc.sp)
			if rng.IntN(2) == 0 { // a visited state's neighbourhood
				star = s.State(nthRef(s, rng.IntN(s.Len())))
			}
			s.ly.encode(star, s.scr.star)
			s.levelLines()
			for l := 0; l <= tc.sp.MaxLevel(); l++ {
				for j, v := range tc.sp.Vars {
					got := s.line(s.scr.star, j, l, nil)
					want := m.line(star, j, l)
					if !slices.Equal(got, want) {
						t.Fatalf("%s: line(%v, var %d, k=%d) = %v, want %v", tc.name, star, j, 1<<l, got, want)
					}
					if all := s.lineAt(j, l); (v.Categorical() || l < v.bits()) && !slices.Equal(all, want) {
						t.Fatalf("%s: levelLines(%v) var %d, k=%d = %v, want %v", tc.name, star, j, 1<<l, all, want)
					}
				}
			}
		}
	}
}

func TestRandomBracket(t *testing.T) {
	sp := smallSpace()
	s, m := filled(t, sp, 150, 4)
	rng := rand.New(rand.NewPCG(5, 6))
	found := 0
	for range 300 {
		star := randomState(rng, sp)
		for l := 0; l <= sp.MaxLevel(); l++ {
			k := 1 << l
			// Reference count of region pairs.
			var want uint64
			rs := m.regionOf(star, l)
			for j := range sp.Vars {
				var below, above uint64
				for _, p := range m.line(star, j, l) {
					switch {
					case int64(p) < rs[j]:
						below++
					case int64(p) > rs[j]:
						above++
					}
				}
				want += below * above
			}
			if got := s.Brackets(star, k); got != want {
				t.Fatalf("Brackets(%v, %d) = %d, want %d", star, k, got, want)
			}
			br, ok := s.RandomBracket(rng, star, k)
			if ok != (want > 0) {
				t.Fatalf("RandomBracket ok=%v with %d pairs", ok, want)
			}
			if !ok {
				continue
			}
			found++
			ra, rb := m.regionOf(s.State(br.A), l), m.regionOf(s.State(br.B), l)
			for i := range rs {
				if i == br.Var {
					if !(ra[i] < rs[i] && rs[i] < rb[i]) {
						t.Fatalf("var %d: %d < %d < %d fails", i, ra[i], rs[i], rb[i])
					}
				} else if ra[i] != rs[i] || rb[i] != rs[i] {
					t.Fatalf("bracket differs in var %d too: %v %v %v", i, ra, rs, rb)
				}
			}
		}
	}
	if found == 0 {
		t.Fatal("no bracket found at all")
	}
	if _, ok := s.RandomBracket(rng, []float64{99, 0, 0}, 1); ok {
		t.Error("bracket for a state outside S")
	}
}

// TestRandomBracketUniform checks that region pairs are drawn uniformly: with
// x positions {0, 1} below and {5, 6, 7} above s* = 3 there are 6 pairs.
func TestRandomBracketUniform(t *testing.T) {
	s := mustStore(t, smallSpace(), Options{})
	for _, x := range []float64{0, 1, 5, 6, 7} {
		s.Add([]float64{x, 4, 2}, Visit{Config: uint64(x)})
	}
	rng := rand.New(rand.NewPCG(7, 8))
	counts := map[[2]float64]int{}
	const n = 6000
	for range n {
		br, ok := s.RandomBracket(rng, []float64{3, 4, 2}, 1)
		if !ok || br.Var != 0 {
			t.Fatalf("bracket %v %v", br, ok)
		}
		counts[[2]float64{s.State(br.A)[0], s.State(br.B)[0]}]++
	}
	if len(counts) != 6 {
		t.Fatalf("pairs %v", counts)
	}
	for p, c := range counts {
		if c < n/6*8/10 || c > n/6*12/10 {
			t.Errorf("pair %v drawn %d times of %d", p, c, n)
		}
	}
}

func TestRandomNeighbour(t *testing.T) {
	sp := smallSpace()
	s, m := filled(t, sp, 150, 9)
	rng := rand.New(rand.NewPCG(10, 11))
	found := 0
	for range 300 {
		star := randomState(rng, sp)
		for l := 0; l <= sp.MaxLevel(); l++ {
			k := 1 << l
			rs := m.regionOf(star, l)
			var want uint64
			for j := range sp.Vars {
				for _, p := range m.line(star, j, l) {
					if int64(p) != rs[j] {
						want++
					}
				}
			}
			if got := s.Neighbours(star, k); got != want {
				t.Fatalf("Neighbours(%v, %d) = %d, want %d", star, k, got, want)
			}
			nb, ok := s.RandomNeighbour(rng, star, k)
			if ok != (want > 0) {
				t.Fatalf("RandomNeighbour ok=%v with %d", ok, want)
			}
			if !ok {
				continue
			}
			found++
			rc := m.regionOf(s.State(nb.Ref), l)
			for i := range rs {
				if (rc[i] != rs[i]) != (i == nb.Var) {
					t.Fatalf("neighbour %v of %v at k=%d differs wrongly (var %d)", rc, rs, k, nb.Var)
				}
			}
			if !slices.Contains(s.Pool(nb.Ref), nb.Visit) {
				t.Fatalf("visit %v not in pool %v", nb.Visit, s.Pool(nb.Ref))
			}
		}
	}
	if found == 0 {
		t.Fatal("no neighbour found at all")
	}
}

// TestDescendUniform checks that the state drawn inside a region is drawn
// among its visited sub-regions uniformly at each level.
func TestDescendUniform(t *testing.T) {
	s := mustStore(t, smallSpace(), Options{})
	// Region x∈[4,7] (k=4) at y=0, c=0: three states in two k=2 sub-regions.
	for _, x := range []float64{4, 6, 7} {
		s.Add([]float64{x, 0, 0}, Visit{})
	}
	s.Add([]float64{0, 0, 0}, Visit{}) // s* side
	rng := rand.New(rand.NewPCG(1, 1))
	counts := map[float64]int{}
	for range 4000 {
		nb, ok := s.RandomNeighbour(rng, []float64{0, 0, 0}, 4)
		if !ok {
			t.Fatal("no neighbour")
		}
		counts[s.State(nb.Ref)[0]]++
	}
	// x=4 is alone in its k=2 sub-region: about 1/2; x=6 and x=7 about 1/4.
	if c := counts[4]; c < 1800 || c > 2200 {
		t.Errorf("x=4 drawn %d of 4000 (%v)", c, counts)
	}
	if c := counts[6]; c < 800 || c > 1200 {
		t.Errorf("x=6 drawn %d of 4000 (%v)", c, counts)
	}
}

func TestSampleUnvisited(t *testing.T) {
	sp := smallSpace()
	s, m := filled(t, sp, 100, 12)
	rng := rand.New(rand.NewPCG(13, 14))
	for l := 0; l <= sp.MaxLevel(); l++ {
		k := 1 << l
		for range 200 {
			st, ok := s.SampleUnvisited(rng, k)
			if !ok {
				if s.VisitedRegions(k) != sp.Regions(k) {
					t.Fatalf("k=%d: not ok with %d of %d visited", k, s.VisitedRegions(k), sp.Regions(k))
				}
				break
			}
			if !sp.InRange(st) || s.Visited(st, k) || m.regions[l][gkey(m.regionOf(st, l))] {
				t.Fatalf("k=%d: sampled visited or invalid state %v", k, st)
			}
		}
	}
}

// TestSampleUnvisitedHighCoverage leaves one of 65,536 states unvisited, so
// that rejection mostly fails and rank selection must find it.
func TestSampleUnvisitedHighCoverage(t *testing.T) {
	sp := Space{Vars: []Var{{Name: "x", Max: 255, Step: 1}, {Name: "y", Max: 255, Step: 1}}}
	s := mustStore(t, sp, Options{})
	for x := range 256 {
		for y := range 256 {
			if x != 77 || y != 200 {
				s.Add([]float64{float64(x), float64(y)}, Visit{})
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5 {
		st, ok := s.SampleUnvisited(rng, 1)
		if !ok || st[0] != 77 || st[1] != 200 {
			t.Fatalf("SampleUnvisited = %v, %v", st, ok)
		}
	}
	// At k=2 region (38, 100) is visited through (76, 200) etc.: all visited.
	if _, ok := s.SampleUnvisited(rng, 2); ok {
		t.Error("SampleUnvisited found an unvisited region at k=2")
	}
	s.Add([]float64{77, 200}, Visit{})
	if _, ok := s.SampleUnvisited(rng, 1); ok {
		t.Error("SampleUnvisited with full coverage")
	}
}

// TestSampleUnvisitedUniform checks uniformity over the unvisited regions
// through both the rejection and the rank paths.
func TestSampleUnvisitedUniform(t *testing.T) {
	sp := Space{Vars: []Var{{Name: "x", Max: 7, Step: 1}, {Name: "c", Values: []string{"a", "b"}}}}
	s := mustStore(t, sp, Options{})
	for _, st := range [][]float64{{0, 0}, {1, 0}, {2, 1}, {7, 1}} {
		s.Add(st, Visit{})
	}
	rng := rand.New(rand.NewPCG(3, 4))
	counts := map[[2]float64]int{}
	const n = 12000
	for range n {
		st, _ := s.SampleUnvisited(rng, 1)
		counts[[2]float64{st[0], st[1]}]++
	}
	if len(counts) != 12 {
		t.Fatalf("%d distinct unvisited states drawn: %v", len(counts), counts)
	}
	for p, c := range counts {
		if c < n/12*8/10 || c > n/12*12/10 {
			t.Errorf("%v drawn %d of %d", p, c, n)
		}
	}
	// Rank path directly.
	c := map[uint64]int{}
	s.unvCache = unvisitedCache{}
	for range n {
		st := s.sampleByRank(rng, 0)
		c[uint64(st[0])*2+uint64(st[1])]++
	}
	if len(c) != 12 {
		t.Errorf("rank selection drew %d distinct states: %v", len(c), c)
	}
}

// TestSearch checks that SearchEstimation and SearchConcatenation stop at the
// first k of Methods 1 and 2 and return what the per-k queries would.
func TestSearch(t *testing.T) {
	for _, sp := range []Space{smallSpace(), DefaultSpace()} {
		s, m := filled(t, sp, 400, 21)
		rng := rand.New(rand.NewPCG(22, 23))
		for range 300 {
			star := randomState(rng, sp)
			if rng.IntN(2) == 0 {
				star = s.State(nthRef(s, rng.IntN(s.Len())))
				star[rng.IntN(sp.Dim())] = randomState(rng, sp)[0]
				if !sp.InRange(star) {
					continue
				}
			}
			wantK, wantInterp, wantNK := 0, false, 0
			for k := 1; k <= sp.MaxK(); k *= 2 {
				if wantK == 0 && s.Brackets(star, k) > 0 {
					wantK, wantInterp = k, true
				} else if wantK == 0 && s.Neighbours(star, k) > 0 {
					wantK = k
				}
				if wantNK == 0 && s.Neighbours(star, k) > 0 {
					wantNK = k
				}
			}
			est, ok := s.SearchEstimation(rng, star)
			if ok != (wantK > 0) || est.K != wantK || est.Interpolate != wantInterp {
				t.Fatalf("SearchEstimation(%v) = %+v, %v; want k=%d interpolate=%v", star, est, ok, wantK, wantInterp)
			}
			l, _ := sp.Level(max(est.K, 1))
			rs := m.regionOf(star, l)
			if ok && est.Interpolate {
				ra, rb := m.regionOf(s.State(est.Bracket.A), l), m.regionOf(s.State(est.Bracket.B), l)
				j := est.Bracket.Var
				if !(ra[j] < rs[j] && rs[j] < rb[j]) {
					t.Fatalf("bad bracket %v %v %v", ra, rs, rb)
				}
			}
			if ok && !est.Interpolate {
				rc := m.regionOf(s.State(est.Neighbour.Ref), l)
				for i := range rc {
					if (rc[i] != rs[i]) != (i == est.Neighbour.Var) {
						t.Fatalf("bad neighbour %v of %v", rc, rs)
					}
				}
			}
			k, nb, ok := s.SearchConcatenation(rng, star)
			if ok != (wantNK > 0) || k != wantNK {
				t.Fatalf("SearchConcatenation(%v) = %d, %v; want %d", star, k, ok, wantNK)
			}
			if ok && nb.Visit != (Visit{}) {
				t.Fatalf("SearchConcatenation drew a visit, %+v", nb.Visit)
			}
		}
	}
}

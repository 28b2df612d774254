package coverage

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestPaperExampleK512 is the example of ACT §2.1: S = (cwnd, ssthresh) in
// [1,1024]², at k = 512 four regions R1 … R4.
func TestPaperExampleK512(t *testing.T) {
	s := mustStore(t, Space{Vars: DefaultSpace().Vars[:2]}, Options{})
	for i, st := range [][]float64{{1, 1}, {512, 512}, {513, 1}, {1, 513}, {1024, 1024}, {600, 700}} {
		s.Add(st, Visit{Config: uint64(i)})
	}
	if got := s.VisitedRegions(512); got != 4 {
		t.Errorf("visited(512) = %d, want 4", got)
	}
	if got := s.Coverage(512); got != 1 {
		t.Errorf("coverage(S,512) = %g, want 1", got)
	}
	if got := s.VisitedRegions(1024); got != 1 {
		t.Errorf("visited(1024) = %d, want 1", got)
	}
	if got, want := s.Coverage(1), 6.0/(1024*1024); got != want {
		t.Errorf("coverage(S,1) = %g, want %g", got, want)
	}
	// R1(512) = [1,512]²: (512,512) and (1,1) share it, (513,512) does not.
	if !s.Visited([]float64{300, 200}, 512) || !s.Visited([]float64{1024, 513}, 512) {
		t.Error("R1/R4 not visited")
	}
	s2 := mustStore(t, Space{Vars: DefaultSpace().Vars[:2]}, Options{})
	s2.Add([]float64{512, 512}, Visit{})
	if s2.Visited([]float64{513, 512}, 512) || !s2.Visited([]float64{1, 1}, 512) {
		t.Error("interval boundary at 512/513 wrong")
	}
}

// TestExactCounts adds hand-made visits to a small space and checks every
// count and every new-region mask.
func TestExactCounts(t *testing.T) {
	sp := Space{Vars: []Var{
		{Name: "x", Min: 0, Max: 7, Step: 1},
		{Name: "y", Min: 0, Max: 7, Step: 1},
		{Name: "c", Values: []string{"a", "b"}},
	}}
	s := mustStore(t, sp, Options{})
	for _, tc := range []struct {
		st      []float64
		isNew   bool
		regions Levels
	}{
		{[]float64{0, 0, 0}, true, 0b1111},
		{[]float64{1, 0, 0}, true, 0b0001},
		{[]float64{2, 3, 0}, true, 0b0011},
		{[]float64{7, 7, 1}, true, 0b1111},
		{[]float64{7, 7, 1}, false, 0},
		{[]float64{0, 0, 1}, true, 0b0111},
		{[]float64{8, 0, 0}, true, 0}, // outside S
	} {
		ref, isNew, m := s.Add(tc.st, Visit{Config: 1, At: 5})
		if isNew != tc.isNew || m != tc.regions {
			t.Errorf("Add(%v) = %v, %v; want %v, %v", tc.st, isNew, m, tc.isNew, tc.regions)
		}
		if ref.OutOfRange() != (tc.st[0] == 8) {
			t.Errorf("Add(%v): ref %#x OutOfRange = %v", tc.st, ref, ref.OutOfRange())
		}
	}
	for _, tc := range []struct{ k, visited, total int }{
		{1, 5, 128}, {2, 4, 32}, {4, 3, 8}, {8, 2, 2},
	} {
		if got := s.VisitedRegions(tc.k); got != uint64(tc.visited) {
			t.Errorf("visited(%d) = %d, want %d", tc.k, got, tc.visited)
		}
		if got := sp.Regions(tc.k); got != uint64(tc.total) {
			t.Errorf("Regions(%d) = %d, want %d", tc.k, got, tc.total)
		}
	}
	if s.Len() != 5 || s.Visits() != 6 {
		t.Errorf("Len %d Visits %d", s.Len(), s.Visits())
	}
	if n, v := s.OutOfRange(); n != 1 || v != 1 {
		t.Errorf("OutOfRange = %d, %d", n, v)
	}
	if got := Levels(0b1011).Ks(); !slices.Equal(got, []int{1, 2, 8}) {
		t.Errorf("Ks = %v", got)
	}
	if m := Levels(0b0111); !m.Has(4) || m.Has(8) || m.Has(3) || m.Count() != 3 || m.String() != "{1,2,4}" {
		t.Errorf("Levels methods wrong for %v", m)
	}
}

// TestAgainstModel compares counts and Visited with a brute-force model on
// random states, including partial last intervals and categorical variables.
func TestAgainstModel(t *testing.T) {
	sp := smallSpace()
	rng := rand.New(rand.NewPCG(1, 2))
	s := mustStore(t, sp, Options{})
	m := newModel(sp)
	for i := range 300 {
		st := randomState(rng, sp)
		st[0] += rng.Float64() * 0.99 // anywhere in the granule
		if i%17 == 0 {
			st[1] = 30 // outside
		}
		s.Add(st, Visit{Config: uint64(i)})
		m.add(st)
	}
	for l := 0; l <= sp.MaxLevel(); l++ {
		if got, want := s.VisitedRegions(1<<l), uint64(len(m.regions[l])); got != want {
			t.Errorf("visited(%d) = %d, want %d", 1<<l, got, want)
		}
	}
	for range 2000 {
		st := randomState(rng, sp)
		for l := 0; l <= sp.MaxLevel(); l++ {
			g, _ := m.granules(st)
			want := m.regions[l][gkey(m.region(g, l))]
			if got := s.Visited(st, 1<<l); got != want {
				t.Fatalf("Visited(%v, %d) = %v, want %v", st, 1<<l, got, want)
			}
		}
	}
}

func TestOutOfRange(t *testing.T) {
	s := mustStore(t, DefaultSpace(), Options{})
	in := []float64{10, 5, 100, 20, 0}
	s.Add(in, Visit{Config: 1})
	before := s.Snapshot("x", 1)
	outs := [][]float64{
		{10, 0x7fffffff, 100, 20, 0}, // Linux's initial ssthresh
		{4294967294, 5, 100, 20, 3},  // the cwnd bug of §4.3
		{10, 5, math.NaN(), 20, 0},
		{10, 5, 100, 20, 7}, // no such ca_state
		{math.Inf(-1), 5, 100, 20, 0},
	}
	for i, st := range outs {
		ref, isNew, m := s.Add(st, Visit{Config: uint64(10 + i), At: int64(i)})
		if !ref.OutOfRange() || !isNew || m != 0 {
			t.Errorf("Add(%v) = %#x, %v, %v", st, ref, isNew, m)
		}
		if s.Visited(st, 1) {
			t.Errorf("Visited(%v)", st)
		}
		got := s.State(ref)
		for j := range st {
			if !(got[j] == st[j] || math.IsNaN(got[j]) && math.IsNaN(st[j])) {
				t.Errorf("State(%v) = %v", st, got)
				break
			}
		}
		if r2, ok := s.Lookup(st); !ok || r2 != ref {
			t.Errorf("Lookup(%v) = %v, %v", st, r2, ok)
		}
	}
	s.Add(outs[0], Visit{Config: 99})
	if n, v := s.OutOfRange(); n != len(outs) || v != uint64(len(outs)+1) {
		t.Errorf("OutOfRange = %d, %d", n, v)
	}
	after := s.Snapshot("x", 1)
	if !slices.Equal(before.Visited, after.Visited) || after.OutOfRange != len(outs) {
		t.Errorf("out-of-range states changed region counts: %v → %v", before.Visited, after.Visited)
	}
	var refs []StateRef
	for r := range s.OutOfRangeStates() {
		refs = append(refs, r)
	}
	if len(refs) != len(outs) || s.Count(refs[0]) != 2 || len(s.Pool(refs[0])) != 2 {
		t.Errorf("out-of-range refs %v, count %d", refs, s.Count(refs[0]))
	}
}

func TestStateDecode(t *testing.T) {
	s := mustStore(t, DefaultSpace(), Options{})
	ref, _, _ := s.Add([]float64{17.6, 1024, 13, 1023.9, 3}, Visit{})
	if got, want := s.State(ref), []float64{17, 1024, 12, 1020, 3}; !slices.Equal(got, want) {
		t.Errorf("State = %v, want %v", got, want)
	}
	if r, ok := s.Lookup([]float64{17, 1024, 12, 1020, 3}); !ok || r != ref {
		t.Errorf("Lookup of the representative = %v, %v", r, ok)
	}
}

func TestPool(t *testing.T) {
	for _, size := range []int{1, 2, 3, 4, 5, 8} {
		s := mustStore(t, smallSpace(), Options{PoolSize: size, Seed: 7})
		st := []float64{1, 2, 1}
		var ref StateRef
		for i := range 20 {
			ref, _, _ = s.Add(st, Visit{Config: uint64(i), At: int64(i) * 1000})
			p := s.Pool(ref)
			if len(p) != min(i+1, size) || s.Count(ref) != uint64(i+1) {
				t.Fatalf("size %d after %d visits: pool %v, count %d", size, i+1, p, s.Count(ref))
			}
			seen := map[uint64]bool{}
			for _, v := range p {
				if v.At != int64(v.Config)*1000 || v.Config > uint64(i) || seen[v.Config] {
					t.Fatalf("size %d: bad pool %v", size, p)
				}
				seen[v.Config] = true
			}
		}
		// Another state interleaved must not disturb the first one's blocks.
		r2, _, _ := s.Add([]float64{3, 4, 2}, Visit{Config: 100})
		s.Add([]float64{3, 4, 2}, Visit{Config: 101})
		if p := s.Pool(r2); len(p) != min(2, size) || (size > 1 && p[0].Config != 100) || p[0].Config < 100 {
			t.Errorf("size %d: second pool %v", size, p)
		}
	}
}

// TestReservoirUniform checks that each of 10 visits is in a pool of 3 with
// probability 3/10, over many seeds.
func TestReservoirUniform(t *testing.T) {
	const seeds, visits, size = 3000, 10, 3
	hits := make([]int, visits)
	for seed := range seeds {
		s := mustStore(t, smallSpace(), Options{PoolSize: size, Seed: uint64(seed)})
		var ref StateRef
		for i := range visits {
			ref, _, _ = s.Add([]float64{1, 2, 1}, Visit{Config: uint64(i)})
		}
		for _, v := range s.Pool(ref) {
			hits[v.Config]++
		}
	}
	want := float64(seeds * size / visits)
	for i, h := range hits {
		if math.Abs(float64(h)-want) > 0.15*want {
			t.Errorf("visit %d in %d pools, want about %.0f", i, h, want)
		}
	}
}

func TestDeterministicPools(t *testing.T) {
	run := func() []Visit {
		s := mustStore(t, DefaultSpace(), Options{PoolSize: 2, Seed: 42})
		fillSynth(s, rand.New(rand.NewPCG(3, 4)), 20, 500, 0)
		var all []Visit
		for r := range s.States() {
			all = s.AppendPool(all, r)
		}
		return all
	}
	if a, b := run(), run(); !slices.Equal(a, b) {
		t.Error("pools differ between identical runs")
	}
}

func TestBatch(t *testing.T) {
	sp := DefaultSpace()
	direct := mustStore(t, sp, Options{})
	batched := mustStore(t, sp, Options{})
	b, err := NewBatch(sp)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for sim := range 10 {
		b.Reset()
		first := map[string]bool{}
		synthSim(rng, 300, func(st []float64, at int64) {
			isNew := b.Observe(st, at)
			g := make([]int64, len(st))
			for i, v := range sp.Vars {
				g[i], _ = v.Granule(st[i])
			}
			k := gkey(g)
			if isNew != !first[k] {
				t.Fatalf("Observe(%v) new=%v", st, isNew)
			}
			if !first[k] {
				first[k] = true
				direct.Add(st, Visit{Config: uint64(sim), At: at})
			}
		})
		batched.AddBatch(b, uint64(sim))
	}
	if a, c := direct.Snapshot("", 0), batched.Snapshot("", 0); !slices.Equal(a.Visited, c.Visited) || a.OutOfRange != c.OutOfRange {
		t.Errorf("batch %v/%d, direct %v/%d", c.Visited, c.OutOfRange, a.Visited, a.OutOfRange)
	}
	for r := range direct.States() {
		r2, ok := batched.Lookup(direct.State(r))
		if !ok || !slices.Equal(direct.Pool(r), batched.Pool(r2)) {
			t.Fatalf("state %v: pools %v vs %v", direct.State(r), direct.Pool(r), batched.Pool(r2))
		}
	}
}

func TestNewStoreErrors(t *testing.T) {
	if _, err := NewStore(Space{}, Options{}); err == nil {
		t.Error("empty space accepted")
	}
	if _, err := NewStore(DefaultSpace(), Options{PoolSize: -1}); err == nil {
		t.Error("negative pool size accepted")
	}
	// A space wider than 64 bits uses multi-word keys.
	wide := DefaultSpace().With(
		Var{Name: "prior_cwnd", Min: 1, Max: 1024, Step: 1},
		Var{Name: "target", Min: 0, Max: 1 << 20, Step: 1},
		Var{Name: "w_max", Min: 0, Max: 1 << 20, Step: 1})
	s := mustStore(t, wide, Options{})
	if s.ly.w < 2 {
		t.Fatalf("wide space packed in %d word(s)", s.ly.w)
	}
	st := []float64{10, 20, 40, 8, 1, 30, 123456, 654321}
	ref, isNew, _ := s.Add(st, Visit{})
	if !isNew || !slices.Equal(s.State(ref), st) || !s.Visited(st, 1) || s.Visited([]float64{10, 20, 40, 8, 1, 30, 123456, 654320}, 1) {
		t.Errorf("wide key round trip: %v", s.State(ref))
	}
}

// TestBatchConcurrent fills batches in worker goroutines while the store
// records and answers queries in another (run with -race).
func TestBatchConcurrent(t *testing.T) {
	s := mustStore(t, DefaultSpace(), Options{})
	type done struct {
		b   *Batch
		cfg uint64
	}
	ch := make(chan done)
	const workers, sims = 2, 8
	for w := range workers {
		go func() {
			rng := rand.New(rand.NewPCG(uint64(w), 0))
			for i := range sims {
				b := s.NewBatch()
				synthSim(rng, 200, func(st []float64, at int64) { b.Observe(st, at) })
				ch <- done{b, uint64(w*sims + i)}
			}
		}()
	}
	rng := rand.New(rand.NewPCG(9, 9))
	for range workers * sims {
		d := <-ch
		s.AddBatch(d.b, d.cfg)
		s.SearchEstimation(rng, randomState(rng, DefaultSpace()))
	}
	if s.Configs() != workers*sims {
		t.Errorf("configs %d", s.Configs())
	}
}

// RegionCorners yields each visited region once, at its lower corner, at
// every exact k.
func TestRegionCorners(t *testing.T) {
	sp := Space{Vars: DefaultSpace().Vars[:2]}
	s := mustStore(t, sp, Options{})
	for _, st := range [][]float64{{1, 1}, {2, 3}, {17, 1}, {40, 100}, {40, 101}} {
		s.Add(st, Visit{})
	}
	for _, tc := range []struct {
		k    int
		want []string
	}{
		{1, []string{"1,1", "2,3", "17,1", "40,100", "40,101"}},
		{16, []string{"1,1", "17,1", "33,97"}},
		{1024, []string{"1,1"}},
	} {
		seq, ok := s.RegionCorners(tc.k)
		if !ok {
			t.Fatalf("k=%d: no exact set", tc.k)
		}
		var got []string
		for c := range seq {
			got = append(got, fmt.Sprintf("%g,%g", c[0], c[1]))
		}
		slices.Sort(got)
		want := slices.Clone(tc.want)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("k=%d: corners %v, want %v", tc.k, got, want)
		}
		if uint64(len(got)) != s.VisitedRegions(tc.k) {
			t.Errorf("k=%d: %d corners, %d visited regions", tc.k, len(got), s.VisitedRegions(tc.k))
		}
	}
}

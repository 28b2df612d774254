package coverage

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

// regionKeys returns the visited region keys of every level, sorted.
func regionKeys(s *Store) [][]uint64 {
	out := make([][]uint64, s.ly.L+1)
	for l := range out {
		if l < s.floor {
			continue
		}
		for j := range s.pooled {
			tb := s.table(l, j)
			for r := range tb.n {
				out[l] = append(out[l], tb.key(uint32(r))...)
			}
		}
		slices.Sort(out[l])
	}
	return out
}

// TestMergeEqualsSequential adds the same simulations to one store and,
// split round-robin, to N shards that are then merged: counts at every k,
// visited regions, visit counts and out-of-range states must be identical.
func TestMergeEqualsSequential(t *testing.T) {
	for _, shards := range []int{1, 2, 3, 8} {
		sp := DefaultSpace()
		seq := mustStore(t, sp, Options{Seed: 1})
		parts := make([]*Store, shards)
		for i := range parts {
			parts[i] = mustStore(t, sp, Options{Seed: uint64(100 + i)})
		}
		rng := rand.New(rand.NewPCG(7, 7))
		b := seq.NewBatch()
		for sim := range 60 {
			b.Reset()
			synthSim(rng, 400, func(st []float64, at int64) { b.Observe(st, at) })
			seq.AddBatch(b, uint64(sim))
			parts[sim%shards].AddBatch(b, uint64(sim))
		}
		merged := mustStore(t, sp, Options{Seed: 1})
		for _, p := range parts {
			if err := merged.Merge(p); err != nil {
				t.Fatal(err)
			}
		}
		a, m := seq.Snapshot("seq", 60), merged.Snapshot("merged", 60)
		if !slices.Equal(a.Visited, m.Visited) || a.OutOfRange != m.OutOfRange {
			t.Fatalf("%d shards: visited %v/%d, sequential %v/%d", shards, m.Visited, m.OutOfRange, a.Visited, a.OutOfRange)
		}
		ka, km := regionKeys(seq), regionKeys(merged)
		for l := range ka {
			if !slices.Equal(ka[l], km[l]) {
				t.Fatalf("%d shards: regions at k=%d differ", shards, 1<<l)
			}
		}
		if seq.Visits() != merged.Visits() || seq.Configs() != merged.Configs() {
			t.Errorf("visits %d/%d, configs %d/%d", seq.Visits(), merged.Visits(), seq.Configs(), merged.Configs())
		}
		for r := range seq.States() {
			r2, ok := merged.Lookup(seq.State(r))
			if !ok || seq.Count(r) != merged.Count(r2) {
				t.Fatalf("state %v: count %d vs %d", seq.State(r), seq.Count(r), merged.Count(r2))
			}
			if p := merged.Pool(r2); len(p) != len(seq.Pool(r)) {
				t.Fatalf("state %v: pool sizes %d vs %d", seq.State(r), len(p), len(seq.Pool(r)))
			}
		}
		for r := range seq.OutOfRangeStates() {
			r2, ok := merged.Lookup(seq.State(r))
			if !ok || !r2.OutOfRange() || seq.Count(r) != merged.Count(r2) {
				t.Fatalf("out-of-range state %v lost", seq.State(r))
			}
		}
	}
}

// TestMergePools checks bounded, deterministic pools drawn from the union.
func TestMergePools(t *testing.T) {
	build := func() *Store {
		sp := smallSpace()
		a := mustStore(t, sp, Options{PoolSize: 3, Seed: 1})
		b := mustStore(t, sp, Options{PoolSize: 3, Seed: 2})
		st := []float64{1, 2, 1}
		for i := range 5 {
			a.Add(st, Visit{Config: uint64(i), At: int64(i)})
		}
		for i := range 2 {
			b.Add(st, Visit{Config: uint64(10 + i), At: int64(10 + i)})
		}
		b.Add([]float64{3, 3, 0}, Visit{Config: 10})
		if err := a.Merge(b); err != nil {
			t.Fatal(err)
		}
		return a
	}
	a := build()
	ref, _ := a.Lookup([]float64{1, 2, 1})
	p := a.Pool(ref)
	if len(p) != 3 || a.Count(ref) != 7 {
		t.Fatalf("merged pool %v, count %d", p, a.Count(ref))
	}
	for _, v := range p {
		if v.At != int64(v.Config) || (v.Config > 4 && v.Config < 10) || v.Config > 11 {
			t.Errorf("visit %v not from the inputs", v)
		}
	}
	if !slices.Equal(p, build().Pool(ref)) {
		t.Error("merged pools not deterministic")
	}
	r2, _ := a.Lookup([]float64{3, 3, 0})
	if got := a.Pool(r2); len(got) != 1 || got[0].Config != 10 {
		t.Errorf("new state's pool %v", got)
	}
}

// TestMergeVisitsUniform: merging reservoirs of 6 and 2 visits into 3 keeps
// each of the 8 visits with probability 3/8.
func TestMergeVisitsUniform(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	hits := map[visit]int{}
	const n = 8000
	for range n {
		// a: uniform 3-sample of visits 0..5, b: both visits 6, 7.
		var a []visit
		for _, i := range rng.Perm(6)[:3] {
			a = append(a, visit(i))
		}
		b := []visit{6, 7}
		for _, v := range mergeVisits(nil, a, 6, b, 2, 3, rng) {
			hits[v]++
		}
	}
	for c := range visit(8) {
		if h := hits[c]; h < n*3/8*85/100 || h > n*3/8*115/100 {
			t.Errorf("visit %d kept %d of %d times, want about %d", c, h, n, n*3/8)
		}
	}
}

func TestMergeErrors(t *testing.T) {
	a := mustStore(t, DefaultSpace(), Options{})
	if err := a.Merge(a); err == nil {
		t.Error("merge with itself accepted")
	}
	b := mustStore(t, smallSpace(), Options{})
	if err := a.Merge(b); err == nil {
		t.Error("merge of different spaces accepted")
	}
}

// TestPoolInvariants adds, merges and checkpoints at random and checks every
// pool: it holds min(count, PoolSize) distinct visits of its own state, and
// count is the number of visits added.
func TestPoolInvariants(t *testing.T) {
	for _, size := range []int{1, 2, 3, 4, 7} {
		rng := rand.New(rand.NewPCG(uint64(size), 5))
		sp := smallSpace()
		main := mustStore(t, sp, Options{PoolSize: size, Seed: 1})
		added := map[string][]Visit{}
		next := uint64(0)
		addTo := func(s *Store, n int) {
			for range n {
				st := randomState(rng, sp)
				st[0] = float64(rng.IntN(3)) // few states, many visits each
				if rng.IntN(10) == 0 {
					st[1] = 99
				}
				v := Visit{Config: next, At: int64(next) * 7}
				next++
				s.Add(st, v)
				k := rawKey(sp, st)
				added[k] = append(added[k], v)
			}
		}
		for range 30 {
			switch rng.IntN(3) {
			case 0:
				addTo(main, 20)
			case 1:
				o := mustStore(t, sp, Options{PoolSize: size, Seed: rng.Uint64()})
				addTo(o, 20)
				if err := main.Merge(o); err != nil {
					t.Fatal(err)
				}
			case 2:
				var buf bytes.Buffer
				if _, err := main.WriteTo(&buf); err != nil {
					t.Fatal(err)
				}
				var err error
				if main, err = ReadStore(&buf); err != nil {
					t.Fatal(err)
				}
			}
		}
		check := func(r StateRef) {
			st := main.State(r)
			vs := added[rawKey(sp, st)]
			p := main.Pool(r)
			if main.Count(r) != uint64(len(vs)) || len(p) != min(len(vs), size) {
				t.Fatalf("size %d, state %v: count %d pool %d, added %d", size, st, main.Count(r), len(p), len(vs))
			}
			seen := map[Visit]bool{}
			for _, v := range p {
				if seen[v] || !slices.Contains(vs, v) {
					t.Fatalf("size %d, state %v: pool %v not a subset of %v", size, st, p, vs)
				}
				seen[v] = true
			}
		}
		for r := range main.States() {
			check(r)
		}
		for r := range main.OutOfRangeStates() {
			check(r)
		}
	}
}

// rawKey identifies a state by its granules, in range or not.
func rawKey(sp Space, st []float64) string {
	g := make([]int64, len(st))
	for i, v := range sp.Vars {
		g[i], _ = v.Granule(st[i])
	}
	return gkey(g)
}

// BatchResult.LastAt is, per level, the latest first visit among the
// states of a batch that found a region there: a state in a known region
// does not count, and a batch that found nothing has −1.
func TestAddBatchesLastAt(t *testing.T) {
	s := mustStore(t, smallSpace(), Options{Seed: 1})
	a, b, c := s.NewBatch(), s.NewBatch(), s.NewBatch()
	a.Observe([]float64{0, 0, 0}, 10)
	a.Observe([]float64{1, 0, 0}, 20) // same region as {0,0} at k ≥ 2
	b.Observe([]float64{1, 0, 0}, 5)  // found by a, earlier in the merge
	b.Observe([]float64{15, 22, 2}, 30)
	b.Observe([]float64{0, 0, 0}, 40) // known
	res := s.AddBatches([]*Batch{a, b, c}, []uint64{0, 1, 2})
	if got := res[0].LastAt; got[0] != 20 || got[1] != 10 {
		t.Fatalf("batch a: LastAt %v, want 20 at k=1 and 10 at k=2", got)
	}
	if got := res[1].LastAt; got[0] != 30 || got[1] != 30 {
		t.Fatalf("batch b: LastAt %v, want 30 at k=1 and k=2", got)
	}
	for l, at := range res[2].LastAt {
		if at != -1 {
			t.Fatalf("empty batch: LastAt[%d] = %d", l, at)
		}
	}
}

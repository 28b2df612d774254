package coverage

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"testing"
)

// walkBatch fills b with one trajectory-like simulation: a random walk
// through the default S, as a congestion controller's states move (cwnd
// steps, ssthresh jumps on losses, srtt and rttvar drift).
func walkBatch(b *Batch, rng *rand.Rand, steps int) {
	b.Reset()
	cw, ss := float64(1+rng.IntN(1024)), float64(1+rng.IntN(1024))
	srtt, rv := float64(rng.IntN(2048)), float64(rng.IntN(1024))
	st := float64(rng.IntN(5))
	clamp := func(x, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, x)) }
	for i := range steps {
		switch r := rng.IntN(100); {
		case r < 70:
			cw = clamp(cw+float64(rng.IntN(5)-2), 1, 1024)
		case r < 80:
			ss = clamp(cw/2, 1, 1024)
			cw = ss
			st = float64(rng.IntN(5))
		case r < 95:
			srtt = clamp(srtt+float64(rng.IntN(33)-16), 0, 2047)
			rv = clamp(rv+float64(rng.IntN(17)-8), 0, 1023)
		default:
			st = float64(rng.IntN(5))
		}
		b.Observe([]float64{cw, ss, srtt, rv, st}, int64(i)*1e6)
	}
}

// TestBudgetHoldsAt200MStates feeds up to 200 million visits of trajectory-like
// states into a store with a 64 MB budget: the store must coarsen, stay
// within the budget, keep exact counts at and above its floor (checked
// against a store without a budget for the levels that one can hold), and
// estimate the levels below within a few percent.
func TestBudgetHoldsAt200MStates(t *testing.T) {
	// 200 million with ACTFUZZ_BIG_STORE=1 (minutes); 20 million in the
	// ordinary suite and 5 million with -short.
	visits := 20_000_000
	switch {
	case os.Getenv("ACTFUZZ_BIG_STORE") == "1":
		visits = 200_000_000
	case testing.Short():
		visits = 5_000_000
	}
	const budget = 64 << 20
	sp := DefaultSpace()
	st := mustStore(t, sp, Options{Seed: 1, Memory: budget})
	// The reference keeps the region sets from level 4 (k = 16) up, the
	// sizes an unbudgeted store would report there; TestCoarseningKeepsExact
	// Levels checks every level on a smaller store.
	const refLevel = 4
	ref := map[int]map[uint64]struct{}{}
	ly := st.ly
	for l := refLevel; l <= ly.L; l++ {
		ref[l] = map[uint64]struct{}{}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	bs := make([]*Batch, 64)
	cfgs := make([]uint64, 64)
	for i := range bs {
		bs[i] = st.NewBatch()
	}
	key := make([]uint64, ly.w)
	added, sim := 0, 0
	maxBytes := 0
	for added < visits {
		for i := range bs {
			walkBatch(bs[i], rng, 2000)
			added += bs[i].Len()
			cfgs[i] = uint64(sim)
			sim++
			for r := range bs[i].in.n {
				k := bs[i].in.key(uint32(r))
				for l := refLevel; l <= ly.L; l++ {
					ly.regionKey(k, key, l)
					ref[l][key[0]] = struct{}{}
				}
			}
		}
		st.AddBatches(bs, cfgs)
		maxBytes = max(maxBytes, st.Bytes())
	}
	if st.OverBudget() {
		t.Fatalf("store over budget with nothing to coarsen")
	}
	if maxBytes > budget {
		t.Errorf("store held %d bytes after a merge, budget %d", maxBytes, budget)
	}
	if st.Coarsenings() == 0 || st.FloorK() == 1 {
		t.Fatalf("no coarsening of the floor at %d visits (floor k=%d, pool k=%d)", added, st.FloorK(), st.PoolK())
	}
	t.Logf("%d visits, %d sims: %d bytes (max %d), floor k=%d, pool k=%d, %d coarsenings, configs %d",
		added, sim, st.Bytes(), maxBytes, st.FloorK(), st.PoolK(), st.Coarsenings(), st.Configs())
	for l := refLevel; l <= ly.L; l++ {
		got, want := st.VisitedRegions(1<<l), uint64(len(ref[l]))
		if st.Exact(1 << l) {
			if got != want {
				t.Errorf("k=%d exact: %d regions, want %d", 1<<l, got, want)
			}
		} else if d := math.Abs(float64(got)-float64(want)) / float64(want); d > 0.05 {
			t.Errorf("k=%d estimated: %d regions, want %d (±5%%), off by %.1f%%", 1<<l, got, want, 100*d)
		}
	}
	// The queries still answer, at the floor.
	for range 50 {
		star, ok := st.SampleUnvisited(rng, 1)
		if !ok {
			t.Fatal("no unvisited state")
		}
		if est, ok := st.SearchEstimation(rng, star); ok {
			if est.K < st.FloorK() {
				t.Fatalf("estimation at k=%d below the floor %d", est.K, st.FloorK())
			}
		}
		if _, nb, ok := st.SearchConcatenation(rng, star); ok {
			if nb.Visit.Config >= uint64(sim) {
				t.Fatalf("visit of an unknown config %d", nb.Visit.Config)
			}
		}
	}
	// A coarsened store round-trips through a checkpoint.
	var buf bytes.Buffer
	if _, err := st.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := ReadStore(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	for l := 0; l <= ly.L; l++ {
		if a, b := st.VisitedRegions(1<<l), back.VisitedRegions(1<<l); a != b {
			t.Errorf("k=%d after checkpoint: %d regions, want %d", 1<<l, b, a)
		}
	}
	t.Logf("checkpoint %d bytes", buf.Len())
}

// TestCoarseningKeepsExactLevels compares a store that had to coarsen with
// one that did not, on the same visits: every level at or above the floor
// must match exactly, each pool must hold visits of simulations that did
// visit its region, and the estimate below the floor must be close.
func TestCoarseningKeepsExactLevels(t *testing.T) {
	sp := DefaultSpace()
	full := mustStore(t, sp, Options{Seed: 3})
	small := mustStore(t, sp, Options{Seed: 3, Memory: 4 << 20})
	b := full.NewBatch()
	const sims, steps = 400, 1500
	rng := rand.New(rand.NewPCG(1, 2))
	for sim := range sims {
		walkBatch(b, rng, steps)
		full.AddBatch(b, uint64(sim))
		small.AddBatch(b, uint64(sim))
	}
	if small.FloorK() == 1 && small.PoolK() == 1 {
		t.Fatalf("4 MB store did not coarsen (%d bytes)", small.Bytes())
	}
	t.Logf("floor k=%d pool k=%d, %d bytes vs %d", small.FloorK(), small.PoolK(), small.Bytes(), full.Bytes())
	ly := full.ly
	for l := 0; l <= ly.L; l++ {
		k := 1 << l
		a, e := small.VisitedRegions(k), full.VisitedRegions(k)
		if small.Exact(k) && a != e {
			t.Errorf("k=%d: %d regions, want %d", k, a, e)
		}
		if !small.Exact(k) && math.Abs(float64(a)-float64(e)) > 0.03*float64(e) {
			t.Errorf("k=%d estimate %d, exact %d", k, a, e)
		}
	}
	// Every pooled visit is of a simulation that visited that pooled region,
	// at the time it first did (replay the same simulations to know).
	pl := small.pool
	type rv struct{ key, cfg uint64 }
	first := map[rv]int64{}
	rng = rand.New(rand.NewPCG(1, 2))
	key := make([]uint64, ly.w)
	for sim := range sims {
		walkBatch(b, rng, steps)
		for r := range b.in.n {
			ly.regionKey(b.in.key(uint32(r)), key, pl)
			k := rv{key[0], uint64(sim)}
			if at, ok := first[k]; !ok || b.inAt[r] < at {
				first[k] = b.inAt[r]
			}
		}
	}
	n := 0
	for ref := range small.States() {
		ly.encode(small.State(ref), key)
		for _, v := range small.Pool(ref) {
			n++
			if _, ok := first[rv{key[0], v.Config}]; !ok {
				t.Fatalf("pool of %v holds config %d, which never visited its region", small.State(ref), v.Config)
			}
		}
		if small.Count(ref) == 0 {
			t.Fatalf("pooled region %v has no visits", small.State(ref))
		}
	}
	if n == 0 {
		t.Fatal("no pooled visits")
	}
}

// TestEscapeListBounded makes every visit escape (times beyond 2^41 ns):
// the escape entries in use stay within the pool slots however many visits
// the reservoirs drop.
func TestEscapeListBounded(t *testing.T) {
	st := mustStore(t, smallSpace(), Options{Seed: 1, Shards: 1})
	states := [][]float64{{1, 2, 1}, {3, 4, 2}, {5, 6, 0}}
	for i := range 100_000 {
		st.Add(states[i%len(states)], Visit{Config: uint64(i), At: 1<<42 + int64(i)})
	}
	vc := &st.pooled[0].vc
	if live := vc.live(); live > len(states)*DefaultPoolSize {
		t.Errorf("%d escape entries live for %d pool slots", live, len(states)*DefaultPoolSize)
	}
	if len(vc.esc) > len(states)*DefaultPoolSize+1 {
		t.Errorf("escape list grew to %d entries", len(vc.esc))
	}
	for ref := range st.States() {
		for _, v := range st.Pool(ref) {
			if v.At != 1<<42+int64(v.Config) {
				t.Fatalf("escaped visit decoded wrong: %+v", v)
			}
		}
	}
}

// TestAddBatchesEqualsSequential: merging 64 simulations at once, on any
// number of cores, gives the same store as adding them one by one.
func TestAddBatchesEqualsSequential(t *testing.T) {
	sp := DefaultSpace()
	mk := func(procs int, together bool) []byte {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		st := mustStore(t, sp, Options{Seed: 9})
		rng := rand.New(rand.NewPCG(4, 4))
		var found [][]uint64
		for round := range 6 {
			bs := make([]*Batch, 64)
			cfgs := make([]uint64, 64)
			for i := range bs {
				bs[i] = st.NewBatch()
				walkBatch(bs[i], rng, 400)
				cfgs[i] = uint64(round*64 + i)
			}
			if together {
				for _, r := range st.AddBatches(bs, cfgs) {
					found = append(found, r.Found)
				}
			} else {
				for i := range bs {
					before := make([]uint64, sp.MaxLevel()+1)
					for l := range before {
						before[l] = st.VisitedRegions(1 << l)
					}
					st.AddBatch(bs[i], cfgs[i])
					f := make([]uint64, len(before))
					for l := range f {
						f[l] = st.VisitedRegions(1<<l) - before[l]
					}
					found = append(found, f)
				}
			}
		}
		var buf bytes.Buffer
		if _, err := st.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		for _, f := range found {
			for _, x := range f {
				buf.WriteByte(byte(x))
			}
		}
		return buf.Bytes()
	}
	want := mk(1, false)
	for _, procs := range []int{1, 2, 4} {
		if got := mk(procs, true); !bytes.Equal(got, want) {
			t.Errorf("AddBatches with GOMAXPROCS=%d differs from sequential AddBatch", procs)
		}
	}
}

// A store checkpointed before it had to coarsen, read back and fed the same
// simulations as the original, coarsens at the same merges into the same
// store: the same counts at every step and byte-identical checkpoints.
func TestResumeCoarsensIdentically(t *testing.T) {
	sp := DefaultSpace()
	a := mustStore(t, sp, Options{Seed: 3, Memory: 3 << 20})
	rng := rand.New(rand.NewPCG(1, 2))
	b := a.NewBatch()
	for sim := range 20 {
		walkBatch(b, rng, 1500)
		a.AddBatch(b, uint64(sim))
	}
	var buf bytes.Buffer
	if _, err := a.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	c, err := ReadStore(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	c.SetMemory(3 << 20)
	for sim := 20; sim < 200; sim++ {
		walkBatch(b, rng, 1500)
		a.AddBatch(b, uint64(sim))
		c.AddBatch(b, uint64(sim))
		for l := 0; l <= sp.MaxLevel(); l++ {
			if x, y := a.VisitedRegions(1<<l), c.VisitedRegions(1<<l); x != y {
				t.Fatalf("sim %d, k=%d: %d regions, resumed %d", sim, 1<<l, x, y)
			}
		}
	}
	if a.Coarsenings() == 0 {
		t.Fatal("no coarsening")
	}
	var b1, b2 bytes.Buffer
	a.WriteTo(&b1)
	c.WriteTo(&b2)
	if !bytes.Equal(b1.Bytes(), b2.Bytes()) {
		t.Fatal("checkpoints differ after the same simulations")
	}
}

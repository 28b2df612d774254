package coverage

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
)

// trace is a pre-generated stream of synthetic states, so that benchmarks
// time the store and not the generator.
type trace struct {
	states [][]float64
	at     []int64
	cfg    []uint64
}

func makeTrace(sims, steps int, seed uint64) *trace {
	tr := &trace{}
	rng := rand.New(rand.NewPCG(seed, seed))
	for i := range sims {
		synthSim(rng, steps, func(st []float64, at int64) {
			tr.states = append(tr.states, append([]float64(nil), st...))
			tr.at = append(tr.at, at)
			tr.cfg = append(tr.cfg, uint64(i))
		})
	}
	return tr
}

var (
	bigOnce  sync.Once
	bigStore *Store
)

// benchStore is a default-space store filled by 500 synthetic simulations of
// 10,000 steps (about 1.2 million states), shared by the query benchmarks.
func benchStore(b *testing.B) *Store {
	bigOnce.Do(func() {
		bigStore = mustStore(b, DefaultSpace(), Options{Seed: 1})
		fillSynth(bigStore, rand.New(rand.NewPCG(1, 2)), 500, 10000, 0)
	})
	return bigStore
}

func BenchmarkAdd(b *testing.B) {
	tr := makeTrace(20, 10000, 3)
	s := mustStore(b, DefaultSpace(), Options{})
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		j := i % len(tr.states)
		s.Add(tr.states[j], Visit{Config: tr.cfg[j] + uint64(i/len(tr.states))*1000, At: tr.at[j]})
	}
	b.ReportMetric(float64(s.Len()), "states")
}

// BenchmarkAddBatch times the per-simulation path: Observe every step into a
// Batch, then AddBatch. ns/op is per step.
func BenchmarkAddBatch(b *testing.B) {
	const steps = 10000
	tr := makeTrace(20, steps, 4)
	s := mustStore(b, DefaultSpace(), Options{})
	bt := s.NewBatch()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		j := i % len(tr.states)
		if j%steps == 0 && i > 0 {
			s.AddBatch(bt, uint64(i/steps))
			bt.Reset()
		}
		bt.Observe(tr.states[j], tr.at[j])
	}
}

func BenchmarkVisited(b *testing.B) {
	s := benchStore(b)
	rng := rand.New(rand.NewPCG(5, 5))
	refs := s.Len()
	for _, k := range []int{1, 16, 128} {
		b.Run(fmt.Sprintf("k=%d", k), func(b *testing.B) {
			stars := make([][]float64, 1024)
			for i := range stars {
				stars[i] = s.State(nthRef(s, rng.IntN(refs)))
				if i%2 == 0 {
					stars[i] = randomState(rng, s.Space())
				}
			}
			for i := 0; b.Loop(); i++ {
				s.Visited(stars[i%len(stars)], k)
			}
		})
	}
}

// queryStars mixes uniformly random states (the s* of ACT, mostly far from
// anything visited) and states next to visited ones (the hard case).
func queryStars(s *Store, rng *rand.Rand) [][]float64 {
	stars := make([][]float64, 1024)
	for i := range stars {
		if i%2 == 0 {
			stars[i] = randomState(rng, s.Space())
		} else {
			st := s.State(nthRef(s, rng.IntN(s.Len())))
			st[rng.IntN(4)] += 8 // step off a visited state
			if !s.Space().InRange(st) {
				st = randomState(rng, s.Space())
			}
			stars[i] = st
		}
	}
	return stars
}

func BenchmarkRandomBracket(b *testing.B) {
	s := benchStore(b)
	rng := rand.New(rand.NewPCG(6, 6))
	stars := queryStars(s, rng)
	for _, k := range []int{1, 4, 16, 128} {
		b.Run(fmt.Sprintf("k=%d", k), func(b *testing.B) {
			found := 0
			for i := 0; b.Loop(); i++ {
				if _, ok := s.RandomBracket(rng, stars[i%len(stars)], k); ok {
					found++
				}
			}
			b.ReportMetric(float64(found)/float64(b.N), "found/op")
		})
	}
}

func BenchmarkRandomNeighbour(b *testing.B) {
	s := benchStore(b)
	rng := rand.New(rand.NewPCG(7, 7))
	stars := queryStars(s, rng)
	for _, k := range []int{1, 4, 16, 128} {
		b.Run(fmt.Sprintf("k=%d", k), func(b *testing.B) {
			found := 0
			for i := 0; b.Loop(); i++ {
				if _, ok := s.RandomNeighbour(rng, stars[i%len(stars)], k); ok {
					found++
				}
			}
			b.ReportMetric(float64(found)/float64(b.N), "found/op")
		})
	}
}

func BenchmarkSampleUnvisited(b *testing.B) {
	s := benchStore(b)
	rng := rand.New(rand.NewPCG(8, 8))
	for _, k := range []int{1, 16, 128, 512} {
		b.Run(fmt.Sprintf("k=%d", k), func(b *testing.B) {
			for b.Loop() {
				s.SampleUnvisited(rng, k)
			}
		})
	}
}

// BenchmarkSearchEstimation is the selector's whole work for one simulation
// of ACT step 2: draw an unvisited s* (k=1), then SearchEstimation.
func BenchmarkSearchEstimation(b *testing.B) {
	s := benchStore(b)
	rng := rand.New(rand.NewPCG(9, 9))
	k := 0
	for b.Loop() {
		star, _ := s.SampleUnvisited(rng, 1)
		est, _ := s.SearchEstimation(rng, star)
		k += est.K
	}
	b.ReportMetric(float64(k)/float64(b.N), "mean-k")
}

// BenchmarkSearchConcatenation is the same for ACT step 3.
func BenchmarkSearchConcatenation(b *testing.B) {
	s := benchStore(b)
	rng := rand.New(rand.NewPCG(9, 9))
	for b.Loop() {
		star, _ := s.SampleUnvisited(rng, 1)
		s.SearchConcatenation(rng, star)
	}
}

// BenchmarkEstimationLoop does what SearchEstimation does with the per-k
// queries, doubling k until a bracket or a neighbour exists.
func BenchmarkEstimationLoop(b *testing.B) {
	s := benchStore(b)
	rng := rand.New(rand.NewPCG(9, 9))
	levels, maxK := 0, s.Space().MaxK()
	for b.Loop() {
		star, _ := s.SampleUnvisited(rng, 1)
		for k := 1; k <= maxK; k *= 2 {
			levels++
			if _, ok := s.RandomBracket(rng, star, k); ok {
				break
			}
			if _, ok := s.RandomNeighbour(rng, star, k); ok {
				break
			}
		}
	}
	b.ReportMetric(float64(levels)/float64(b.N), "levels/op")
}

// BenchmarkMemory fills a store with synthetic simulations once, whatever
// b.N, and reports the heap bytes per distinct state (in S and outside it)
// and per state in S. Its ns/op is meaningless.
func BenchmarkMemory(b *testing.B) {
	for _, tc := range []struct{ sims, pool int }{{200, 0}, {1000, 0}, {1000, 4}} {
		b.Run(fmt.Sprintf("sims=%d/pool=%d", tc.sims, tc.pool), func(b *testing.B) {
			var m0, m1 runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&m0)
			s := mustStore(b, DefaultSpace(), Options{PoolSize: tc.pool})
			fillSynth(s, rand.New(rand.NewPCG(1, 2)), tc.sims, 10000, 0)
			runtime.GC()
			runtime.ReadMemStats(&m1)
			oor, _ := s.OutOfRange()
			heap := float64(m1.HeapAlloc - m0.HeapAlloc)
			b.ReportMetric(heap/float64(s.Len()+oor), "bytes/state")
			b.ReportMetric(heap/float64(s.Len()), "bytes/state-in-S")
			b.ReportMetric(float64(s.Len()+oor), "states")
			runtime.KeepAlive(s)
		})
	}
}

func BenchmarkMerge(b *testing.B) {
	parts := make([]*Store, 4)
	for i := range parts {
		parts[i] = mustStore(b, DefaultSpace(), Options{Seed: uint64(i)})
		fillSynth(parts[i], rand.New(rand.NewPCG(uint64(i), 1)), 50, 10000, uint64(i)*1000)
	}
	n := 0
	for _, p := range parts {
		n += p.Len()
	}
	for b.Loop() {
		m := mustStore(b, DefaultSpace(), Options{})
		for _, p := range parts {
			if err := m.Merge(p); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/state")
}

func BenchmarkCheckpoint(b *testing.B) {
	s := benchStore(b)
	var buf bytes.Buffer
	if _, err := s.WriteTo(&buf); err != nil {
		b.Fatal(err)
	}
	b.Run("write", func(b *testing.B) {
		for b.Loop() {
			s.WriteTo(io.Discard)
		}
		b.ReportMetric(float64(buf.Len())/float64(s.Len()), "file-bytes/state")
		b.ReportMetric(float64(buf.Len())/float64(s.Len()), "MB/Mstates")
	})
	b.Run("read", func(b *testing.B) {
		for b.Loop() {
			if _, err := ReadStore(bytes.NewReader(buf.Bytes())); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkAddBatches times the coordinator's merge alone: 64 walk-like
// simulations (about 1,200 distinct states each) merged at once into a store
// that already holds about 2 million states, with 1 and 2 cores. It
// reports visits merged per second per core ("states/s/core"): the cost
// ACT's coordinator pays per simulation on top of the simulations.
func BenchmarkAddBatches(b *testing.B) {
	for _, procs := range []int{1, 2} {
		b.Run(fmt.Sprintf("cpu=%d", procs), func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			s := mustStore(b, DefaultSpace(), Options{Seed: 1})
			rng := rand.New(rand.NewPCG(7, 7))
			mk := func() ([]*Batch, []uint64, int) {
				bs, ids := make([]*Batch, 64), make([]uint64, 64)
				n := 0
				for i := range bs {
					bs[i] = s.NewBatch()
					walkBatch(bs[i], rng, 2000)
					ids[i] = rng.Uint64()
					n += bs[i].Len()
				}
				return bs, ids, n
			}
			for range 30 { // about 2 M states
				bs, ids, _ := mk()
				s.AddBatches(bs, ids)
			}
			rounds := make([][]*Batch, 8)
			idss := make([][]uint64, 8)
			per := 0
			for i := range rounds {
				var n int
				rounds[i], idss[i], n = mk()
				per += n
			}
			visits := 0
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				s.AddBatches(rounds[i%8], idss[i%8])
				visits += per / 8
			}
			b.ReportMetric(float64(visits)/b.Elapsed().Seconds()/float64(procs), "states/s/core")
			b.ReportMetric(float64(visits)/b.Elapsed().Seconds(), "states/s")
		})
	}
}

// BenchmarkResumeSplit times what a coordinator with two store parts does
// with its checkpoint at a resume: read it whole and split it, encoding
// the parts again (ReadCheckpoint and SplitEncoded, before ReadSplit), or
// read only the index and the parts' keys, passing the parts' encodings
// on (ReadSplit). B/op is what each allocates.
func BenchmarkResumeSplit(b *testing.B) {
	const parts = 2
	w, err := ReadStore(bytes.NewReader(checkpoint(b, benchStore(b))))
	if err != nil {
		b.Fatal(err)
	}
	index, blobs, err := SplitEncoded(w, parts)
	if err != nil {
		b.Fatal(err)
	}
	var ck bytes.Buffer
	if _, err := WriteSplit(&ck, index, blobs); err != nil {
		b.Fatal(err)
	}
	states := index.Len()
	b.Run("whole", func(b *testing.B) {
		for b.Loop() {
			s, err := ReadCheckpoint(bytes.NewReader(ck.Bytes()))
			if err == nil {
				_, _, err = SplitEncoded(s, parts)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(states), "states")
	})
	b.Run("keys", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := ReadSplit(bytes.NewReader(ck.Bytes()), int64(ck.Len()), parts); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(states), "states")
	})
}

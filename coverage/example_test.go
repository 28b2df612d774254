package coverage_test

import (
	"fmt"
	"math/rand/v2"
	"os"

	"github.com/actfuzz/actfuzz/coverage"
)

// Example records the states of two simulations, then asks the questions of
// ACT's parameter estimation (Method 1) for an unvisited state.
func Example() {
	store, err := coverage.NewStore(coverage.DefaultSpace(), coverage.Options{Seed: 1})
	if err != nil {
		panic(err)
	}
	// State vectors: cwnd, ssthresh, srtt (ms), rttvar (ms), ca_state index.
	open := float64(coverage.DefaultSpace().Vars[4].Index("open"))
	sim := store.NewBatch()
	for cwnd := 10.0; cwnd <= 100; cwnd++ { // simulation G1: cwnd grows at ssthresh 50
		sim.Observe([]float64{cwnd, 50, 40, 8, open}, int64(cwnd)*1e6)
	}
	store.AddBatch(sim, 1)
	sim.Reset()
	for cwnd := 10.0; cwnd <= 20; cwnd++ { // G2 up to the buffer
		sim.Observe([]float64{cwnd, 50, 200, 8, open}, int64(cwnd)*1e6)
	}
	store.AddBatch(sim, 2)
	store.Add([]float64{5, 0x7fffffff, 40, 8, open}, coverage.Visit{Config: 3}) // initial ssthresh: outside S

	fmt.Println("visited states:", store.VisitedRegions(1))
	fmt.Println("visited regions at k=16:", store.VisitedRegions(16), "of", coverage.DefaultSpace().Regions(16))
	states, _ := store.OutOfRange()
	fmt.Println("states outside S:", states)

	rng := rand.New(rand.NewPCG(1, 2))
	names := coverage.DefaultSpace().Vars
	// Method 1 for s* between the two simulations' srtt: interpolation.
	if est, ok := store.SearchEstimation(rng, []float64{15, 50, 120, 8, open}); ok && est.Interpolate {
		fmt.Printf("k=%d: interpolate between G%d and G%d along %s\n", est.K,
			store.RandomVisit(rng, est.Bracket.A).Config, store.RandomVisit(rng, est.Bracket.B).Config,
			names[est.Bracket.Var].Name)
	}
	// Method 2 for s* beyond the largest cwnd: concatenate after a neighbour.
	// The search finds the state; the visit G^d is drawn from its pool.
	if k, nb, ok := store.SearchConcatenation(rng, []float64{300, 50, 40, 8, open}); ok {
		v := store.RandomVisit(rng, nb.Ref)
		fmt.Printf("k=%d: continue G%d after t=%dms, then push %s\n", k, v.Config, v.At/1e6, names[nb.Var].Name)
	}

	coverage.WriteMarkdown(os.Stdout, store.Snapshot("act", 3))
	// Output:
	// visited states: 102
	// visited regions at k=16: 9 of 10485760
	// states outside S: 1
	// k=1: interpolate between G1 and G2 along srtt
	// k=1: continue G1 after t=13ms, then push cwnd
	// |  k   | regions of S |   act visited (%)    |
	// |-----:|-------------:|---------------------:|
	// |    1 | 687194767360 | 102 (0.0000000148 %) |
	// |    2 |  42949672960 |   52 (0.000000121 %) |
	// |    4 |   2684354560 |   26 (0.000000969 %) |
	// |    8 |    167772160 |    14 (0.00000834 %) |
	// |   16 |     10485760 |      9 (0.0000858 %) |
	// |   32 |       655360 |       5 (0.000763 %) |
	// |   64 |        40960 |        2 (0.00488 %) |
	// |  128 |         2560 |         1 (0.0391 %) |
	// |  256 |          160 |          1 (0.625 %) |
	// |  512 |           20 |           1 (5.00 %) |
	// | 1024 |            5 |           1 (20.0 %) |
	//
	// simulations: act=3; visited states outside S: act=1
}

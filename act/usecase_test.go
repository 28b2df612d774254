package act

import (
	"context"
	"os"
	"testing"
)

// TestHugeCwndFoundSoon (issue 21 item 1): the ACT paper's §4.3 use case,
// examples/huge-cwnd.yaml as shipped (Linux 3.10 Reno without SACK, cwnd >
// 1e7 after two consecutive undos), is found within 3,000 simulations on at
// least 4 of 5 campaign seeds, so that a change to the TCP machinery or to
// the search that hides it is noticed (a minimized seed alone did not:
// netenv's TestLinux310ConsecutiveUndoNoSACK replays one schedule). Each
// campaign stops at its first hit. It takes minutes: it runs with
// ACTFUZZ_USECASES=1 (make usecase-test).
func TestHugeCwndFoundSoon(t *testing.T) {
	if os.Getenv("ACTFUZZ_USECASES") == "" {
		t.Skip("a long test: set ACTFUZZ_USECASES=1 (make usecase-test)")
	}
	const budget, seeds, want = 3000, 5, 4
	found := 0
	for seed := uint64(1); seed <= seeds; seed++ {
		c, err := LoadCampaign("../examples/huge-cwnd.yaml")
		if err != nil {
			t.Fatal(err)
		}
		c.Seed = seed
		ctx, cancel := context.WithCancel(context.Background())
		first := -1
		rep, err := Run(ctx, c, Options{Budget: budget, OnFinding: func(g *FindingGroup) {
			// The condition itself: the oracles (on by default) find
			// other things in this campaign from its first simulation.
			if g.Seed.Finding.Condition == "huge-cwnd" && first < 0 {
				first = g.FirstSim + 1
				cancel()
			}
		}})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if first > 0 {
			found++
		}
		t.Logf("seed %d: first hit at simulation %d (-1: none); %d run (the batch is finished), steps %v", seed, first, rep.Sims, rep.StepSims)
		if found+int(seeds-seed) < want {
			break // cannot reach want any more
		}
	}
	if found < want {
		t.Errorf("huge-cwnd found on %d of %d seeds within %d simulations, want ≥ %d", found, seeds, budget, want)
	}
}

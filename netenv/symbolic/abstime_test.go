package symbolic

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/netenv"
)

// pacedTCP is a short BBR transfer (BBR paces every packet, so the sender
// arms its send timer at nextPace) whose window is packet from.
func pacedTCP(from int) *Scenario {
	return &Scenario{
		Name: "paced",
		TCP: &TCPSpec{
			Flows: []netenv.Flow{{CCA: "bbr", Bytes: 30 * 1448}},
			Env:   netenv.Env{BW: 10, Delay: 20, Buffer: 100, App: 10000},
			SACK:  true,
		},
		End:     20 * time.Second,
		Window:  Window{N: 1, Select: "range", From: from, Lo: time.Millisecond, Hi: time.Second, Res: time.Millisecond},
		Metrics: []string{"cwnd", "done"},
	}
}

// TestAbsoluteTimersBruteForce: windows early in application-limited and
// paced transfers, where the sender arms its send timer at an absolute
// time (the application's next write, the pacing deadline) on ACKs whose
// arrival the window moves. Before abstime.go the timer took the form of
// the ACK that armed it, and children forked on comparisons with it
// diverged: 1 to 47 branches in each of the 77 windows and settings here
// (no vector was misclassified: divergence flagged them). Now no branch
// may diverge, and every vector must lie in exactly one class with its
// outcome, in every setting. (Branches whose RTT estimator is
// concretized, rtt.go, are allowed: they are checked like the others.)
func TestAbsoluteTimersBruteForce(t *testing.T) {
	for _, tc := range []struct {
		name string
		sc   *Scenario
	}{
		{"app 1 Mbit/s from 2", appLimitedTCP(1, 2)},
		{"app 2 Mbit/s from 1", appLimitedTCP(2, 1)},
		{"app 2 Mbit/s from 3", appLimitedTCP(2, 3)},
		{"app 2 Mbit/s from 5", appLimitedTCP(2, 5)},
		{"paced from 3", pacedTCP(3)},
		{"paced from 5", pacedTCP(5)},
		{"paced from 6", pacedTCP(6)},
	} {
		t.Run(tc.name, func(t *testing.T) { bruteForceUndiverged(t, tc.sc, 2) })
	}
}

// bruteForceUndiverged compares every setting with brute force, letting no
// vector pass, and wants no branch diverged and no form mismatched.
func bruteForceUndiverged(t *testing.T, sc *Scenario, minOutcomes int) {
	t.Helper()
	c, err := sc.compile()
	if err != nil {
		t.Fatal(err)
	}
	truth := bruteForce(t, c)
	if all := distinct(truth); len(all) < minOutcomes {
		t.Fatalf("the window is too dull to test anything: outcomes %q", all)
	}
	counts := map[string]string{}
	for _, s := range settings {
		red, err := ParseReductions(s.red)
		if err != nil {
			t.Fatal(err)
		}
		if red.H {
			continue // state hashing needs a topology scenario
		}
		rep, err := Explore(context.Background(), sc, Options{Reductions: red, NodeGranularity: s.byNode})
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		checkClasses(t, s.name, rep, truth, false)
		if rep.Diverged != 0 || rep.rttMismatch != 0 || rep.SolverGaveUp != 0 {
			t.Errorf("%s: %d diverged branches, %d mismatched forms, solver gave up %d times", s.name, rep.Diverged, rep.rttMismatch, rep.SolverGaveUp)
		}
		counts[s.name] = fmt.Sprintf("%d/%d/%d", rep.Branches, rep.Diverged, rep.Concretized)
	}
	t.Logf("branches/diverged/concretized: %v", counts)
}

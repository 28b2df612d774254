package act

import (
	"math/rand/v2"
	"testing"
)

// The bandit gives most simulations to the step that pays, follows a change
// of which step pays within about a thousand rewards, never starves a step,
// and repeats itself for a seed.
func TestStepBandit(t *testing.T) {
	arms := []Step{StepRandom, StepEstimation, StepConcatenation}
	for _, tc := range []struct {
		name  string
		pays  func(n int) Step // the step whose simulations succeed (half of the time) at pick n
		check func(n int) Step // after this many picks, the step that must have the most
	}{
		{"estimation pays", func(int) Step { return StepEstimation }, func(int) Step { return StepEstimation }},
		{"concatenation pays", func(int) Step { return StepConcatenation }, func(int) Step { return StepConcatenation }},
		{"estimation then concatenation", func(n int) Step {
			if n < 3000 {
				return StepEstimation
			}
			return StepConcatenation
		}, func(int) Step { return StepConcatenation }},
	} {
		run := func() map[Step]int {
			src := rand.NewPCG(1, 2)
			rng := rand.New(src)
			b := newStepBandit(arms...)
			last := map[Step]int{}
			for n := range 5000 {
				s := b.pick(src, rng)
				r := 0.0
				if s == tc.pays(n) && rng.IntN(2) == 0 {
					r = 1
				}
				b.reward(s, r)
				if n >= 4000 {
					last[s]++
				}
			}
			return last
		}
		last := run()
		want := tc.check(5000)
		for _, s := range arms {
			if s != want && last[s] >= last[want] {
				t.Errorf("%s: over the last 1000 picks %v got %d, %v only %d", tc.name, s, last[s], want, last[want])
			}
			if float64(last[s]) < 1000*banditFloor/float64(len(arms))/2 {
				t.Errorf("%s: %v starved: %d of the last 1000 picks", tc.name, s, last[s])
			}
		}
		if again := run(); again[want] != last[want] {
			t.Errorf("%s: not deterministic: %v then %v", tc.name, last, again)
		}
		t.Logf("%s: last 1000 picks %v", tc.name, last)
	}
}

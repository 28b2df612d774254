package act

import (
	"math"
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

func TestYieldScore(t *testing.T) {
	type sim struct{ fine, deep uint64 }
	for _, tc := range []struct {
		name  string
		prior []sim // simulations scored before, forming the recent mean
		score sim
		want  float64
	}{
		{"first, nothing new", nil, sim{0, 0}, 0},
		{"first, fine only", nil, sim{5, 0}, 0.5},
		{"first, both", nil, sim{5, 1}, 1},
		{"at the mean", []sim{{100, 10}}, sim{100, 10}, 1.0 / yieldCap},
		{"nothing new", []sim{{100, 10}}, sim{0, 0}, 0},
		{"at the cap", []sim{{100, 10}}, sim{100 * yieldCap, 10 * yieldCap}, 1},
		{"beyond the cap counts as the cap", []sim{{100, 10}}, sim{1e6, 0}, 0.5},
		{"deep only, twice the mean", []sim{{100, 10}}, sim{0, 20}, 2.0 / (2 * yieldCap)},
		// The mean is discounted: after a rich run and a barren one, the
		// mean is (100·γ + 0)/(γ + 1) fine states per simulation.
		{"discounted mean", []sim{{100, 10}, {0, 0}}, sim{100, 10}, min(yieldCap, (banditGamma+1)/banditGamma) / yieldCap},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newStepBandit(StepRandom, StepConcatenation)
			for _, s := range tc.prior {
				b.yieldScore(s.fine, s.deep)
			}
			if got := b.yieldScore(tc.score.fine, tc.score.deep); math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("yieldScore(%d, %d) = %v, want %v", tc.score.fine, tc.score.deep, got, tc.want)
			}
		})
	}
}

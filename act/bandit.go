package act

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"
)

// Step schedules of ACT (campaign key schedule:).
const (
	// SchedulePaper is ACT §3's schedule: step 1 until coverage(S, κ)
	// saturates (or 30% of the budget here), then step 2 likewise, then
	// step 3 to the end. It stays for comparisons.
	SchedulePaper = "paper"
	// ScheduleAdaptive starts steps 2 and 3 after a short random warm-up
	// and shares the simulations between the steps by what each has
	// recently returned (stepBandit).
	ScheduleAdaptive = "adaptive"
)

// stepBandit allocates simulations to ACT's steps by discounted Thompson
// sampling over Bernoulli rewards (Raj & Kalyani 2017, "Taming
// non-stationary bandits: a Bayesian approach"): a simulation is a success
// when it reached a region of S at k = 16 that no earlier one had, came
// closer to a condition than any before (directed ACT), or found more new
// states at the finest level (k = 1) than simulations recently did
// (fineNovelty). Each arm
// keeps a Beta(A, B) posterior whose counts decay by gamma at every reward,
// so that an arm that stops paying (estimation, once its brackets are used
// up) loses its share within a few hundred simulations while one that
// starts paying (concatenation, once the store holds deep states) gains it.
//
// Why Thompson sampling and not UCB: the selector chooses two batches of
// configurations ahead of the merged results (run.go), so within those
// batches the posteriors do not move. UCB would give the whole batch to one
// arm; sampling spreads it in proportion to each arm's chance of being best.
//
// Determinism: draws come from the selector's PRNG, and rewards are added
// in configuration order at merge time, so a seed gives the same choices
// at any worker count and after a resume (A and B are checkpointed).
type stepBandit struct {
	Arms []Step
	A, B []float64
	// Fine is the discounted mean of log(1 + new states at the finest
	// level) over the simulations rewarded so far, FineW its weight.
	Fine, FineW float64
}

// banditGamma is the discount per reward: the posteriors remember about
// 1/(1−gamma) = 500 simulations.
const banditGamma = 0.998

// banditFloor is the share of simulations given to a uniformly chosen arm
// whatever the posteriors say, so that no arm is starved of the
// evidence that would bring it back (and step 1 keeps feeding the profile
// P → S̄ that steps 2 and 3 steer with).
const banditFloor = 0.1

func newStepBandit(arms ...Step) *stepBandit {
	b := &stepBandit{Arms: arms, A: make([]float64, len(arms)), B: make([]float64, len(arms))}
	for i := range arms {
		b.A[i], b.B[i] = 1, 1
	}
	return b
}

// pick chooses the step of the next configuration.
func (b *stepBandit) pick(src rand.Source, rng *rand.Rand) Step {
	if rng.Float64() < banditFloor {
		return b.Arms[rng.IntN(len(b.Arms))]
	}
	best, bestV := 0, -1.0
	for i := range b.Arms {
		v := distuv.Beta{Alpha: b.A[i], Beta: b.B[i], Src: src}.Rand()
		if v > bestV {
			best, bestV = i, v
		}
	}
	return b.Arms[best]
}

// reward records the outcome of one simulation of step s.
func (b *stepBandit) reward(s Step, success bool) {
	for i := range b.Arms {
		// Decay toward the prior Beta(1, 1), not toward zero, so a
		// long-idle arm becomes uncertain again rather than degenerate.
		b.A[i] = 1 + (b.A[i]-1)*banditGamma
		b.B[i] = 1 + (b.B[i]-1)*banditGamma
		if b.Arms[i] == s {
			if success {
				b.A[i]++
			} else {
				b.B[i]++
			}
		}
	}
}

// fineNovelty says whether a simulation that found n new regions at the
// finest level (k = 1: single quantized states) found more than
// simulations recently did, and adds it to the discounted mean.
//
// Why: rewarding k = 16 alone made the schedule give nine simulations in
// ten to concatenation, whose runs replay their prefix through states
// already seen, and coverage at k = 1 fell below random testing's (8.9 M
// against 14.2 M states at budget 10,000, bench/results). A fresh run that
// explores many new fine states now counts as a success too, so the arms
// that widen coverage keep their share while those that deepen it keep
// theirs. The comparison is on log(1 + n), because fine yields span four
// decades between a short and a long run, and it is against the mean of
// the same discount as the posteriors.
func (b *stepBandit) fineNovelty(n uint64) bool {
	x := math.Log1p(float64(n))
	above := b.FineW > 0 && x > b.Fine/b.FineW
	b.Fine = b.Fine*banditGamma + x
	b.FineW = b.FineW*banditGamma + 1
	return above
}

// warmup is how many random simulations the adaptive schedule runs before
// steps 2 and 3 may be chosen: enough for the profile's local regressions
// (gradNeighbours samples) and for brackets in the store, a tenth of the
// budget between 64 and 256.
func warmup(budget int) int { return min(256, max(64, budget/10)) }

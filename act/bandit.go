package act

import (
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
// non-stationary bandits: a Bayesian approach"), with fractional rewards
// in [0, 1] (Agrawal & Goyal 2012: Beta–Bernoulli updates take a reward's
// expectation): a simulation that came closer to a condition than any
// before (directed ACT) scores 1; any other scores its yield (yieldScore),
// the new regions it found at the finest level and at k = 16 against what
// simulations recently found. Each arm
// keeps a Beta(A, B) posterior whose counts decay by gamma at every reward,
// so that an arm that stops paying (estimation, once its brackets are used
// up) loses its share within a few hundred simulations while one that
// starts paying (concatenation, once the store holds deep states) gains it.
//
// Why Thompson sampling and not UCB: the selector chooses two batches of
// configurations ahead of the merged results (runloop.go), so within those
// batches the posteriors do not move. UCB would give the whole batch to one
// arm; sampling spreads it in proportion to each arm's chance of being best.
//
// Determinism: draws come from the selector's PRNG, and rewards are added
// in configuration order at merge time, so a seed gives the same choices
// at any worker count and after a resume (A and B are checkpointed).
type stepBandit struct {
	Arms []Step
	A, B []float64
	// Yield is the discounted sum of new regions per simulation at the
	// finest level and at the reward level (k = 16), YieldW the
	// discounted number of simulations: Yield/YieldW is the recent mean.
	Yield  [2]float64
	YieldW float64
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

// reward records the outcome of one simulation of step s: r in [0, 1].
func (b *stepBandit) reward(s Step, r float64) {
	for i := range b.Arms {
		// Decay toward the prior Beta(1, 1), not toward zero, so a
		// long-idle arm becomes uncertain again rather than degenerate.
		b.A[i] = 1 + (b.A[i]-1)*banditGamma
		b.B[i] = 1 + (b.B[i]-1)*banditGamma
		if b.Arms[i] == s {
			b.A[i] += r
			b.B[i] += 1 - r
		}
	}
}

// yieldScore is the reward of a simulation that found fine new regions
// at the finest level (k = 1: single quantized states) and deep at k = 16:
// the mean over the two levels of its yield relative to the recent mean
// yield of all simulations, capped at yieldCap times that mean and scaled
// into [0, 1]. It then adds the simulation to the means.
//
// Why two levels: rewarding only a new region at k = 16 gave nine
// simulations in ten to concatenation, whose runs replay their prefix
// through states already seen, and coverage at k = 1 fell below random
// testing's (8.9 M against 14.2 M states at budget 10,000,
// bench/results/usecases-sooner-20261123.md).
// Estimation yields about as many fine states per simulation as random
// sampling and eight times as many regions at k = 16, and concatenation
// the most at k = 16 and the fewest fine ones: scoring both levels keeps
// each step's share in line with what it adds to coverage at every k.
// Why relative and capped: yields span decades between a short and a long
// run, and one lucky run must not dominate a posterior.
func (b *stepBandit) yieldScore(fine, deep uint64) float64 {
	r := 0.0
	for l, n := range [2]float64{float64(fine), float64(deep)} {
		switch {
		case b.Yield[l] > 0: // then YieldW > 0 too
			r += min(yieldCap, n/(b.Yield[l]/b.YieldW)) / (2 * yieldCap)
		case n > 0:
			r += 0.5
		}
		b.Yield[l] = b.Yield[l]*banditGamma + n
	}
	b.YieldW = b.YieldW*banditGamma + 1
	return r
}

// yieldCap is where a simulation's yield, relative to the recent mean,
// stops counting: a run with three times the mean's new regions scores as
// much as one with thirty. With the cap at the mean itself (1), every
// above-average run scored the same, so the bandit could not tell a step
// that beats the mean by a little from one that beats it by far; it gave
// concatenation (above the mean at k = 16 in most runs) 63% of the
// simulations and estimation 12%, and coverage at k = 1 fell to 0.92×
// random testing's. At 3, estimation gets about a quarter and coverage
// rose at every k up to 128 on two seeds: k = 1 from 0.92× to 1.12× and
// 0.91× to 1.07× random's, k = 16 from 18.7× to 23.4× and 21.9× to 22.7×
// (`actfuzz run act/default.yaml --budget 10000`, caps 1 to 4 and two
// other rewards: bench/results/compare-10000-yield-cap-20261123.tsv).
const yieldCap = 3

// warmup is how many random simulations the adaptive schedule runs before
// steps 2 and 3 may be chosen: enough for the profile's local regressions
// (gradNeighbours samples) and for brackets in the store, a tenth of the
// budget between 64 and 256.
func warmup(budget int) int { return min(256, max(64, budget/10)) }

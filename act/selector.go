package act

import (
	"math/rand/v2"
	"time"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/coverage"
	"github.com/actfuzz/actfuzz/netenv"
)

// Step names which ACT step produced a configuration.
type Step uint8

const (
	StepRandom        Step = 1 // step 1: uniform random sampling
	StepEstimation    Step = 2 // step 2: interpolation / extrapolation
	StepConcatenation Step = 3 // step 3: concatenation
	StepMAN           Step = 4 // MAN baseline
	StepRAN           Step = 5 // RAN baseline
	StepDirected      Step = 6 // directed ACT: toward a condition (directed.go)
	StepSymbolic      Step = 7 // symbolic windows at new moments (symstep.go)
)

func (s Step) String() string {
	return [...]string{"", "random", "estimation", "concatenation", "man", "ran", "directed", "symbolic"}[s]
}

// ReportSteps are the steps in the order reports list them.
var ReportSteps = []Step{StepRandom, StepEstimation, StepConcatenation, StepDirected, StepSymbolic, StepRAN, StepMAN}

// Config is a simulation configuration G = (e, [(p1,t1)…(pn,tn)]).
type Config struct {
	Seed     uint64
	Schedule netenv.Schedule
	Step     Step
}

// selector picks configurations for one method.
type selector struct {
	c      *Campaign
	method string
	src    *rand.PCG
	rng    *rand.Rand
	store  *coverage.Store
	log    *configLog
	err    error // the first error reading the log; the run stops on it
	prof   *profile
	man    []netenv.Env
	step   Step
	signs  []int
	// bandit, when set, chooses the step of each configuration after
	// warm random ones (the adaptive schedule, bandit.go).
	bandit *stepBandit
	warm   int
	// dir, when set, is directed ACT's state (directed.go).
	dir *directedState
	pc  []float64
}

func (s *selector) newSeed() uint64 { return s.rng.Uint64() }

// next returns the next configuration.
func (s *selector) next() Config {
	switch s.method {
	case "ran":
		return Config{Seed: s.newSeed(), Schedule: netenv.Constant(s.c.uniformEnv(s.rng)), Step: StepRAN}
	case "man":
		i := s.log.len() % len(s.man)
		return Config{Seed: s.newSeed(), Schedule: netenv.Constant(s.man[i]), Step: StepMAN}
	}
	if s.bandit != nil {
		if s.log.len() < s.warm {
			s.step = StepRandom
		} else {
			s.step = s.bandit.pick(s.src, s.rng)
		}
	}
	if s.dir != nil && s.bandit == nil && s.step != StepRandom && s.rng.IntN(4) == 0 {
		// The paper's schedule with directed on: a quarter of the
		// configurations after step 1 are directed.
		if g, ok := s.directed(); ok {
			return g
		}
	}
	switch s.step {
	case StepEstimation:
		if g, ok := s.estimation(); ok {
			return g
		}
	case StepConcatenation:
		if g, ok := s.concatenation(); ok {
			return g
		}
	case StepDirected:
		if g, ok := s.directed(); ok {
			return g
		}
	}
	return Config{Seed: s.newSeed(), Schedule: netenv.Constant(s.c.uniformEnv(s.rng)), Step: StepRandom}
}

// envOf is the environment under which a pooled visit happened; ok is
// false (and s.err set) when the configuration log cannot be read.
func (s *selector) envOf(v coverage.Visit) (g Config, e netenv.Env, ok bool) {
	g, err := s.log.get(int(v.Config))
	if err != nil {
		if s.err == nil {
			s.err = err
		}
		return g, e, false
	}
	return g, corpus.EnvAt(g.Schedule, time.Duration(v.At)), true
}

// estimation is ACT Method 1 for a uniformly chosen unvisited state: at
// the smallest k with a visited pair bracketing R(s*,k), interpolate
// between their environments; failing that, extrapolate from a neighbour.
// The store searches every k in one walk.
func (s *selector) estimation() (Config, bool) {
	star, ok := s.store.SampleUnvisited(s.rng, 1)
	if !ok {
		return Config{}, false
	}
	est, ok := s.store.SearchEstimation(s.rng, star)
	if !ok {
		return Config{}, false
	}
	if est.Interpolate {
		_, pa, okA := s.envOf(s.store.RandomVisit(s.rng, est.Bracket.A))
		_, pb, okB := s.envOf(s.store.RandomVisit(s.rng, est.Bracket.B))
		if !okA || !okB {
			return Config{}, false
		}
		var e netenv.Env
		for i, r := range s.c.Params {
			e.Set(i, r.Between(s.rng, pa.Get(i), pb.Get(i)))
		}
		return Config{Seed: s.newSeed(), Schedule: netenv.Constant(e), Step: StepEstimation}, true
	}
	_, pc, ok := s.envOf(est.Neighbour.Visit)
	if !ok {
		return Config{}, false
	}
	e := s.steer(pc, est.Neighbour, star)
	return Config{Seed: s.newSeed(), Schedule: netenv.Constant(e), Step: StepEstimation}, true
}

// steer draws p* on the side of p^c where S̄_j moves toward s*_j (Method 1
// lines 20–26, Method 2 lines 9–15).
func (s *selector) steer(pc netenv.Env, nb coverage.Neighbour, star []float64) netenv.Env {
	sc := s.store.State(nb.Ref)
	j := nb.Var
	dir := 0
	if star[j] > sc[j] {
		dir = 1
	} else if star[j] < sc[j] {
		dir = -1
	}
	s.c.normalize(&pc, s.pc)
	s.signs = s.prof.signs(s.pc, j, s.signs)
	var e netenv.Env
	k := 0 // s.signs covers the varied parameters only
	for i, r := range s.c.Params {
		sign := 0
		if !r.Fixed() {
			sign = s.signs[k]
			k++
		}
		e.Set(i, extrapolate(r, s.rng, pc.Get(i), sign*dir))
	}
	return e
}

// concatenation is ACT Method 2: replay G^d up to the visit time t_n of a
// neighbouring state, then switch to a steered p*.
func (s *selector) concatenation() (Config, bool) {
	star, ok := s.store.SampleUnvisited(s.rng, 1)
	if !ok {
		return Config{}, false
	}
	_, nb, ok := s.store.SearchConcatenation(s.rng, star)
	if !ok {
		return Config{}, false
	}
	gd, _, ok := s.envOf(nb.Visit)
	if !ok {
		return Config{}, false
	}
	tn := time.Duration(nb.Visit.At)
	if tn <= 0 {
		return Config{}, false
	}
	// The schedule of G^d up to t_n.
	sched := prefixUntil(gd.Schedule, tn)
	last := sched[len(sched)-1].Env
	e := s.steer(last, nb, star)
	sched = append(sched, netenv.Phase{Env: e})
	return Config{Seed: gd.Seed, Schedule: sched, Step: StepConcatenation}, true
}

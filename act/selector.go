package act

import (
	"math/rand/v2"
	"slices"
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
	// phasesCapped counts the schedules the concatenation and directed
	// steps did not extend because they had netenv.MaxPhases phases
	// (Report.PhasesCapped).
	phasesCapped int
}

func (s *selector) newSeed() uint64 { return s.rng.Uint64() }

// phaseCapped says whether a schedule cut to be extended by one phase is
// at max_phases already, and counts it: the step then chooses otherwise.
func (s *selector) phaseCapped(sched netenv.Schedule) bool {
	if len(sched) < netenv.MaxPhases {
		return false
	}
	s.phasesCapped++
	return true
}

// A pick is a configuration chosen up to the visits it draws from pools:
// of the bracket's two states (ACT Method 1 line 8) or of the neighbour
// (Method 1 line 15, Method 2 line 3). A selection picks all its
// configurations first, then reads every pool they need at once
// (coverage.Store.Pools: with store parts, one request a part instead of
// one a visit, each a round trip when the parts are across a network),
// then finishes each pick. Everything a pick draws from its visits on
// comes from a stream of its own, seeded by a draw from the selector's
// (sub), so the selector's stream, and every later pick, does not depend
// on what the pools hold: a selection's configurations are the same
// whether its picks are finished one by one or at once.
type pick struct {
	g      Config // the configuration, if finish is nil
	refs   []coverage.StateRef
	sub    uint64
	finish func(rng *rand.Rand, visits []coverage.Visit) (Config, bool)
}

// pickStream is the second seed of a pick's stream (rand.NewPCG).
const pickStream = 0x7069636b73747265 // "pickstre"

// nextBatch appends n configurations to dst: n picks, the pools they
// need, read at once, and the picks finished in order. If the pools
// cannot be read (the store's PoolErr) it returns dst as it was.
func (s *selector) nextBatch(dst []Config, n int) []Config {
	picks := make([]pick, n)
	var refs []coverage.StateRef
	for i := range picks {
		picks[i] = s.pick(i)
		refs = append(refs, picks[i].refs...)
	}
	var pools [][]coverage.Visit
	if len(refs) > 0 {
		if pools = s.store.Pools(refs); s.store.PoolErr() != nil {
			return dst
		}
	}
	var visits []coverage.Visit
	for _, p := range picks {
		if p.finish == nil {
			dst = append(dst, p.g)
			continue
		}
		rng := rand.New(rand.NewPCG(p.sub, pickStream))
		visits = visits[:0]
		for _, pool := range pools[:len(p.refs)] {
			visits = append(visits, pool[rng.IntN(len(pool))])
		}
		pools = pools[len(p.refs):]
		g, ok := p.finish(rng, visits)
		if !ok {
			g = s.random(rng)
		}
		dst = append(dst, g)
	}
	return dst
}

// random is a configuration of step 1: a uniform environment.
func (s *selector) random(rng *rand.Rand) Config {
	return Config{Seed: rng.Uint64(), Schedule: netenv.Constant(s.c.uniformEnv(rng)), Step: StepRandom}
}

// pick chooses the next configuration, or all of it but its visits;
// ahead configurations of the selection under way precede it (they are
// not in the log yet).
func (s *selector) pick(ahead int) pick {
	switch s.method {
	case "ran":
		return pick{g: Config{Seed: s.newSeed(), Schedule: netenv.Constant(s.c.uniformEnv(s.rng)), Step: StepRAN}}
	case "man":
		i := (s.log.len() + ahead) % len(s.man)
		return pick{g: Config{Seed: s.newSeed(), Schedule: netenv.Constant(s.man[i]), Step: StepMAN}}
	}
	if s.bandit != nil {
		if s.log.len()+ahead < s.warm {
			s.step = StepRandom
		} else {
			s.step = s.bandit.pick(s.src, s.rng)
		}
	}
	if s.dir != nil && s.bandit == nil && s.step != StepRandom && s.rng.IntN(4) == 0 {
		// The paper's schedule with directed on: a quarter of the
		// configurations after step 1 are directed.
		if g, ok := s.directed(); ok {
			return pick{g: g}
		}
	}
	switch s.step {
	case StepEstimation:
		if p, ok := s.estimation(); ok {
			return p
		}
	case StepConcatenation:
		if p, ok := s.concatenation(); ok {
			return p
		}
	case StepDirected:
		if g, ok := s.directed(); ok {
			return pick{g: g}
		}
	}
	return pick{g: s.random(s.rng)}
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
func (s *selector) estimation() (pick, bool) {
	star, ok := s.store.SampleUnvisited(s.rng, 1)
	if !ok {
		return pick{}, false
	}
	est, ok := s.store.SearchEstimation(s.rng, star)
	if !ok {
		return pick{}, false
	}
	if est.Interpolate {
		return pick{refs: []coverage.StateRef{est.Bracket.A, est.Bracket.B}, sub: s.rng.Uint64(),
			finish: func(rng *rand.Rand, v []coverage.Visit) (Config, bool) {
				_, pa, okA := s.envOf(v[0])
				_, pb, okB := s.envOf(v[1])
				if !okA || !okB {
					return Config{}, false
				}
				var e netenv.Env
				for i, r := range s.c.Params {
					e.Set(i, r.Between(rng, pa.Get(i), pb.Get(i)))
				}
				return Config{Seed: rng.Uint64(), Schedule: netenv.Constant(e), Step: StepEstimation}, true
			}}, true
	}
	nb, star := est.Neighbour, slices.Clone(star)
	return pick{refs: []coverage.StateRef{nb.Ref}, sub: s.rng.Uint64(),
		finish: func(rng *rand.Rand, v []coverage.Visit) (Config, bool) {
			_, pc, ok := s.envOf(v[0])
			if !ok {
				return Config{}, false
			}
			e := s.steer(rng, pc, nb, star)
			return Config{Seed: rng.Uint64(), Schedule: netenv.Constant(e), Step: StepEstimation}, true
		}}, true
}

// steer draws p* on the side of p^c where S̄_j moves toward s*_j (Method 1
// lines 20–26, Method 2 lines 9–15).
func (s *selector) steer(rng *rand.Rand, pc netenv.Env, nb coverage.Neighbour, star []float64) netenv.Env {
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
		e.Set(i, extrapolate(r, rng, pc.Get(i), sign*dir))
	}
	return e
}

// concatenation is ACT Method 2: replay G^d up to the visit time t_n of a
// neighbouring state, then switch to a steered p*.
func (s *selector) concatenation() (pick, bool) {
	star, ok := s.store.SampleUnvisited(s.rng, 1)
	if !ok {
		return pick{}, false
	}
	_, nb, ok := s.store.SearchConcatenation(s.rng, star)
	if !ok {
		return pick{}, false
	}
	star = slices.Clone(star)
	return pick{refs: []coverage.StateRef{nb.Ref}, sub: s.rng.Uint64(),
		finish: func(rng *rand.Rand, v []coverage.Visit) (Config, bool) {
			gd, _, ok := s.envOf(v[0])
			if !ok {
				return Config{}, false
			}
			tn := time.Duration(v[0].At)
			if tn <= 0 {
				return Config{}, false
			}
			// The schedule of G^d up to t_n.
			sched := prefixUntil(gd.Schedule, tn)
			if s.phaseCapped(sched) {
				return Config{}, false
			}
			last := sched[len(sched)-1].Env
			e := s.steer(rng, last, nb, star)
			sched = append(sched, netenv.Phase{Env: e})
			return Config{Seed: gd.Seed, Schedule: sched, Step: StepConcatenation}, true
		}}, true
}

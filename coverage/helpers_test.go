package coverage

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// synthSim emits the states of a crude AIMD flow over a random path: slow
// start from cwnd 10 with an infinite ssthresh (out of S, as in Linux), halving
// on random loss and on queue overflow, srtt/rttvar smoothed as in RFC 6298.
// It stands in for a simulator in tests and benchmarks.
func synthSim(rng *rand.Rand, steps int, emit func(st []float64, at int64)) {
	loss := math.Pow(10, -1-5*rng.Float64())
	base := 1 + 999*rng.Float64() // ms
	bdp := 1 + 2000*rng.Float64() // packets
	buf := 1 + 500*rng.Float64()  // packets
	cwnd, ssthresh := 10.0, float64(0x7fffffff)
	srtt, rttvar := base, base/2
	ca := 0.0
	t := int64(0)
	st := make([]float64, 5)
	for range steps {
		q := math.Max(0, cwnd-bdp)
		sample := base * (1 + q/bdp) * (1 + 0.05*rng.NormFloat64())
		if sample < 0 {
			sample = base
		}
		rttvar = 0.75*rttvar + 0.25*math.Abs(sample-srtt)
		srtt = 0.875*srtt + 0.125*sample
		switch {
		case rng.Float64() < loss || q > buf:
			ssthresh = math.Max(cwnd/2, 2)
			cwnd = ssthresh
			ca = 3
		case rng.Float64() < 0.001:
			cwnd, ssthresh, ca = 1, math.Max(cwnd/2, 2), 4
		case cwnd < ssthresh:
			cwnd++
			ca = 0
		default:
			cwnd += 1 / cwnd
			ca = 0
		}
		t += int64(sample * 1e6 / math.Max(cwnd, 1))
		st[0], st[1], st[2], st[3], st[4] = math.Floor(cwnd), math.Floor(ssthresh), srtt, rttvar, ca
		emit(st, t)
	}
}

// fillSynth adds sims synthetic simulations of steps states each to s, one
// Batch per simulation, configs numbered from cfg0.
func fillSynth(s *Store, rng *rand.Rand, sims, steps int, cfg0 uint64) {
	b := s.NewBatch()
	full := make([]float64, s.Space().Dim()) // extra variables stay at their first granule
	for j, v := range s.Space().Vars {
		full[j] = v.Value(0)
	}
	for i := range sims {
		b.Reset()
		synthSim(rng, steps, func(st []float64, at int64) {
			copy(full, st)
			b.Observe(full, at)
		})
		s.AddBatch(b, cfg0+uint64(i))
	}
}

// model is a brute-force reference: the set of visited granule vectors and
// the set of visited region vectors at every level.
type model struct {
	sp      Space
	states  map[string][]int64
	regions []map[string]bool
}

func newModel(sp Space) *model {
	m := &model{sp: sp, states: map[string][]int64{}}
	for range sp.MaxLevel() + 1 {
		m.regions = append(m.regions, map[string]bool{})
	}
	return m
}

func gkey(g []int64) string { return fmt.Sprint(g) }

func (m *model) granules(st []float64) ([]int64, bool) {
	g := make([]int64, len(st))
	for i, v := range m.sp.Vars {
		var ok bool
		if g[i], ok = v.Granule(st[i]); !ok {
			return nil, false
		}
	}
	return g, true
}

func (m *model) region(g []int64, l int) []int64 {
	r := make([]int64, len(g))
	for i, v := range m.sp.Vars {
		r[i] = g[i]
		if !v.Categorical() {
			r[i] >>= uint(l)
		}
	}
	return r
}

func (m *model) add(st []float64) {
	g, ok := m.granules(st)
	if !ok {
		return
	}
	m.states[gkey(g)] = g
	for l := range m.regions {
		m.regions[l][gkey(m.region(g, l))] = true
	}
}

// randomState draws a state uniformly in S (granule representatives).
func randomState(rng *rand.Rand, sp Space) []float64 {
	st := make([]float64, len(sp.Vars))
	for i, v := range sp.Vars {
		st[i] = v.Value(rng.Int64N(v.Granules()))
	}
	return st
}

func smallSpace() Space {
	return Space{Vars: []Var{
		{Name: "x", Min: 0, Max: 15, Step: 1},
		{Name: "y", Min: 0, Max: 22, Step: 2}, // 12 granules: partial last interval at k ≥ 8
		{Name: "c", Values: []string{"a", "b", "c"}},
	}}
}

func mustStore(t testing.TB, sp Space, opt Options) *Store {
	t.Helper()
	s, err := NewStore(sp, opt)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// nthRef returns the i-th ref of s.States().
func nthRef(s *Store, i int) StateRef {
	for sh, p := range s.pooled {
		if i < p.st.len() {
			return makeRef(sh, uint32(i))
		}
		i -= p.st.len()
	}
	panic("nthRef: out of range")
}

package act

import (
	"math"
	"slices"
	"time"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/netenv"
)

// Directed ACT (issue 21 item 2). Each condition with a branch distance
// (corpus.CompileDistance) is a target: every run reports, per condition,
// the smallest distance it reached and when (Runner.distances). The
// directed step takes one of the best runs of a condition not yet hit and
// moves against the distance's gradient in P, as ACT's estimation moves
// along the gradient of S̄ (ACT §3.2, the same local regression,
// profile.signs, over the environments in effect at the best moments):
// a fresh run between two of the best runs' environments (interpolation,
// a third of the time), a fresh run in the moved environment
// (extrapolation), or the best run replayed up to the moment of its best
// state and continued in the moved environment (concatenation at that time,
// ACT §3.3). It runs
// alongside the coverage steps; the bandit (bandit.go) gives it a share by
// how often it lowers a best distance.
//
// Which conditions get a useful distance: comparisons of numeric
// expressions (+ − * / % over variables, prev.X and constants) joined by
// &&, || and !, and == / != of ca_state or other categorical variables
// with strings. A condition with anything else (function calls, ?:, in,
// matches) has none and is left to coverage guidance. A distance is only
// as useful as it is smooth: cwnd > 1e7 measures how far cwnd is from
// 1e7, which says nothing of an overflow that jumps there in one ACK.
type directedState struct {
	// Per condition of the campaign: the best runs so far (ascending
	// distance, at most dirKeep), and the samples (environment at the
	// best moment, normalized; that distance) for the gradient.
	Best [][]dirEntry
	P    [][][]float64
	S    [][][]float64
}

type dirEntry struct {
	Config int
	Dist   float64
	At     int64
}

const (
	dirKeep    = 16   // best runs kept per condition
	dirPick    = 4    // the directed step starts from one of the best dirPick
	dirSamples = 2048 // gradient samples kept per condition (the newest)
	// dirStride is the share of P's span a directed move covers at
	// most: far enough to leave a plateau, near enough to stay local.
	dirStride = 0.2
)

func newDirectedState(conds int) *directedState {
	return &directedState{Best: make([][]dirEntry, conds), P: make([][][]float64, conds), S: make([][][]float64, conds)}
}

// add records run idx of configuration g; it reports whether the run
// lowered the best distance of any condition (the directed reward) and,
// if so, when the first such condition's best was reached.
func (d *directedState) add(c *Campaign, idx int, g Config, best []float64, at []int64) (improved bool, when int64) {
	for ci, v := range best {
		if ci >= len(d.Best) || math.IsInf(v, 1) || math.IsNaN(v) {
			continue
		}
		b := d.Best[ci]
		if len(b) == 0 || v < b[0].Dist {
			if !improved {
				when = at[ci]
			}
			improved = true
		}
		i, _ := slices.BinarySearchFunc(b, v, func(e dirEntry, v float64) int {
			if e.Dist <= v { // after equal distances: the earlier run stays first
				return -1
			}
			return 1
		})
		if i < dirKeep {
			b = slices.Insert(b, i, dirEntry{Config: idx, Dist: v, At: at[ci]})
			d.Best[ci] = b[:min(len(b), dirKeep)]
		}
		env := corpus.EnvAt(g.Schedule, time.Duration(at[ci]))
		p := make([]float64, c.dimP())
		c.normalize(&env, p)
		d.P[ci] = append(d.P[ci], p)
		d.S[ci] = append(d.S[ci], []float64{v})
		if n := len(d.P[ci]); n > dirSamples {
			d.P[ci] = slices.Delete(d.P[ci], 0, n-dirSamples)
			d.S[ci] = slices.Delete(d.S[ci], 0, n-dirSamples)
		}
	}
	return improved, when
}

// directed is the directed step; ok is false when no condition has a run
// to start from yet.
func (s *selector) directed() (Config, bool) {
	d := s.dir
	var open, any []int
	for ci, b := range d.Best {
		if len(b) == 0 {
			continue
		}
		any = append(any, ci)
		if b[0].Dist > 0 {
			open = append(open, ci)
		}
	}
	// Conditions not yet hit first: a hit one has nothing left to
	// approach, but other regions where it holds may still matter.
	if len(open) == 0 {
		open = any
	}
	if len(open) == 0 {
		return Config{}, false
	}
	ci := open[s.rng.IntN(len(open))]
	b := d.Best[ci]
	e := b[s.rng.IntN(min(len(b), dirPick))]
	g, err := s.log.get(e.Config)
	if err != nil {
		if s.err == nil {
			s.err = err
		}
		return Config{}, false
	}
	tn := time.Duration(e.At)
	env := corpus.EnvAt(g.Schedule, tn)
	if n := min(len(b), dirPick); n >= 2 && s.rng.IntN(3) == 0 {
		// Interpolation between two of the best runs (ACT Method 1's
		// bracket, with the distance in place of S): the region between
		// two near misses is where a hit is likeliest.
		o := b[(slices.Index(b, e)+1+s.rng.IntN(n-1))%n]
		og, err := s.log.get(o.Config)
		if err != nil {
			if s.err == nil {
				s.err = err
			}
			return Config{}, false
		}
		oenv := corpus.EnvAt(og.Schedule, time.Duration(o.At))
		var mid netenv.Env
		for i, r := range s.c.Params {
			mid.Set(i, r.Between(s.rng, env.Get(i), oenv.Get(i)))
		}
		return Config{Seed: s.newSeed(), Schedule: netenv.Constant(mid), Step: StepDirected}, true
	}
	s.c.normalize(&env, s.pc)
	pr := profile{dimP: s.c.dimP(), dimS: 1, p: d.P[ci], s: d.S[ci]}
	s.signs = pr.signs(s.pc, 0, s.signs)
	var moved netenv.Env
	k := 0 // s.signs covers the varied parameters only
	for i, r := range s.c.Params {
		if r.Fixed() {
			moved.Set(i, env.Get(i))
			continue
		}
		moved.Set(i, downhill(r, s, env.Get(i), -s.signs[k]))
		k++
	}
	if tn <= 0 || s.rng.IntN(2) == 0 {
		return Config{Seed: s.newSeed(), Schedule: netenv.Constant(moved), Step: StepDirected}, true
	}
	sched := prefixUntil(g.Schedule, tn)
	if s.phaseCapped(sched) {
		return Config{Seed: s.newSeed(), Schedule: netenv.Constant(moved), Step: StepDirected}, true
	}
	sched = append(sched, netenv.Phase{Env: moved})
	return Config{Seed: g.Seed, Schedule: sched, Step: StepDirected}, true
}

// downhill draws a value of parameter r near v on the side dir points to
// (+1 above, −1 below), at most dirStride of the range away; with dir 0
// (no gradient) on either side, nearer. A categorical parameter keeps its
// value three times in four.
func downhill(r Range, s *selector, v float64, dir int) float64 {
	if r.Categorical() {
		if s.rng.IntN(4) == 0 {
			return r.Uniform(s.rng)
		}
		return v
	}
	h := dirStride * (r.Max - r.Min)
	switch {
	case dir > 0:
		return r.Between(s.rng, v, math.Min(r.Max, v+h))
	case dir < 0:
		return r.Between(s.rng, math.Max(r.Min, v-h), v)
	}
	return r.Between(s.rng, math.Max(r.Min, v-h/4), math.Min(r.Max, v+h/4))
}

// prefixUntil is a schedule cut at tn: its phases up to tn, the one in
// effect at tn ending there.
func prefixUntil(sched netenv.Schedule, tn time.Duration) netenv.Schedule {
	var out netenv.Schedule
	for i, ph := range sched {
		if i < len(sched)-1 && ph.Until < tn {
			out = append(out, ph)
			continue
		}
		ph.Until = tn
		out = append(out, ph)
		break
	}
	return out
}

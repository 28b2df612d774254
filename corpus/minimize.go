package corpus

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/actfuzz/actfuzz/netenv"
)

// MinimizeReport describes what minimization changed.
type MinimizeReport struct {
	Runs       int      `json:"runs"`
	PhasesFrom int      `json:"phases_from"`
	PhasesTo   int      `json:"phases_to"`
	HitFromNS  int64    `json:"hit_from_ns"`
	HitToNS    int64    `json:"hit_to_ns"`
	BytesFrom  uint64   `json:"bytes_from"`
	BytesTo    uint64   `json:"bytes_to"`
	Simplified []string `json:"simplified"`
}

// ErrNoHit (wrapped) is Minimize's error for a seed that does not hit its
// condition.
var ErrNoHit = errors.New("the seed does not hit")

// Minimize shrinks a finding's seed while its condition still holds
// (delta debugging, Zeller & Hildebrandt, TSE 2002, one change at a time):
// first the shortest schedule (drop phases), then the simplest parameters
// (loss and queuing delay to 0, an unlimited application, round numbers
// for bandwidth, delay and buffer), then the earliest hit (try other seeds
// and keep the one that hits first), and finally the smallest transfer that
// still reaches the hit. Every candidate is one simulation; maxRuns bounds
// them. The returned seed's finding records the new hit.
func Minimize(ctx context.Context, subj netenv.Subject, s *Seed, maxRuns int) (*Seed, *MinimizeReport, error) {
	if s.Finding == nil || s.Finding.Kind != "condition" {
		return nil, nil, errors.New("minimize needs a seed with a condition finding")
	}
	if maxRuns <= 0 {
		maxRuns = 400
	}
	rep := &MinimizeReport{PhasesFrom: len(s.Schedule), HitFromNS: s.Finding.TimeNS, BytesFrom: s.Bytes}
	best := clone(s)
	// hits re-runs a candidate and returns its first hit time, or -1.
	hits := func(c *Seed) (int64, map[string]any, error) {
		if rep.Runs >= maxRuns {
			return -1, nil, nil
		}
		rep.Runs++
		if err := c.Validate(); err != nil {
			return -1, nil, nil
		}
		r, err := ReplayWith(ctx, subj, c, nil)
		if err != nil {
			var fault *netenv.Fault
			if errors.As(err, &fault) {
				return -1, nil, nil
			}
			return -1, nil, err
		}
		return r.HitTimeNS, r.HitState, nil
	}
	at, state, err := hits(best)
	if err != nil {
		return nil, nil, err
	}
	if at < 0 {
		return nil, nil, fmt.Errorf("%w %q to begin with", ErrNoHit, s.Finding.Condition)
	}
	accept := func(c *Seed, t int64, st map[string]any) {
		best, at, state = c, t, st
	}
	try := func(c *Seed, what string) error {
		t, st, err := hits(c)
		if err != nil {
			return err
		}
		if t >= 0 {
			accept(c, t, st)
			rep.Simplified = append(rep.Simplified, what)
		}
		return nil
	}

	// 1. Shortest schedule: drop a phase, letting its neighbour take its
	// time span; the last phase can only go by letting the previous one
	// run to the end.
	for changed := true; changed && len(best.Schedule) > 1; {
		changed = false
		for i := range best.Schedule {
			c := clone(best)
			if i == len(c.Schedule)-1 {
				c.Schedule = c.Schedule[:i]
				c.Schedule[i-1].Until = 0
			} else {
				c.Schedule = slices.Delete(c.Schedule, i, i+1)
			}
			t, st, err := hits(c)
			if err != nil {
				return nil, nil, err
			}
			if t >= 0 {
				accept(c, t, st)
				rep.Simplified = append(rep.Simplified, fmt.Sprintf("dropped phase %d of %d (hit at %.3f s)", i+1, len(c.Schedule)+1, float64(t)/1e9))
				changed = true
				break
			}
		}
	}

	// 2. Simplest parameters, phase by phase.
	for pi := range best.Schedule {
		for _, step := range simplifications {
			c := clone(best)
			env := &c.Schedule[pi].Env
			if !step.apply(env) {
				continue
			}
			if err := try(c, fmt.Sprintf("phase %d: %s", pi+1, step.name)); err != nil {
				return nil, nil, err
			}
		}
	}

	// 3. Earliest hit: other seeds e may reach the same condition sooner.
	for k := uint64(1); k <= 16 && rep.Runs < maxRuns; k++ {
		c := clone(best)
		c.Seed = best.Seed ^ (k * 0x9e3779b97f4a7c15)
		t, st, err := hits(c)
		if err != nil {
			return nil, nil, err
		}
		if t >= 0 && t < at {
			rep.Simplified = append(rep.Simplified, fmt.Sprintf("seed %d hits earlier: at %.3f s instead of %.3f s", c.Seed, float64(t)/1e9, float64(at)/1e9))
			accept(c, t, st)
		}
	}

	// 4. Smallest transfer: data delivered after the hit cannot matter
	// to it, but the transfer's end can (the tail), so halve while it
	// still hits.
	for rep.Runs < maxRuns {
		c := clone(best)
		c.Bytes = best.Bytes / 2
		if c.Bytes < 10*1448 {
			break
		}
		t, st, err := hits(c)
		if err != nil {
			return nil, nil, err
		}
		if t < 0 {
			break
		}
		accept(c, t, st)
	}

	out := clone(best)
	out.Finding.TimeNS = at
	out.Finding.State = state
	rep.PhasesTo, rep.HitToNS, rep.BytesTo = len(out.Schedule), at, out.Bytes
	return out, rep, nil
}

type simplification struct {
	name  string
	apply func(e *netenv.Env) bool // false when nothing would change
}

func roundTo(v float64, digits int) float64 {
	if v == 0 {
		return 0
	}
	p := math.Pow(10, float64(digits)-math.Ceil(math.Log10(math.Abs(v))))
	return math.Round(v*p) / p
}

var simplifications = []simplification{
	{"no random loss", func(e *netenv.Env) bool { ch := e.Loss != 0; e.Loss = 0; return ch }},
	{"no random queuing delay", func(e *netenv.Env) bool {
		ch := e.QShape != 0 || e.QScale != 0
		e.QShape, e.QScale = 0, 0
		return ch
	}},
	{"unlimited application", func(e *netenv.Env) bool { ch := e.App != 10000; e.App = 10000; return ch }},
	{"bandwidth to 1 significant digit", func(e *netenv.Env) bool { v := roundTo(e.BW, 1); ch := v != e.BW && v > 0; e.BW = v; return ch }},
	{"bandwidth to 2 significant digits", func(e *netenv.Env) bool { v := roundTo(e.BW, 2); ch := v != e.BW && v > 0; e.BW = v; return ch }},
	{"delay to 1 significant digit", func(e *netenv.Env) bool { v := roundTo(e.Delay, 1); ch := v != e.Delay; e.Delay = v; return ch }},
	{"delay to 2 significant digits", func(e *netenv.Env) bool { v := roundTo(e.Delay, 2); ch := v != e.Delay; e.Delay = v; return ch }},
	{"buffer to 1 significant digit", func(e *netenv.Env) bool {
		v := int(roundTo(float64(e.Buffer), 1))
		ch := v != e.Buffer && v > 0
		e.Buffer = v
		return ch
	}},
	{"loss to 1 significant digit", func(e *netenv.Env) bool { v := roundTo(e.Loss, 1); ch := v != e.Loss; e.Loss = v; return ch }},
	{"queuing shape to 1 significant digit", func(e *netenv.Env) bool { v := roundTo(e.QShape, 1); ch := v != e.QShape; e.QShape = v; return ch }},
	{"queuing scale to 1 significant digit", func(e *netenv.Env) bool { v := roundTo(e.QScale, 1); ch := v != e.QScale; e.QScale = v; return ch }},
}

func clone(s *Seed) *Seed {
	c := *s
	c.CCAI = slices.Clone(s.CCAI)
	c.Schedule = slices.Clone(s.Schedule)
	if s.Finding != nil {
		f := *s.Finding
		c.Finding = &f
	}
	return &c
}

package corpus

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/actfuzz/actfuzz/internal/bounded"
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
	// Hung counts the candidates whose run went past the watchdog.
	Hung int `json:"hung,omitempty"`
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
	return MinimizeWith(ctx, subj, s, maxRuns, 0)
}

// MinimizeWith is Minimize with a watchdog on each simulation (0: none):
// a candidate whose run goes past it does not hit (MinimizeReport.Hung
// counts them; a hang is not a simpler reproduction), the seed's own
// first run going past it is ErrNoHit, and a run that does not even stop
// when told to (internal/bounded's ErrAbandoned) ends the minimization
// with that error, as nothing more can run beside it.
func MinimizeWith(ctx context.Context, subj netenv.Subject, s *Seed, maxRuns int, watchdog time.Duration) (*Seed, *MinimizeReport, error) {
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
		r, err := bounded.Run(ctx, watchdog, func(ctx context.Context) (*ReplayResult, error) { return ReplayWith(ctx, subj, c, nil) })
		if err != nil {
			var fault *netenv.Fault
			switch {
			case errors.As(err, &fault):
				return -1, nil, nil
			case errors.Is(err, bounded.ErrWatchdog) && !errors.Is(err, bounded.ErrAbandoned):
				rep.Hung++
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
		if rep.Hung > 0 {
			return nil, nil, fmt.Errorf("%w %q to begin with: its run went past the watchdog (%v)", ErrNoHit, s.Finding.Condition, watchdog)
		}
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
		for _, step := range simplifications() {
			c := clone(best)
			env := &c.Schedule[pi].Env
			if !step.param.Apply(step.rule, env) {
				continue
			}
			if err := try(c, fmt.Sprintf("phase %d: %s", pi+1, step.rule.Name)); err != nil {
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

// simplification is one rule of a parameter, applied to a phase.
type simplification struct {
	param *netenv.Param
	rule  netenv.Simplification
}

// simplifications are the rules of netenv's parameter table, stage by
// stage and, within a stage, in table order: remove the nuisances first
// (loss, random queuing, a slow application), then round the path
// (bandwidth, delay, buffer), then round what nuisances are left.
func simplifications() []simplification {
	var out []simplification
	for i := range netenv.NumParams {
		p := netenv.ParamAt(i)
		for _, r := range p.Simplify {
			out = append(out, simplification{p, r})
		}
	}
	slices.SortStableFunc(out, func(a, b simplification) int { return a.rule.Stage - b.rule.Stage })
	return out
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

package symbolic

import (
	"slices"
	"time"
)

// outcomeTally keeps, while explore runs, the branches a report names:
// the first branch of every outcome and the branches at each metric's
// minimum and maximum (SEIB reports an outcome's witness and a metric's
// worst and best case).
type outcomeTally struct {
	outcomes map[string]firstOutcome
	ext      []Extreme
}

// firstOutcome is the first branch that reached an outcome, and its
// witness delays in ms.
type firstOutcome struct {
	w  []float64
	id int
}

func newOutcomeTally(metrics int) *outcomeTally {
	return &outcomeTally{outcomes: map[string]firstOutcome{}, ext: make([]Extreme, metrics)}
}

// note records branch id, with outcome key, witness w and metric values,
// and reports whether the branch is notable: the first of its outcome, or
// a new extreme of some metric.
func (t *outcomeTally) note(id int, key string, w []float64, values []int64) bool {
	notable := false
	if _, ok := t.outcomes[key]; !ok {
		t.outcomes[key] = firstOutcome{w, id}
		notable = true
	}
	for i, v := range values {
		e := &t.ext[i]
		if id == 0 || v < e.Min {
			e.Min, e.MinBranch, e.MinWitness = v, id, w
			notable = true
		}
		if id == 0 || v > e.Max {
			e.Max, e.MaxBranch, e.MaxWitness = v, id, w
			notable = true
		}
	}
	return notable
}

// finish writes the tally into rep: its outcomes in order with their first
// branches, its extremes named by metric, and only the notable branches
// that are still an outcome's first or an extreme (a later branch may have
// superseded an extreme).
func (t *outcomeTally) finish(rep *Report, c *compiled) {
	for k := range t.outcomes {
		rep.Outcomes = append(rep.Outcomes, k)
	}
	slices.Sort(rep.Outcomes)
	for _, k := range rep.Outcomes {
		rep.OutcomeWitness = append(rep.OutcomeWitness, t.outcomes[k].w)
		rep.OutcomeBranch = append(rep.OutcomeBranch, t.outcomes[k].id)
	}
	keepIDs := map[int]bool{}
	for _, id := range rep.OutcomeBranch {
		keepIDs[id] = true
	}
	for _, e := range t.ext {
		keepIDs[e.MinBranch], keepIDs[e.MaxBranch] = true, true
	}
	for id := range rep.notable {
		if !keepIDs[id] {
			delete(rep.notable, id)
		}
	}
	for i, m := range c.metrics {
		t.ext[i].Metric = m.name
	}
	if rep.Branches > 0 {
		rep.Extremes = t.ext
	}
}

// branchMetrics names a branch's metric values by c's metrics.
func branchMetrics(c *compiled, values []int64) []Metric {
	var ms []Metric
	for i, m := range c.metrics {
		ms = append(ms, Metric{Name: m.name, Value: values[i]})
	}
	return ms
}

// finishReport fills rep's totals from the explorer once the exploration
// stops: states stored, events simulated, forks and solver calls, and the
// run's wall time and peak heap.
func (x *explorer) finishReport(rep *Report, start time.Time, peakHeap uint64) {
	rep.StatesStored = len(x.seen)
	rep.EventsSimulated, rep.Snapshot = x.simulated, x.pre.note
	rep.Forks = x.forks
	rep.SolverCalls = x.solver.calls
	rep.SolverGaveUp = x.solver.unknown
	rep.WallSeconds = time.Since(start).Seconds()
	rep.PeakHeapMB = float64(peakHeap) / (1 << 20)
}

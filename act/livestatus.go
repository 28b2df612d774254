package act

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/actfuzz/actfuzz/corpus"
)

// progressEvery is how often a campaign reports its progress
// (Options.Progress) while it waits for a batch's results: a batch of 64
// simulations can take a minute on a loaded machine, and the status line
// and its ETA must not wait for it.
const progressEvery = time.Second

// liveCounts are what a campaign knows between merges: the simulations
// that have ended but wait for their batch's merge, and its limits.
type liveCounts struct {
	Unmerged int
	// Budget is the campaign's in simulations, less what the symbolic
	// step has charged so far; Duration its wall-clock limit (0: none).
	Budget   int
	Duration time.Duration
}

// liveStatus is status.json: written when the campaign starts, every
// StatusEvery while it runs (also while a batch simulates) and at the end
// (docs/status.md).
type liveStatus struct {
	Method string `json:"method"`
	// Sims are merged into the store; Simulated counts those and the ones
	// that ended and wait for their batch's merge.
	Sims      int     `json:"sims"`
	Simulated int     `json:"simulated"`
	Budget    int     `json:"budget"`
	WallS     float64 `json:"wall_s"`
	SimsPerS  float64 `json:"sims_per_s"`
	// ETAS is the estimated time left in seconds, -1 while unknown (no
	// simulation has ended yet).
	ETAS      float64           `json:"eta_s"`
	DurationS float64           `json:"duration_s,omitempty"`
	Findings  int               `json:"findings"`
	Faults    int               `json:"faults"`
	Done      bool              `json:"done"`
	Regions   map[string]uint64 `json:"regions"`
	Store     storeStatus       `json:"store"`
}

// storeStatus is how the coverage store keeps to its memory budget.
type storeStatus struct {
	Bytes       int    `json:"bytes"`
	Budget      int64  `json:"budget"`
	States      int    `json:"pooled_states"`
	Visits      uint64 `json:"visits"`
	Configs     int    `json:"configs"`
	FloorK      int    `json:"exact_from_k"`
	PoolK       int    `json:"pools_at_k"`
	Coarsenings int    `json:"coarsenings"`
	OverBudget  bool   `json:"over_budget"`
}

// liveStatusOf is the campaign's Status as it stands between merges:
// Sims counts the simulations that ended, merged or not.
func (r *Report) liveStatusOf(step Step, elapsed time.Duration) Status {
	st := r.status(step, elapsed)
	st.Sims += r.live.Unmerged
	if s := elapsed.Seconds(); s > 0 {
		st.SimsPerS = float64(st.Sims) / s
	}
	st.Elapsed, st.Budget, st.Duration = elapsed, r.live.Budget, r.live.Duration
	return st
}

// Left is the estimated time left: the budget's simulations still to run
// at the rate so far, or what Duration leaves if that ends first; false
// while neither is known.
func (st Status) Left() (time.Duration, bool) {
	left := time.Duration(-1)
	if st.SimsPerS > 0 && st.Budget > st.Sims {
		left = time.Duration(float64(st.Budget-st.Sims) / st.SimsPerS * float64(time.Second))
	} else if st.Budget > 0 && st.Sims >= st.Budget {
		left = 0
	}
	if st.Duration > 0 && (left < 0 || st.Duration-st.Elapsed < left) {
		left = max(st.Duration-st.Elapsed, 0)
	}
	return left, left >= 0
}

func (r *Report) writeStatus(dir string, wall time.Duration, done bool) error {
	st := r.liveStatusOf(0, wall)
	ls := liveStatus{Method: r.Method, Sims: r.Sims, Simulated: st.Sims, Budget: st.Budget, WallS: wall.Seconds(),
		SimsPerS: st.SimsPerS, ETAS: -1, DurationS: st.Duration.Seconds(), Findings: st.Findings, Faults: st.Faults,
		Done: done, Regions: map[string]uint64{}}
	if left, ok := st.Left(); ok {
		ls.ETAS = left.Round(time.Second).Seconds()
	}
	if done {
		ls.ETAS = 0
	}
	for k, n := range st.Regions {
		ls.Regions[fmt.Sprint(k)] = n
	}
	s := r.Store
	ls.Store = storeStatus{Bytes: s.Bytes(), Budget: s.Options().Memory, States: s.Len(), Visits: s.Visits(), Configs: s.Configs(),
		FloorK: s.FloorK(), PoolK: s.PoolK(), Coarsenings: s.Coarsenings(), OverBudget: s.OverBudget()}
	b, err := json.MarshalIndent(ls, "", "  ")
	if err != nil {
		return err
	}
	if err := corpus.WriteFileAtomic(filepath.Join(dir, "status.json"), append(b, '\n')); err != nil {
		return err
	}
	return r.writeTriage(dir)
}

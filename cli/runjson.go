package cli

import (
	"encoding/json"
	"io"
	"strconv"

	"github.com/actfuzz/actfuzz/act"
)

// run --json: the machine-readable report of a campaign.

// storeJSON says how the coverage store kept to its memory budget.
type storeJSON struct {
	Bytes      int   `json:"bytes"`
	Budget     int64 `json:"budget"`
	FloorK     int   `json:"exact_from_k"`
	PoolK      int   `json:"pools_at_k"`
	OverBudget bool  `json:"over_budget"`
}

type methodJSON struct {
	Store    *storeJSON                   `json:"store,omitempty"`
	Sims     int                          `json:"sims"`
	WallS    float64                      `json:"wall_s"`
	Regions  map[string]uint64            `json:"regions"`
	Total    map[string]uint64            `json:"total"`
	Findings int                          `json:"findings"`
	StepSims map[string]int               `json:"step_sims,omitempty"`
	StepNew  map[string]map[string]uint64 `json:"step_new_regions,omitempty"`
	// Symbolic is what the symbolic step did (its step_sims are
	// simulation-equivalents charged against the budget).
	Symbolic *act.SymbolicStats `json:"symbolic,omitempty"`
	// Capped counts runs stopped by the simulated-time cap;
	// StatesDropped, cluster runs whose states were not merged (over
	// the coordinator's max_result).
	Capped        int `json:"capped,omitempty"`
	StatesDropped int `json:"states_dropped,omitempty"`
	// PhasesCapped counts schedules not extended at max_phases;
	// Unreproduced, cluster results whose findings did not replay.
	PhasesCapped int `json:"phases_capped,omitempty"`
	Unreproduced int `json:"unreproduced,omitempty"`
}

func methodReport(rep *act.Report) methodJSON {
	m := methodJSON{Sims: rep.Sims, WallS: rep.Wall.Seconds(), Regions: map[string]uint64{}, Total: map[string]uint64{},
		StepSims: map[string]int{}, StepNew: map[string]map[string]uint64{}}
	sp := rep.Store.Space()
	for k, v := range rep.Regions() {
		m.Regions[strconv.Itoa(k)] = v
		m.Total[strconv.Itoa(k)] = sp.Regions(k)
	}
	m.Findings = len(rep.Findings)
	m.Symbolic = rep.Symbolic
	m.Capped, m.StatesDropped = rep.Capped, rep.StatesDropped
	m.PhasesCapped, m.Unreproduced = rep.PhasesCapped, rep.Unreproduced
	st := rep.Store
	m.Store = &storeJSON{Bytes: st.Bytes(), Budget: st.Options().Memory, FloorK: st.FloorK(), PoolK: st.PoolK(), OverBudget: st.OverBudget()}
	for s, n := range rep.StepSims {
		m.StepSims[s.String()] = n
	}
	ks := sp.Ks()
	for s, counts := range rep.StepRegions {
		byK := map[string]uint64{}
		for l, n := range counts {
			byK[strconv.Itoa(ks[l])] = n
		}
		m.StepNew[s.String()] = byK
	}
	return m
}

func writeJSONReport(w io.Writer, rep *act.Report) {
	type finding struct {
		Condition  string  `json:"condition"`
		Kind       string  `json:"kind"`
		Count      int     `json:"count"`
		Path       string  `json:"path,omitempty"`
		Flow       int     `json:"flow"`
		CCAI       string  `json:"ccai,omitempty"`
		Subject    string  `json:"subject"`
		FirstSim   int     `json:"first_sim"`
		Step       string  `json:"step"`
		FirstWallS float64 `json:"first_wall_s"`
	}
	var fs []finding
	for _, f := range rep.Findings {
		fd := f.Seed.Finding
		var cca string
		if fd.Flow >= 0 && fd.Flow < len(f.Seed.CCAI) {
			cca = f.Seed.CCAI[fd.Flow]
		}
		fs = append(fs, finding{fd.Condition, fd.Kind, f.Count, f.Path, fd.Flow, cca, f.Seed.Subject, f.FirstSim, f.Step.String(), f.FirstWall.Seconds()})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(map[string]any{"method": rep.Method, "report": methodReport(rep), "findings": fs})
}

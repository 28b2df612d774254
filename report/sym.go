package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/actfuzz/actfuzz/netenv/symbolic"
)

// symBranchesShown bounds the branches listed per exploration.
const symBranchesShown = 50

// symInfo is one `actfuzz sym --json` report kept in the campaign's
// directory (sym*.json): its branches, outcomes and witnesses.
type symInfo struct {
	File      string
	Summary   []kv
	Outcomes  []symOutcome
	Extremes  [][]string
	Branches  [][]string
	More      int // branches kept in the file but not shown
	Truncated bool
}

type symOutcome struct {
	Outcome  string
	Branches string // of the kept branches
}

// symReports reads the sym*.json files of out. A file that is not a sym
// report is an error naming it.
func symReports(out string) ([]symInfo, error) {
	paths, _ := filepath.Glob(filepath.Join(out, "sym*.json"))
	slices.Sort(paths)
	var infos []symInfo
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
		var r symbolic.Report
		if err := json.Unmarshal(b, &r); err != nil || r.Scenario == "" {
			return nil, fmt.Errorf("report: %s is not the output of actfuzz sym --json: %v", p, err)
		}
		infos = append(infos, symSection(filepath.Base(p), &r))
	}
	return infos, nil
}

func symSection(file string, r *symbolic.Report) symInfo {
	si := symInfo{File: file, Truncated: r.Truncated || !r.Complete}
	var vars []string
	for _, v := range r.Vars {
		vars = append(vars, fmt.Sprintf("%s ∈ [%s, %s] ms step %s", v.Name, fmtNum(v.LoMS), fmtNum(v.HiMS), fmtNum(v.ResMS)))
	}
	complete := "yes: the branches cover every delay vector"
	if !r.Complete {
		complete = "no: the exploration stopped early"
	}
	si.Summary = []kv{
		{"scenario", r.Scenario}, {"reductions", r.Reductions}, {"uncertain delays", strings.Join(vars, "; ")},
		{"branches", fmtInt(int64(r.Branches))}, {"complete", complete}, {"distinct outcomes", fmtInt(int64(len(r.Outcomes)))},
		{"runs", fmtInt(int64(r.Runs))}, {"wall time", fmt.Sprintf("%.2f s", r.WallSeconds)},
	}
	if r.Diverged > 0 || r.Unsound > 0 {
		si.Summary = append(si.Summary, kv{"diverged, unsound branches", fmt.Sprintf("%d, %d", r.Diverged, r.Unsound)})
	}
	if r.Concretized > 0 {
		si.Summary = append(si.Summary, kv{"branches with a concretized RTT timer", fmtInt(int64(r.Concretized))})
		if r.PaceConcretized > 0 {
			si.Summary = append(si.Summary, kv{"of them with a pacing gap that follows the delays", fmtInt(int64(r.PaceConcretized))})
		}
	}
	per := map[string]int{}
	for _, b := range r.BranchList {
		per[b.Outcome]++
	}
	for _, o := range r.Outcomes {
		n := "—"
		if len(r.BranchList) > 0 {
			n = fmtInt(int64(per[o]))
		}
		si.Outcomes = append(si.Outcomes, symOutcome{Outcome: o, Branches: n})
	}
	for _, e := range r.Extremes {
		si.Extremes = append(si.Extremes, []string{e.Metric, fmtInt(e.Min), strconv.Itoa(e.MinBranch), witness(e.MinWitness),
			fmtInt(e.Max), strconv.Itoa(e.MaxBranch), witness(e.MaxWitness)})
	}
	for i, b := range r.BranchList {
		if i == symBranchesShown {
			si.More = len(r.BranchList) - i
			break
		}
		si.Branches = append(si.Branches, []string{strconv.Itoa(b.ID), strings.Join(b.Constraints, " ∧ "), witness(b.Witness), b.Outcome})
	}
	return si
}

// witness prints a delay vector in ms: "(1013, 3)" (no digit grouping: the
// commas separate the delays).
func witness(w []float64) string {
	var s []string
	for _, x := range w {
		s = append(s, strconv.FormatFloat(x, 'f', -1, 64))
	}
	return "(" + strings.Join(s, ", ") + ")"
}

package act

import (
	"cmp"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/oracle"
)

// wallNow is the campaign's wall time so far (0 outside Run).
func (r *Report) wallNow() time.Duration {
	if r.elapsed == nil {
		return 0
	}
	return r.elapsed()
}

// TriageGroup is one finding group in findings.json.
type TriageGroup struct {
	Hits       int     `json:"hits"`
	FirstSim   int     `json:"first_sim"`
	FirstWallS float64 `json:"first_wall_s"`
	Step       string  `json:"step"`
	Flow       int     `json:"flow"`
	CCAI       string  `json:"ccai"`
	Subject    string  `json:"subject"`
	AtS        float64 `json:"at_s"` // simulated time of the first hit
	Seed       string  `json:"seed,omitempty"`
	Replay     string  `json:"replay,omitempty"`
	Minimize   string  `json:"minimize,omitempty"`
}

// TriageCondition is one condition (or fault kind) in findings.json.
type TriageCondition struct {
	Condition string `json:"condition"`
	Kind      string `json:"kind"`
	When      string `json:"when,omitempty"`
	// Source is where the condition's rule comes from (an oracle's RFC
	// section, or a user condition's source:).
	Source string `json:"source,omitempty"`
	// Oracle is the kind of the oracle (oracle.Conformance or
	// oracle.Performance) the condition checks; empty for a user's
	// condition. Statement is that oracle's rule in one line.
	Oracle    string        `json:"oracle,omitempty"`
	Statement string        `json:"statement,omitempty"`
	Hits      int           `json:"hits"`
	Groups    []TriageGroup `json:"groups"`
}

// oracleOf is the library's oracle a finding names: one of its name and
// source (a user's condition may take an oracle's name when that oracle
// is not checked, never its source too).
func oracleOf(f *corpus.Finding) (oracle.Oracle, bool) {
	if f.Kind != "condition" || f.Source == "" {
		return oracle.Oracle{}, false
	}
	o, ok := oracle.Lookup(f.Condition)
	return o, ok && o.Source == f.Source
}

// Triage summarizes the findings per condition: groups with their counts,
// first hits, flows, CCAIs and subject, and the commands that replay and
// minimize them. program starts those commands.
func (r *Report) Triage(program string) []TriageCondition {
	byCond := map[string]*TriageCondition{}
	var order []string
	for _, g := range r.Findings {
		f := g.Seed.Finding
		name := f.Condition
		if f.Kind != "condition" {
			name = "fault-" + f.Kind
		}
		tc, ok := byCond[name]
		if !ok {
			tc = &TriageCondition{Condition: name, Kind: f.Kind, When: f.When, Source: f.Source}
			if o, ok := oracleOf(f); ok {
				tc.Oracle, tc.Statement = string(o.Kind), o.Statement
			}
			byCond[name] = tc
			order = append(order, name)
		}
		tg := TriageGroup{Hits: g.Count, FirstSim: g.FirstSim, FirstWallS: g.FirstWall.Seconds(), Step: g.Step.String(),
			Flow: f.Flow, Subject: g.Seed.Subject, AtS: float64(f.TimeNS) / 1e9, Seed: g.Path}
		if f.Flow >= 0 && f.Flow < len(g.Seed.CCAI) {
			tg.CCAI = g.Seed.CCAI[f.Flow]
		}
		if g.Path != "" {
			tg.Replay = program + " replay " + g.Path
			if f.Kind == "condition" {
				tg.Minimize = program + " minimize " + g.Path
			}
		}
		tc.Hits += g.Count
		tc.Groups = append(tc.Groups, tg)
	}
	slices.Sort(order)
	out := make([]TriageCondition, 0, len(order))
	for _, name := range order {
		tc := byCond[name]
		slices.SortStableFunc(tc.Groups, func(a, b TriageGroup) int { return cmp.Compare(a.FirstSim, b.FirstSim) })
		out = append(out, *tc)
	}
	return out
}

// writeTriage writes findings.json and findings.md into dir.
func (r *Report) writeTriage(dir string) error {
	if dir == "" {
		return nil
	}
	prog := cmp.Or(r.program, "actfuzz")
	tr := r.Triage(prog)
	b, err := json.MarshalIndent(map[string]any{"method": r.Method, "sims": r.Sims, "conditions": tr}, "", "  ")
	if err != nil {
		return fmt.Errorf("findings.json: %w", err)
	}
	if err := corpus.WriteFileAtomic(filepath.Join(dir, "findings.json"), append(b, '\n')); err != nil {
		return err
	}
	return corpus.WriteFileAtomic(filepath.Join(dir, "findings.md"), []byte(triageMarkdown(r.Method, r.Sims, tr)))
}

func triageMarkdown(method string, sims int, tr []TriageCondition) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Findings (%s, %d simulations)\n\n", method, sims)
	if len(tr) == 0 {
		b.WriteString("None yet.\n")
		return b.String()
	}
	b.WriteString("| condition | source | groups | hits |\n|---|---|---|---|\n")
	for _, tc := range tr {
		fmt.Fprintf(&b, "| %s | %s | %d | %d |\n", tc.Condition, mdCell(tc.Source), len(tc.Groups), tc.Hits)
	}
	for _, tc := range tr {
		fmt.Fprintf(&b, "\n## %s\n\n", tc.Condition)
		switch {
		case tc.Oracle == string(oracle.Performance):
			fmt.Fprintf(&b, "performance oracle (the flows kept their rules and still fared badly): %s — %s\n\n", tc.Statement, tc.Source)
		case tc.Oracle != "":
			fmt.Fprintf(&b, "oracle: %s — %s\n\n", tc.Statement, tc.Source)
		case tc.Source != "":
			fmt.Fprintf(&b, "source: %s\n\n", tc.Source)
		}
		if tc.When != "" {
			fmt.Fprintf(&b, "`%s`: %s, %s\n\n", tc.When, plural(len(tc.Groups), "group"), plural(tc.Hits, "hit"))
		}
		b.WriteString("| # | hits | first hit: sim, wall | step | flow | CCAI | subject | at (sim time) | seed |\n|---|---|---|---|---|---|---|---|---|\n")
		for i, g := range tc.Groups {
			fmt.Fprintf(&b, "| %d | %d | %d, %.1f s | %s | %d | %s | %s | %.3f s | %s |\n", i+1, g.Hits, g.FirstSim, g.FirstWallS, g.Step, g.Flow, g.CCAI, g.Subject, g.AtS, g.Seed)
		}
		b.WriteString("\n```sh\n")
		for _, g := range tc.Groups {
			if g.Replay != "" {
				fmt.Fprintf(&b, "%s\n", g.Replay)
			}
			if g.Minimize != "" {
				fmt.Fprintf(&b, "%s\n", g.Minimize)
			}
		}
		b.WriteString("```\n")
	}
	return b.String()
}

// mdCell is s in a Markdown table cell: its pipes escaped.
func mdCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// plural is "1 hit", "2 hits".
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

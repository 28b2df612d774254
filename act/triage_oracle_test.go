package act

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/oracle"
)

// findings.md and findings.json say where an oracle's rule comes from:
// the source column of the table, and the oracle's statement and source
// (or "performance") at the top of its section; a user's condition that
// only borrows an oracle's name is not taken for it.
func TestTriageOracleSource(t *testing.T) {
	half, _ := oracle.Lookup("reno-half")
	starve, _ := oracle.Lookup("starvation")
	group := func(cond, when, source string) *FindingGroup {
		s := corpus.NewSeed("native", netenv.Setup{CCAI: []string{"reno", "reno"}}, 1, nil)
		s.Finding = &corpus.Finding{Condition: cond, When: when, Kind: "condition", Source: source}
		return &FindingGroup{Seed: s, Count: 2, Path: "findings/" + cond + "/act-1.json"}
	}
	rep := &Report{Method: "act", Sims: 10, Findings: []*FindingGroup{
		group("reno-half", half.Spec.When, half.Source),
		group("starvation", starve.Spec.When, starve.Source),
		group("mine", "cwnd > 5", "my notes §2"),
		group("stall", "cwnd > 6", ""), // a user's condition named like an oracle
	}}
	tr := rep.Triage("actfuzz")
	by := map[string]TriageCondition{}
	for _, tc := range tr {
		by[tc.Condition] = tc
	}
	if tc := by["reno-half"]; tc.Oracle != "conformance" || tc.Source != half.Source || tc.Statement != half.Statement {
		t.Errorf("reno-half: %+v", tc)
	}
	if tc := by["starvation"]; tc.Oracle != "performance" || tc.Source != starve.Source {
		t.Errorf("starvation: %+v", tc)
	}
	if tc := by["mine"]; tc.Oracle != "" || tc.Source != "my notes §2" {
		t.Errorf("mine: %+v", tc)
	}
	if tc := by["stall"]; tc.Oracle != "" || tc.Source != "" || tc.Statement != "" {
		t.Errorf("a user's stall taken for the oracle: %+v", tc)
	}
	b, err := json.Marshal(by["reno-half"])
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"source":`, `"oracle":"conformance"`, `"statement":`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("findings.json's reno-half lacks %s: %s", k, b)
		}
	}
	md := triageMarkdown("act", 10, tr)
	for _, want := range []string{
		"| condition | source | groups | hits |",
		"| reno-half | " + half.Source + " | 1 | 2 |",
		"| mine | my notes §2 | 1 | 2 |",
		"| stall |  | 1 | 2 |",
		"oracle: " + half.Statement + " — " + half.Source,
		"performance oracle",
		starve.Statement + " — " + starve.Source,
		"source: my notes §2",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("findings.md lacks %q:\n%s", want, md)
		}
	}
}

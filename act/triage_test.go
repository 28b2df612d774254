package act

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// findings.md and findings.json summarize the findings per condition with
// counts, first hits, flow, CCAI, subject and the commands to replay and
// minimize them; they survive a resume.
func TestTriageFiles(t *testing.T) {
	c, err := ParseCampaign("t.yaml", []byte(`
ccai: [reno, cubic]
bytes: 200000
conditions:
  - {name: any, when: "cwnd >= 1"}
  - {name: never, when: "cwnd > 1e9"}
budget: 8
window: 8
`))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	rep, err := Run(context.Background(), c, Options{Out: out, Workers: 1, Program: "mycca"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) == 0 {
		t.Fatal("no findings")
	}
	b, err := os.ReadFile(filepath.Join(out, "findings.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tj struct {
		Version    int               `json:"version"`
		Conditions []TriageCondition `json:"conditions"`
	}
	if err := json.Unmarshal(b, &tj); err != nil {
		t.Fatal(err)
	}
	if tj.Version != TriageVersion {
		t.Errorf("findings.json version %d, want %d", tj.Version, TriageVersion)
	}
	if len(tj.Conditions) != 1 || tj.Conditions[0].Condition != "any" {
		t.Fatalf("conditions %+v, want only \"any\"", tj.Conditions)
	}
	hits := 0
	for _, g := range rep.Findings {
		hits += g.Count
	}
	tc := tj.Conditions[0]
	if tc.Hits != hits || len(tc.Groups) != len(rep.Findings) {
		t.Errorf("%d hits in %d groups, want %d in %d", tc.Hits, len(tc.Groups), hits, len(rep.Findings))
	}
	for i, g := range tc.Groups {
		if _, err := os.Stat(g.Trace); err != nil || g.Rank != i+1 || g.RootCause == "" {
			t.Errorf("group %d: rank %d, root cause %q, trace %q (trimmed %v): %v", i, g.Rank, g.RootCause, g.Trace, g.TraceTrimmed, err)
		}
		if g.CCAI != []string{"reno", "cubic"}[g.Flow] || g.Subject != "native" || g.FirstSim < 0 || g.FirstSim >= 8 || g.Step == "" ||
			!strings.HasPrefix(g.Replay, "mycca replay ") || !strings.HasPrefix(g.Minimize, "mycca minimize ") || g.Seed == "" {
			t.Errorf("group %+v", g)
		}
		if g.ExportPkt != "" {
			t.Errorf("group %d: export %q: a two-flow seed has no packetdrill script", i, g.ExportPkt)
		}
	}
	md, err := os.ReadFile(filepath.Join(out, "findings.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## any", "| any | ", "mycca replay ", "mycca minimize ", "first hit: sim, wall"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("findings.md lacks %q:\n%s", want, md)
		}
	}
	// A resume keeps the first hits.
	rep2, err := Run(context.Background(), c, Options{Out: out, Workers: 1, Resume: true, Budget: 8})
	if err != nil {
		t.Fatal(err)
	}
	for i, g := range rep2.Findings {
		if g.FirstSim != rep.Findings[i].FirstSim || g.Step != rep.Findings[i].Step {
			t.Errorf("group %d after resume: first sim %d step %v, want %d %v", i, g.FirstSim, g.Step, rep.Findings[i].FirstSim, rep.Findings[i].Step)
		}
	}
}

// TestTriageExportPkt: a single-flow finding of the native model at
// profile linux gets its `export --pkt` command in findings.json and
// findings.md (issue 49 item 5).
func TestTriageExportPkt(t *testing.T) {
	c, err := ParseCampaign("t.yaml", []byte(`
ccai: [cubic]
profile: linux
bytes: 100000
conditions:
  - {name: any, when: "cwnd >= 1"}
budget: 4
window: 4
`))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if _, err := Run(context.Background(), c, Options{Out: out, Workers: 1, Program: "mycca"}); err != nil {
		t.Fatal(err)
	}
	var tj struct {
		Conditions []TriageCondition `json:"conditions"`
	}
	b, err := os.ReadFile(filepath.Join(out, "findings.json"))
	if err == nil {
		err = json.Unmarshal(b, &tj)
	}
	if err != nil || len(tj.Conditions) != 1 || len(tj.Conditions[0].Groups) == 0 {
		t.Fatalf("findings.json: %v %+v", err, tj.Conditions)
	}
	md, err := os.ReadFile(filepath.Join(out, "findings.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range tj.Conditions[0].Groups {
		want := "mycca export " + g.Seed + " --pkt"
		if g.ExportPkt != want || !strings.Contains(string(md), want) {
			t.Errorf("export %q, want %q in findings.json and findings.md", g.ExportPkt, want)
		}
	}
}

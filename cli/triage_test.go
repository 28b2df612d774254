package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/actfuzz/actfuzz/triage"
)

// TestTriageNativeCampaign triages a tiny native campaign end to end: every
// group gets a class, its steps ran or say why not, and a group with a
// skipped step is never confirmed.
func TestTriageNativeCampaign(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "camp")
	code, _, errs := runCLI(context.Background(), "run", tinyCampaign(t, dir, "cwnd > 12"), "--out", out, "--isolate=false", "--quiet", "--triage")
	if code != exitFound {
		t.Fatalf("run --triage: exit %d, want 1: %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(out, triage.MarkdownFile)); err != nil {
		t.Fatalf("run --triage wrote no triage.md: %v", err)
	}
	code, stdout, errs := runCLI(context.Background(), "triage", out, "--minimize-runs", "30", "--json")
	if code != exitOK && code != exitFound {
		t.Fatalf("triage: exit %d: %s", code, errs)
	}
	var rep triage.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("triage --json: %v\n%s", err, stdout)
	}
	if len(rep.Results) == 0 {
		t.Fatal("no group triaged")
	}
	for _, r := range rep.Results {
		if r.Class == "" || r.Why == "" {
			t.Errorf("%s: no class or evidence: %+v", r.Seed, r)
		}
		steps := map[string]Step{}
		skipped := false
		for _, s := range r.Steps {
			steps[s.Name] = s
			if s.Outcome == "skipped" {
				skipped = true
				if s.Detail == "" {
					t.Errorf("%s: step %s skipped without saying why", r.Seed, s.Name)
				}
			}
		}
		for _, name := range []string{"minimize", "replay", "harness", "differential vs ns3", "differential vs gvisor"} {
			if _, ok := steps[name]; !ok {
				t.Errorf("%s: no %s step: %+v", r.Seed, name, r.Steps)
			}
		}
		if steps["replay"].Outcome != "ran" || r.Held != 1 || r.Runs != 1 {
			t.Errorf("%s: a native finding replays once and holds: %+v, held %d/%d", r.Seed, steps["replay"], r.Held, r.Runs)
		}
		if skipped && r.Confirmed {
			t.Errorf("%s: confirmed with a skipped step", r.Seed)
		}
		if _, err := os.Stat(r.Minimized); err != nil {
			t.Errorf("%s: minimized seed: %v", r.Seed, err)
		}
	}
	md, _ := os.ReadFile(filepath.Join(out, triage.MarkdownFile))
	if !strings.Contains(string(md), "## Root causes") || !strings.Contains(string(md), string(rep.Results[0].Class)) {
		t.Errorf("triage.md lacks the root causes:\n%s", md)
	}
	page, _ := os.ReadFile(filepath.Join(out, "report", "index.html"))
	if !strings.Contains(string(page), `id="triage"`) {
		t.Error("the report has no triage section")
	}

	// A group whose seed is gone is untriaged: bad input, after
	// triage.md says so.
	if err := os.Remove(rep.Results[0].Seed); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runCLI(context.Background(), "triage", out, "--minimize-runs", "30")
	if code != exitUsage || !strings.Contains(errs, rep.Results[0].Seed) {
		t.Errorf("triage with a seed gone: exit %d, want 2 naming the seed: %s", code, errs)
	}
	md, _ = os.ReadFile(filepath.Join(out, triage.MarkdownFile))
	if !strings.Contains(string(md), string(triage.Untriaged)) {
		t.Errorf("triage.md does not list the untriaged group:\n%s", md)
	}
}

// Step is triage.Step, for the test's map.
type Step = triage.Step

func TestTriageBadInput(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no DIR", []string{"triage"}, "usage"},
		{"not a campaign", []string{"triage", dir}, "campaign.yaml"},
		{"missing DIR", []string{"triage", filepath.Join(dir, "none")}, "DIR"},
		{"--runs 0", []string{"triage", dir, "--runs", "0"}, "--runs"},
		{"unknown flag", []string{"triage", dir, "--run", "2"}, "--run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errs := runCLI(context.Background(), tt.args...)
			if code != exitUsage || !strings.Contains(errs, tt.want) {
				t.Errorf("exit %d, want 2 naming %q: %s", code, tt.want, errs)
			}
		})
	}
}

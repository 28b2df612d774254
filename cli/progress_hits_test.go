package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/corpus"
)

// TestFirstHits: one line per oracle or condition at its first finding,
// with the command that replays it and the section it checks; later
// groups of the same one only count on the status line.
func TestFirstHits(t *testing.T) {
	var out bytes.Buffer
	p := &progress{w: &out}
	hit := firstHits(p, "bin/actfuzz")
	group := func(cond, kind, source string, sim int) *act.FindingGroup {
		return &act.FindingGroup{FirstSim: sim, Path: "o/findings/" + cond + "/act-1.json",
			Seed: &corpus.Seed{Finding: &corpus.Finding{Condition: cond, Kind: kind, Source: source}}}
	}
	hit(group("cubic-beta", "condition", "RFC 9438 §4.6", 92))
	hit(group("cubic-beta", "condition", "RFC 9438 §4.6", 140))
	hit(group("huge-cwnd", "condition", "", 7))
	hit(group("", "hang", "", 9))
	got := out.String()
	for _, want := range []string{
		"first hit of cubic-beta at simulation 92: bin/actfuzz replay o/findings/cubic-beta/act-1.json\n  checks RFC 9438 §4.6\n",
		"first hit of huge-cwnd at simulation 7",
		"first hit of fault hang at simulation 9",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "cubic-beta at"); n != 1 {
		t.Errorf("cubic-beta announced %d times, want once:\n%s", n, got)
	}
}

// A --duration that ends a campaign before its budget is a cap, and the
// run says so with the command that continues it (issue 51: make run's
// budget, with a duration only as a safety bound).
func TestDurationCapSaid(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.yaml")
	src := "ccai: [reno]\nbytes: 200000\nbudget: 1000000\nconditions:\n  - {name: c, when: \"cwnd > 30\"}\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "o")
	code, _, errs := runCLI(context.Background(), "run", path, "--duration", "1ms", "--out", out, "--isolate=false", "--workers", "1", "--quiet")
	if code > 1 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"capped: --duration 1ms ended the campaign after ", " of its 1000000 simulations; continue with: ", "--resume --out " + out} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
}

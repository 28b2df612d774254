package cli

import (
	"context"
	"github.com/actfuzz/actfuzz/corpus"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/ccai"
)

// nanVars is Reno exposing variables that are NaN and +Inf.
type nanVars struct{ ccai.Reno }

func (*nanVars) Vars() []ccai.VarDesc {
	return []ccai.VarDesc{{Name: "nanv", Doc: "always NaN"}, {Name: "infv", Doc: "always +Inf"}}
}
func (*nanVars) ReadVars(_ *ccai.Sock, dst []float64) { dst[0], dst[1] = math.NaN(), math.Inf(1) }

// panicky is Reno that panics (on the simulation's goroutine) after
// 100 ms: a subject fault the native subject recovers.
type panicky struct{ ccai.Reno }

func (p *panicky) CongAvoid(s *ccai.Sock, acked uint32) {
	if s.Now >= 100*time.Millisecond {
		panic("test-panicky")
	}
	p.Reno.CongAvoid(s, acked)
}

func init() {
	ccai.Register(ccai.Info{Name: "test-nanvars", Description: "test only", New: func() ccai.Algorithm { return &nanVars{} }})
	ccai.Register(ccai.Info{Name: "test-panicky", Description: "test only", New: func() ccai.Algorithm { return &panicky{} }})
}

// A simulation whose CCAI faults is a finding (1), not an error.
func TestSimFault(t *testing.T) {
	code, _, errs := runCLI(context.Background(), "sim", "--cca", "test-panicky", "--bytes", "1000000")
	if code != exitFound || !strings.Contains(errs, "test-panicky") {
		t.Errorf("exit %d, stderr %q; want 1 naming the panic", code, errs)
	}
}

// A finding whose state holds NaN and +Inf is written, and replays.
func TestRunWritesNonFiniteSeeds(t *testing.T) {
	dir := t.TempDir()
	camp := filepath.Join(dir, "nan.yaml")
	src := "ccai: [test-nanvars]\nbytes: 200000\nbudget: 4\nwindow: 4\nconditions:\n  - {name: c, when: \"cwnd >= 1\"}\n"
	if err := os.WriteFile(camp, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "o")
	if code, _, errs := runCLI(context.Background(), "run", camp, "--out", out, "--isolate=false", "--quiet"); code != exitFound {
		t.Fatalf("run: exit %d: %s", code, errs)
	}
	seeds, _ := filepath.Glob(filepath.Join(out, "findings", "c", "*.json"))
	if len(seeds) == 0 {
		t.Fatal("no seed written")
	}
	b, _ := os.ReadFile(seeds[0])
	if !strings.Contains(string(b), `"nanv": "NaN"`) || !strings.Contains(string(b), `"infv": "+Inf"`) {
		t.Errorf("seed does not carry NaN and +Inf:\n%s", b)
	}
	if code, stdout, errs := runCLI(context.Background(), "replay", seeds[0]); code != exitOK {
		t.Errorf("replay: exit %d: %s%s", code, stdout, errs)
	}
}

// A campaign whose states all fall outside S still ends with its report
// (and says why), not with an error.
func TestRunNothingInS(t *testing.T) {
	dir := t.TempDir()
	camp := filepath.Join(dir, "outside.yaml")
	src := "ccai: [reno]\nbytes: 200000\nbudget: 4\nwindow: 4\nstate:\n  cwnd: {min: 100000, max: 200000, step: 1}\nconditions:\n  - {name: c, when: \"cwnd > 1e9\"}\n"
	if err := os.WriteFile(camp, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "o")
	code, stdout, errs := runCLI(context.Background(), "run", camp, "--out", out, "--isolate=false", "--quiet")
	if code != exitOK || !strings.Contains(stdout, "no state landed inside S") {
		t.Errorf("exit %d, stdout %q, stderr %q; want 0 and why coverage is zero", code, stdout, errs)
	}
	for _, f := range []string{"status.json", "findings.md", filepath.Join("coverage", "table.md")} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("no %s: %v", f, err)
		}
	}
}

// A fault finding (a CCAI panic) has its trace and plot like any other,
// and the time of the fault.
func TestFaultFindingArtifacts(t *testing.T) {
	dir := t.TempDir()
	camp := filepath.Join(dir, "p.yaml")
	src := "ccai: [test-panicky]\nbytes: 1000000\nbudget: 2\nwindow: 2\nconditions:\n  - {name: c, when: \"cwnd > 1e9\"}\n"
	if err := os.WriteFile(camp, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "o")
	code, _, errs := runCLI(context.Background(), "run", camp, "--out", out, "--isolate=false", "--quiet")
	if code == exitUsage || code == exitInternal {
		t.Fatalf("exit %d: %s", code, errs)
	}
	seeds, _ := filepath.Glob(filepath.Join(out, "findings", "fault-*", "*.json"))
	if len(seeds) == 0 {
		t.Fatalf("no fault seed (stderr %q)", errs)
	}
	if _, err := os.Stat(strings.TrimSuffix(seeds[0], ".json") + ".png"); err != nil {
		t.Error("fault finding without its plot")
	}
	s, err := corpus.ReadSeed(seeds[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Finding.TracePath(seeds[0])); s.Finding.Trace == nil || err != nil {
		t.Errorf("fault finding without its trace: %+v", s.Finding.Trace)
	}
	b, _ := os.ReadFile(seeds[0])
	if strings.Contains(string(b), `"time_ns": 0,`) {
		t.Errorf("fault at time 0:\n%s", b)
	}
}

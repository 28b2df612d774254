package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/act"
)

// The status line fits 80 columns whatever the figures, and says elapsed
// time, sims of the budget, sims/s, ETA, step, regions at k=16, findings.
func TestStatusTextFits80(t *testing.T) {
	for _, tc := range []struct {
		name string
		st   act.Status
		want []string
	}{
		{"small", act.Status{Method: "act", Sims: 12, Budget: 2000, SimsPerS: 40, Step: "random", Elapsed: 3 * time.Second,
			Regions: map[int]uint64{16: 345}, Findings: 1}, []string{"0:00:03", "12/2000", "40/s", "ETA 0:00:50", "rand", "k16 345", "found 1"}},
		{"huge", act.Status{Method: "act", Sims: 123_456_789, Budget: 999_999_999, SimsPerS: 123456, Step: "concatenation",
			Elapsed: 1000 * time.Hour, Regions: map[int]uint64{16: 987_654_321}, Findings: 123456, Faults: 99999}, []string{"1000:00:00", "concat", "k16 987.7M"}},
		{"duration bound", act.Status{Method: "ran", Sims: 100, Budget: 100_000_000, SimsPerS: 1, Step: "ran", Elapsed: time.Hour,
			Duration: 2 * time.Hour, Regions: map[int]uint64{16: 1}}, []string{"ETA 1:00:00"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := statusText(tc.st)
			if n := len([]rune(s)); n > 79 {
				t.Errorf("%d columns: %q", n, s)
			}
			for _, w := range tc.want {
				if !strings.Contains(s, w) {
					t.Errorf("%q lacks %q", s, w)
				}
			}
		})
	}
}

// Off a terminal, the status is a plain line (no \r) at most every period.
func TestProgressPlainLines(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&b)
	if p.tty {
		t.Fatal("a buffer is not a terminal")
	}
	st := act.Status{Method: "act", Sims: 1, Budget: 10, Regions: map[int]uint64{}}
	p.update(st)
	p.update(st) // within the period: not printed
	p.every = 0
	p.update(st)
	p.done()
	if strings.Contains(b.String(), "\r") || strings.Count(b.String(), "\n") != 2 {
		t.Errorf("want two plain lines, got %q", b.String())
	}
}

// Every command takes -v and --quiet.
func TestVerbosityFlagsEverywhere(t *testing.T) {
	for _, c := range commands() {
		if c.name == "worker" {
			continue // started by run, not by hand
		}
		if code, _, errs := runCLI(context.Background(), c.name, "-v", "--quiet", "--help"); code != exitOK {
			t.Errorf("%s -v --quiet --help: exit %d: %s", c.name, code, errs)
		}
	}
}

// --resume takes budget, method and workers from the checkpoint unless
// given again (and says so); wall time accumulates.
func TestResumeRestoresSettings(t *testing.T) {
	dir := t.TempDir()
	camp := tinyCampaign(t, dir, "cwnd > 1e9") // budget: 6
	out := filepath.Join(dir, "o")
	sims := func(stdout string) int {
		var r struct {
			Report struct {
				Sims  int     `json:"sims"`
				WallS float64 `json:"wall_s"`
			} `json:"report"`
		}
		if err := json.Unmarshal([]byte(stdout), &r); err != nil {
			t.Fatalf("%v: %q", err, stdout)
		}
		return r.Report.Sims
	}
	wall := func() float64 {
		b, err := os.ReadFile(filepath.Join(out, "status.json"))
		if err != nil {
			t.Fatal(err)
		}
		var st struct {
			WallS float64 `json:"wall_s"`
		}
		_ = json.Unmarshal(b, &st)
		return st.WallS
	}
	code, stdout, errs := runCLI(context.Background(), "run", camp, "--out", out, "--budget", "4", "--method", "ran", "--workers", "1", "--isolate=false", "--json")
	if code != 0 || sims(stdout) != 4 {
		t.Fatalf("first run: exit %d, %s %s", code, stdout, errs)
	}
	w1 := wall()
	code, stdout, errs = runCLI(context.Background(), "run", "--out", out, "--resume", "--isolate=false", "--json")
	if code != 0 || sims(stdout) != 4 || !strings.Contains(errs, "resuming ran after 4 simulations") {
		t.Errorf("resume: exit %d, sims %d, stderr %q; want the checkpoint's budget 4 and method ran", code, sims(stdout), errs)
	}
	if w2 := wall(); w2 < w1 {
		t.Errorf("wall_s went from %g to %g over a resume", w1, w2)
	}
	code, stdout, errs = runCLI(context.Background(), "run", "--out", out, "--resume", "--budget", "6", "--isolate=false", "--json")
	if code != 0 || sims(stdout) != 6 || !strings.Contains(errs, "--budget 6 overrides the checkpoint's 4") {
		t.Errorf("resume --budget 6: exit %d, sims %d, stderr %q", code, sims(stdout), errs)
	}
}

// Finding lines name the flow, its CCAI and the subject, and point to
// findings.md.
func TestRunConsoleFindings(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "o")
	code, stdout, errs := runCLI(context.Background(), "run", tinyCampaign(t, dir, "cwnd >= 1"), "--out", out, "--isolate=false", "--quiet")
	if code != exitFound {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"findings: 1 condition hit, 1 group (one a root cause)", "1. c ×", "flow 0: reno on native, alone, in slow start",
		" replay " + filepath.Join(out, "findings", "c", "act-"), "every group's commands: " + filepath.Join(out, "findings.md")} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "1 findings") {
		t.Error(`"1 findings"`)
	}
}

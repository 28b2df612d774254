package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tinyCampaign is a campaign of a few short simulations; cond decides
// whether it finds anything.
func tinyCampaign(t *testing.T, dir, cond string) string {
	t.Helper()
	path := filepath.Join(dir, "tiny.yaml")
	src := "ccai: [reno]\nbytes: 200000\nbudget: 6\nwindow: 4\nconditions:\n  - {name: c, when: \"" + cond + "\"}\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runCLI runs one command line and returns its status and output.
func runCLI(ctx context.Context, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := dispatch(ctx, args, &out, &errb)
	return code, out.String(), errb.String()
}

// findingSeed runs a tiny campaign that always hits and returns one seed.
func findingSeed(t *testing.T, dir string) string {
	t.Helper()
	out := filepath.Join(dir, "found")
	code, _, errs := runCLI(context.Background(), "run", tinyCampaign(t, dir, "cwnd >= 1"), "--out", out, "--isolate=false", "--quiet")
	if code != exitFound {
		t.Fatalf("run: exit %d, want 1: %s", code, errs)
	}
	seeds, _ := filepath.Glob(filepath.Join(out, "findings", "*", "*.json"))
	if len(seeds) == 0 {
		t.Fatal("no seed written")
	}
	return seeds[0]
}

// TestExitCodes: every command's statuses (0 done, 1 found, 2 bad input,
// 3 I/O error), with a message naming the flag or the file.
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	seed := findingSeed(t, dir)
	afile := filepath.Join(dir, "afile")
	if err := os.WriteFile(afile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	notFound := tinyCampaign(t, t.TempDir(), "cwnd > 1e9")
	held := filepath.Join(dir, "found")
	otherCampaign := tinyCampaign(t, t.TempDir(), "cwnd > 5e9")
	bad := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	emptyCCAI := bad("empty.yaml", "ccai: []\n")
	lots := bad("lots.yaml", "ccai: [reno]\nbudget: lots\n")
	typo := bad("typo.yaml", "ccai: [reno]\nbudgett: 5\n")
	sb, _ := os.ReadFile(seed)
	sb = bytes.Replace(sb, []byte(`"reno"`), []byte(`"gentle"`), 1)
	sb = bytes.Replace(sb, []byte(`"program": "`), []byte(`"program": "example.com/mycca v1.2.0 (actfuzz v0.3.0)`), 1)
	sb = bytes.Replace(sb, []byte(`(actfuzz v0.3.0)actfuzz`), []byte(`(actfuzz v0.3.0)`), 1)
	foreign := bad("foreign.json", string(sb))
	ob, _ := os.ReadFile(seed)
	noHit := bad("nohit.json", string(bytes.Replace(ob, []byte(`"when": "cwnd >= 1"`), []byte(`"when": "cwnd > 1e12"`), 1)))
	for _, tc := range []struct {
		name string
		args []string
		code int
		msg  string // in stdout or stderr
	}{
		{"run nothing found", []string{"run", notFound, "--out", filepath.Join(dir, "nf"), "--isolate=false", "--quiet"}, 0, "no findings"},
		{"run unwritable out", []string{"run", notFound, "--out", "/proc/nope", "--isolate=false", "--quiet"}, 3, "/proc/nope"},
		{"run out holds a campaign", []string{"run", notFound, "--out", held, "--isolate=false", "--quiet"}, 2, "--resume"},
		{"run resume other campaign", []string{"run", otherCampaign, "--out", held, "--resume", "--isolate=false", "--quiet"}, 2, "another campaign"},
		{"run unknown flag", []string{"run", "--budgett", "5"}, 2, `did you mean "--budget"`},
		{"run bad method", []string{"run", "--method", "x"}, 2, "--method"},
		{"run ccai empty", []string{"run", emptyCCAI}, 2, "empty.yaml:1: ccai: empty"},
		{"run budget lots", []string{"run", lots}, 2, "lots.yaml:2: budget: want an integer"},
		{"run key typo", []string{"run", typo}, 2, `typo.yaml:2: budgett: unknown key (did you mean "budget"?)`},
		{"sim trace unwritable", []string{"sim", "--bytes", "100000", "--trace", filepath.Join(afile, "t.csv")}, 3, "--trace"},
		{"sim", []string{"sim", "--bytes", "100000"}, 0, ""},
		{"sim ccai typo", []string{"sim", "--cca", "cubc"}, 2, `did you mean "cubic"?`},
		{"replay reproduced", []string{"replay", seed}, 0, "reproduced"},
		{"replay bad plot", []string{"replay", seed, "--plot", filepath.Join(dir, "x.txt")}, 2, "--plot"},
		{"replay trace unwritable", []string{"replay", seed, "--trace", filepath.Join(afile, "t.csv")}, 3, "--trace"},
		{"replay foreign ccai", []string{"replay", foreign}, 2, `"gentle" is not in this program`},
		{"replay foreign program", []string{"replay", foreign}, 2, "written by example.com/mycca v1.2.0"},
		{"replay not reproduced", []string{"replay", noHit}, 1, "NOT reproduced"},
		{"minimize", []string{"minimize", seed, "--out", filepath.Join(dir, "m", "min.json"), "--runs", "3"}, 0, "minimized"},
		{"minimize no hit", []string{"minimize", noHit, "--runs", "3"}, 1, "does not hit"},
		{"replay missing seed", []string{"replay", filepath.Join(dir, "none.json")}, 2, "none.json"},
		{"minimize out under a file", []string{"minimize", seed, "--out", filepath.Join(afile, "m.json"), "--runs", "3"}, 3, "--out"},
		{"sym seeds under a file", []string{"sym", "--scenario", "udp4", "--n", "1", "--hi", "8", "--seeds", filepath.Join(afile, "s")}, 3, "--seeds"},
		{"compare bad plot", []string{"compare", notFound, "--plot", filepath.Join(dir, "x.txt")}, 2, "--plot"},
		{"compare plot unwritable", []string{"compare", notFound, "--budget", "4", "--methods", "ran", "--isolate=false", "--quiet", "--plot", filepath.Join(afile, "c.png")}, 3, "--plot"},
		{"sim help names the flag's argument", []string{"help", "sim"}, 0, "-cca NAME"},
		{"worker help", []string{"worker", "--help"}, 0, "-memory-limit"},
		{"diff agree", []string{"diff", seed, "--vs", "native"}, 0, ""},
		{"list", []string{"list"}, 0, "reno"},
		{"help run", []string{"help", "run"}, 0, "exit status"},
		{"version", []string{"--version"}, 0, "actfuzz"},
		{"unknown command", []string{"rnu"}, 2, `did you mean "run"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCLI(context.Background(), tc.args...)
			if code != tc.code || !strings.Contains(out+errs, tc.msg) {
				t.Errorf("%v: exit %d, stdout %q, stderr %q; want %d mentioning %q", tc.args, code, out, errs, tc.code, tc.msg)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "x.txt")); err == nil {
		t.Error("replay --plot x.txt left a file")
	}
}

// TestRunCorruptCheckpoint: a checkpoint that cannot be read is an I/O
// error (3), not a finding.
func TestRunCorruptCheckpoint(t *testing.T) {
	dir := t.TempDir()
	camp := tinyCampaign(t, dir, "cwnd > 1e9")
	out := filepath.Join(dir, "o")
	if code, _, errs := runCLI(context.Background(), "run", camp, "--out", out, "--isolate=false", "--quiet"); code != 0 {
		t.Fatalf("run: exit %d: %s", code, errs)
	}
	cps, _ := filepath.Glob(filepath.Join(out, "coverage", "checkpoint-*.gob"))
	if len(cps) == 0 {
		t.Fatal("no checkpoint")
	}
	if err := os.WriteFile(cps[0], []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI(context.Background(), "run", camp, "--out", out, "--resume", "--budget", "8", "--isolate=false", "--quiet")
	if code != exitInternal || !strings.Contains(errs, "corrupt checkpoint") {
		t.Errorf("corrupt checkpoint: exit %d, stderr %q; want 3", code, errs)
	}
}

// TestRunInterrupted: a run interrupted by a signal (its context) exits 130
// after writing a checkpoint that --resume continues.
func TestRunInterrupted(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "long.yaml")
	src := "ccai: [reno]\nbytes: 2000000\nbudget: 100000\nconditions:\n  - {name: c, when: \"cwnd > 1e9\"}\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "o")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(1500*time.Millisecond, cancel) // as SIGINT does
	code, _, errs := runCLI(ctx, "run", path, "--out", out, "--isolate=false", "--quiet")
	if code != exitInterrupted || !strings.Contains(errs, "--resume") {
		t.Errorf("exit %d, stderr %q; want 130 and how to resume", code, errs)
	}
	if cps, _ := filepath.Glob(filepath.Join(out, "coverage", "checkpoint-*.gob")); len(cps) == 0 {
		t.Error("no checkpoint after the interrupt")
	}
}

// TestRunDefaultOut: without --out, run writes into out/<campaign>-<time>
// and says so.
func TestRunDefaultOut(t *testing.T) {
	dir := t.TempDir()
	camp := tinyCampaign(t, dir, "cwnd >= 1")
	t.Chdir(dir)
	code, _, errs := runCLI(context.Background(), "run", camp, "--isolate=false")
	if code != exitFound {
		t.Fatalf("exit %d: %s", code, errs)
	}
	seeds, _ := filepath.Glob(filepath.Join(dir, "out", "tiny-*", "findings", "*", "*.json"))
	if len(seeds) == 0 || !strings.Contains(errs, filepath.Join("out", "tiny-")) {
		t.Errorf("no findings under out/tiny-* (stderr %q)", errs)
	}
}

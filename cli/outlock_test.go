//go:build unix

package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/actfuzz/actfuzz/corpus"
)

// TestRunOutLocked: run and compare refuse an --out that another process
// writes (exit 2, naming the flag and the holder), and a resume removes
// the temporary files of writes its killed predecessor did not finish.
func TestRunOutLocked(t *testing.T) {
	dir := t.TempDir()
	camp := tinyCampaign(t, dir, "cwnd > 1e9")
	out := filepath.Join(dir, "out")
	unlock, err := corpus.LockDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"run", camp, "--out", out, "--isolate=false", "--quiet"},
		{"run", camp, "--out", out, "--resume", "--isolate=false", "--quiet"},
		{"compare", camp, "--out", out, "--methods", "ran", "--isolate=false", "--quiet"},
	} {
		code, _, errs := runCLI(context.Background(), args...)
		want := fmt.Sprintf("--out %s is in use by another actfuzz process (pid %d)", out, os.Getpid())
		if code != exitUsage || !strings.Contains(errs, want) {
			t.Errorf("%s with --out held: exit %d, %q; want 2 and %q", args[0], code, errs, want)
		}
	}
	unlock()

	if code, _, errs := runCLI(context.Background(), "run", camp, "--out", out, "--isolate=false", "--quiet"); code != exitOK {
		t.Fatalf("run: exit %d: %s", code, errs)
	}
	// What a coordinator killed mid-checkpoint and mid-seed leaves.
	debris := []string{filepath.Join(out, "coverage", ".checkpoint-ran.gob.tmp12345"), filepath.Join(out, ".status.json.tmp7")}
	for _, f := range debris {
		if err := os.WriteFile(f, []byte("torn"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, _, errs := runCLI(context.Background(), "run", "--out", out, "--resume", "--budget", "8", "--isolate=false")
	if code != exitOK || !strings.Contains(errs, "removed 2 temporary files in "+out) {
		t.Fatalf("resume: exit %d: %s", code, errs)
	}
	for _, f := range debris {
		if _, err := os.Stat(f); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: left after the resume (%v)", f, err)
		}
	}
	// The lock went with the command.
	unlock, err = corpus.LockDir(out)
	if err != nil {
		t.Fatalf("after the run: %v", err)
	}
	unlock()
}

package cli

import (
	"bufio"
	"errors"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// TestPrintedCommandsRun (issue 51): every command a run prints — the
// terminal's hints, findings.md, the report, the resume line of an
// interrupted run of the default campaign — runs as printed with the
// built program, which is not on PATH: none exits 2 or 3, or fails to
// start (126, 127).
func TestPrintedCommandsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the program and runs campaigns")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin", "actfuzz")
	build := exec.Command("go", "build", "-o", bin, "./cmd/actfuzz")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	work := filepath.Join(dir, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	camp := tinyCampaign(t, work, "cwnd >= 1")
	sh := func(cmd string) (int, string) {
		c := exec.Command("sh", "-c", cmd)
		c.Dir = work
		c.Env = append(os.Environ(), "PATH=/usr/bin:/bin")
		out, err := c.CombinedOutput()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), string(out)
		}
		if err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
		return 0, string(out)
	}
	// The binary by its path, relative to the directory the run is in.
	rel, _ := filepath.Rel(work, bin)
	code, out := sh(rel + " run " + camp + " --out o --isolate=false")
	if code != exitFound {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	printed := collect(out, rel)
	for _, f := range []string{"o/findings.md", "o/report/index.html"} {
		b, err := os.ReadFile(filepath.Join(work, f))
		if err != nil {
			t.Fatal(err)
		}
		printed = append(printed, collect(html.UnescapeString(string(b)), rel)...)
	}
	// An interrupted run of the default campaign (no file) says how to
	// resume it.
	intr := exec.Command(rel, "run", "--out", "d", "--isolate=false", "--budget", "100000")
	intr.Dir = work
	stderr, err := intr.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := intr.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	var rest strings.Builder
	for sc.Scan() {
		rest.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "output in") {
			_ = intr.Process.Signal(syscall.SIGINT)
			break
		}
	}
	for sc.Scan() {
		rest.WriteString(sc.Text() + "\n")
	}
	_ = intr.Wait()
	resume := collect(rest.String(), rel)
	if len(resume) != 1 || !strings.Contains(resume[0], " run --resume --out d") {
		t.Fatalf("interrupted run printed %q as its commands:\n%s", resume, rest.String())
	}
	// The resume runs a few simulations more than the checkpoint holds.
	printed = append(printed, resume[0]+" --budget 4")

	seen := map[string]bool{}
	kinds := map[string]bool{}
	for _, cmd := range printed {
		if seen[cmd] {
			continue
		}
		seen[cmd] = true
		if !strings.HasPrefix(cmd, rel+" ") {
			t.Errorf("%q does not start with the program as it was run (%s)", cmd, rel)
		}
		kinds[strings.Fields(cmd)[1]] = true
		if code, out := sh(cmd); code == exitUsage || code == exitInternal || code == 126 || code == 127 {
			t.Errorf("%s: exit %d\n%s", cmd, code, out)
		}
	}
	t.Logf("ran %d printed commands of kinds %v", len(seen), kinds)
	for _, k := range []string{"replay", "minimize", "run"} {
		if !kinds[k] {
			t.Errorf("no %s command printed (printed: %q)", k, printed)
		}
	}
}

// collect returns the commands printed in text that start with prog.
func collect(text, prog string) []string {
	re := regexp.MustCompile(regexp.QuoteMeta(prog) + " (?:replay|minimize|diff|run) [^`<\n]*")
	var cmds []string
	for _, m := range re.FindAllStringSubmatch(text, -1) {
		cmds = append(cmds, strings.TrimSpace(m[0]))
	}
	return cmds
}

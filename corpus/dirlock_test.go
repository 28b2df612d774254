//go:build unix

package corpus

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLockDir: a directory's lock is held once; a second taker gets
// ErrLocked with the holder's pid; unlock frees it.
func TestLockDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	unlock, err := LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = LockDir(dir)
	var le *LockedError
	if !errors.Is(err, ErrLocked) || !errors.As(err, &le) || le.PID != os.Getpid() {
		t.Fatalf("second LockDir: %v, want ErrLocked held by pid %d", err, os.Getpid())
	}
	if err := os.WriteFile(filepath.Join(dir, "campaign.yaml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	unlock()
	unlock2, err := LockDir(dir)
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	unlock2()
	if _, err := os.Stat(filepath.Join(dir, "campaign.yaml")); err != nil {
		t.Fatalf("a directory with a campaign in it after unlock: %v", err)
	}
}

// TestLockDirLeavesNothing: the directories LockDir made go at unlock when
// nothing but the lock was written in them (a command that failed first);
// one that was there stays.
func TestLockDirLeavesNothing(t *testing.T) {
	root := t.TempDir()
	unlock, err := LockDir(filepath.Join(root, "out", "c-1"))
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	if ents, err := os.ReadDir(root); err != nil || len(ents) != 0 {
		t.Fatalf("after a lock of a new directory and nothing written: %v, %v", ents, err)
	}
	if err := os.Mkdir(filepath.Join(root, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	unlock, err = LockDir(filepath.Join(root, "out", "c-2"))
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	if ents, err := os.ReadDir(filepath.Join(root, "out")); err != nil || len(ents) != 0 {
		t.Fatalf("out/ after c-2's lock: %v, %v; want out/ alone, empty", ents, err)
	}
}

// TestLockDirHelper is the process of TestLockDirKilled: it takes the
// lock, says so and waits to be killed.
func TestLockDirHelper(t *testing.T) {
	dir := os.Getenv("ACTFUZZ_LOCK_HELPER")
	if dir == "" {
		t.Skip("a helper process of TestLockDirKilled")
	}
	if _, err := LockDir(dir); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("locked\n")
	select {}
}

// TestLockDirKilled: the lock of a process killed with SIGKILL is free at
// once; nothing stale is left to clear by hand.
func TestLockDirKilled(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockDirHelper$")
	cmd.Env = append(os.Environ(), "ACTFUZZ_LOCK_HELPER="+dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "locked\n" {
		t.Fatalf("helper: %q, %v", line, err)
	}
	_, err = LockDir(dir)
	var le *LockedError
	if !errors.As(err, &le) || le.PID != cmd.Process.Pid {
		t.Fatalf("LockDir while the helper holds it: %v, want held by pid %d", err, cmd.Process.Pid)
	}
	cmd.Process.Kill()
	cmd.Wait()
	unlock, err := LockDir(dir)
	if err != nil {
		t.Fatalf("LockDir after the holder was killed: %v", err)
	}
	unlock()
}

// TestRemoveDebris: the temporary files of atomic writes go, and nothing
// else does.
func TestRemoveDebris(t *testing.T) {
	dir := t.TempDir()
	// The name WriteAtomic gives its temporary file, seen mid-write.
	var tmpName string
	err := WriteAtomic(filepath.Join(dir, "coverage", "checkpoint-act.gob"), func(w io.Writer) error {
		ents, err := os.ReadDir(filepath.Join(dir, "coverage"))
		if err != nil || len(ents) != 1 {
			t.Fatalf("mid-write: %v, %v", ents, err)
		}
		tmpName = ents[0].Name()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	debris := []string{
		filepath.Join("coverage", tmpName),
		filepath.Join("findings", "cubic-aggressive", ".act-0001456.csv.tmp2611698984"),
		".status.json.tmp1",
	}
	kept := []string{
		filepath.Join("coverage", "checkpoint-act.gob"),
		filepath.Join("findings", "cubic-aggressive", "act-0001456.csv"),
		LockName,
		filepath.Join("coverage", ".resplit-123"),
		"status.json.tmp1", // not hidden: not WriteAtomic's
		".notes.tmp",       // no digits
		".a.json.tmp12x",
	}
	for _, f := range append(slices.Clone(debris), kept...) {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, ".dir.tmp1"), 0o755); err != nil {
		t.Fatal(err)
	}
	n, err := RemoveDebris(dir)
	if err != nil || n != len(debris) {
		t.Fatalf("RemoveDebris: %d, %v; want %d", n, err, len(debris))
	}
	for _, f := range debris {
		if _, err := os.Stat(filepath.Join(dir, f)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: still there (%v)", f, err)
		}
	}
	for _, f := range append(kept, ".dir.tmp1") {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: removed (%v)", f, err)
		}
	}
	if !strings.HasPrefix(tmpName, ".checkpoint-act.gob.tmp") {
		t.Errorf("WriteAtomic's temporary file %q", tmpName)
	}
}

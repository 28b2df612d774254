package capread

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, n int) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Repeat("7", n)), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	at, over := write("at", 100), write("over", 101)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		regular    bool
		n          int
		err        string
		capped     bool
	}{
		{"at the cap", at, true, 100, "", false},
		{"over the cap", over, true, 0, "over the cap of 100 bytes (max_test_bytes)", true},
		{"over the cap, read", over, false, 0, "over the cap of 100 bytes (max_test_bytes)", true},
		{"/dev/zero, regular wanted", "/dev/zero", true, 0, "not a regular file", false},
		{"/dev/zero, read to the cap", "/dev/zero", false, 0, "over the cap", true},
		// Opening a FIFO blocks until a writer comes: refused first.
		{"fifo", fifo, true, 0, "not a regular file", false},
		{"directory", dir, true, 0, "not a regular file", false},
		{"missing", filepath.Join(dir, "none"), true, 0, "no such file", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := ReadFile(tc.path, 100, "max_test_bytes", tc.regular)
			switch {
			case tc.err == "" && (err != nil || len(b) != tc.n):
				t.Fatalf("%d bytes, %v", len(b), err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("error %v, want %q", err, tc.err)
			}
			if errors.Is(err, ErrCapped) != tc.capped {
				t.Errorf("errors.Is(%v, ErrCapped) = %v", err, !tc.capped)
			}
		})
	}
}

package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/netenv/ns3"
)

// diffVs offers no diff a subject refuses: ns-3 has no linux-3.10
// profile, and pinned-delay seeds run on the native simulator only.
func TestDiffVsRefusals(t *testing.T) {
	seed, err := corpus.ReadSeed(findingSeed(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(ns3.EnvDriver, "/bin/true") // a driver is found (not run)
	for _, tc := range []struct {
		name string
		edit func(s *corpus.Seed)
		want []string // any of
	}{
		{"native, default profile", func(*corpus.Seed) {}, []string{"ns3"}},
		{"native, linux-3.10", func(s *corpus.Seed) { s.Profile = "linux-3.10" }, []string{""}},
		{"pinned delays", func(s *corpus.Seed) { s.Pinned = &corpus.PinnedDelays{} }, []string{""}},
		{"unknown subject", func(s *corpus.Seed) { s.Subject = "nosuch" }, []string{""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := *seed
			tc.edit(&s)
			got := diffVs(&s)
			ok := false
			for _, w := range tc.want {
				ok = ok || got == w
			}
			if !ok {
				t.Errorf("diffVs = %q, want one of %q", got, tc.want)
			}
		})
	}
}

// commandFor: the bare name only when PATH finds this very program.
func TestCommandFor(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "bin", "actfuzz")
	other := filepath.Join(dir, "elsewhere", "actfuzz")
	for _, p := range []string{exe, other} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	found := func(p string) func(string) (string, error) {
		return func(string) (string, error) { return p, nil }
	}
	missing := func(string) (string, error) { return "", errors.New("not found") }
	for _, tc := range []struct {
		name, arg0, exe string
		look            func(string) (string, error)
		want            string
	}{
		{"on PATH", "actfuzz", exe, found(exe), "actfuzz"},
		{"run by path, not on PATH", "bin/actfuzz", exe, missing, "bin/actfuzz"},
		{"run by path, another on PATH", "bin/actfuzz", exe, found(other), "bin/actfuzz"},
		{"no usable arg0", "x", exe, missing, exe},
		{"go run", "/tmp/go-build1/b001/exe/actfuzz", "/tmp/go-build1/b001/exe/actfuzz", missing, "go run github.com/actfuzz/actfuzz/cmd/actfuzz"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := commandFor(tc.arg0, tc.exe, tc.look, "github.com/actfuzz/actfuzz/cmd/actfuzz"); got != tc.want {
				t.Errorf("commandFor = %q, want %q", got, tc.want)
			}
		})
	}
}

// Every command's help gives every exit status a meaning (issue 51: "1 —").
func TestExitHelpMeanings(t *testing.T) {
	for _, c := range append(commands(), command{name: ""}) {
		h := exitHelp(c.name)
		for _, line := range strings.Split(strings.TrimSpace(h), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 2 || f[1] == "—" {
				t.Errorf("help %q: %q has no meaning", c.name, line)
			}
		}
		for _, code := range []string{"  0 ", "  2 ", "  3 "} {
			if !strings.Contains(h, code) {
				t.Errorf("help %q lacks status %q", c.name, code)
			}
		}
	}
}

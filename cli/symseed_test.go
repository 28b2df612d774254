package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSymSeed: actfuzz sym --seed's bad input exits 2 naming the flag; a
// small window writes witness seeds that actfuzz replay reproduces.
func TestSymSeed(t *testing.T) {
	dir := t.TempDir()
	seed := findingSeed(t, dir)
	b, err := os.ReadFile(seed)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, []byte(`,
  "finding"`))
	if i < 0 {
		t.Fatalf("no finding in %s", b)
	}
	noFinding := filepath.Join(dir, "nofinding.json")
	if err := os.WriteFile(noFinding, append(b[:i:i], []byte("\n}\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--seed", seed}, "--window: give"},
		{[]string{"--seed", seed, "--window", "last x before hit"}, "--window: "},
		{[]string{"--seed", seed, "--window", "data 4..2"}, "--window: "},
		{[]string{"--seed", seed, "--window", "first 2"}, "--window: "},
		{[]string{"--seed", noFinding, "--window", "last 2 before hit"}, "--window: \"last 2 before hit\" needs a seed with a finding"},
		{[]string{"--seed", seed, "--window", "data 100000..100001"}, "--window: "},
		{[]string{"--seed", seed, "--window", "last 2 before hit"}, "--window: \"last 2 before hit\": no ACK of flow 0 that can have reached the sender before the hit at 0s reports more than 0 data segments"},
		{[]string{"--seed", seed, "--window", "data 1..2", "--range", "9..3ms"}, "--range: "},
		{[]string{"--seed", seed, "--window", "data 1..2", "--reductions", "SH"}, "--reductions: "},
		{[]string{"--seed", seed, "--window", "data 1..2", "--flow", "3"}, "--flow: "},
		{[]string{"--seed", seed, "--window", "data 1..2", "--max-seeds", "-1"}, "--max-seeds: "},
		{[]string{"--seed", filepath.Join(dir, "missing.json"), "--window", "data 1..2"}, "--seed: "},
		{[]string{"--seed", seed, "--window", "data 1..2", "scenario.yaml"}, "--seed: "},
	} {
		code, _, errs := runCLI(context.Background(), append([]string{"sym"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(errs, tc.msg) {
			t.Errorf("sym %q: exit %d, %q; want 2 with %q", tc.args, code, errs, tc.msg)
		}
	}
	out := filepath.Join(dir, "w")
	code, stdout, errs := runCLI(context.Background(), "sym", "--seed", seed, "--window", "data 3..4", "--range", "1..4ms", "--out", out)
	if code != exitFound {
		t.Fatalf("sym --seed: exit %d, want 1 (the seed's condition, cwnd >= 1, always holds): %s %s", code, stdout, errs)
	}
	if !strings.Contains(stdout, "condition c: ") || !strings.Contains(stdout, "extra delay min") {
		t.Fatalf("no summary: %s", stdout)
	}
	seeds, _ := filepath.Glob(filepath.Join(out, "*.json"))
	if len(seeds) == 0 {
		t.Fatalf("no witness seeds: %s", errs)
	}
	if code, stdout, errs := runCLI(context.Background(), "replay", seeds[len(seeds)-1]); code != exitOK {
		t.Fatalf("replay %s: exit %d: %s %s", seeds[len(seeds)-1], code, stdout, errs)
	}
	for _, cmd := range [][]string{{"minimize", seeds[0]}, {"diff", seeds[0]}, {"confirm", seeds[0]}} {
		if code, _, errs := runCLI(context.Background(), cmd...); code != exitUsage || !strings.Contains(errs, "pins a window") {
			t.Errorf("%v on a pinned seed: exit %d: %s", cmd, code, errs)
		}
	}
	if code, _, errs := runCLI(context.Background(), "sym", "--seed", seeds[0], "--window", "data 1..2"); code != exitUsage || !strings.Contains(errs, "--seed: the seed already pins") {
		t.Fatalf("sym --seed on a witness: exit %d: %s", code, errs)
	}
}

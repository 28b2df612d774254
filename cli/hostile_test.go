package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHostileExitCodes: the commands on issue 48's inputs. Bad input
// exits 2 naming the file and the field, a seed that cannot be written 3
// with its path, a replay or a minimization past --watchdog 1 (a hang),
// an interrupted one 130; none hangs. No case depends on how fast the
// machine is: a watchdog of 1 ns has always expired.
func TestHostileExitCodes(t *testing.T) {
	dir := t.TempDir()
	seed := findingSeed(t, dir)
	// The same seed with a transfer long enough for the simulator to
	// look at its context (every few thousand events) before its end.
	b, err := os.ReadFile(seed)
	if err != nil {
		t.Fatal(err)
	}
	long := filepath.Join(dir, "long.json")
	if err := os.WriteFile(long, []byte(strings.Replace(string(b), `"bytes": 200000,`, `"bytes": 200000000,`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	// A campaign whose findings directory is a file: its seed cannot be
	// written.
	blocked := filepath.Join(dir, "blocked")
	if err := os.MkdirAll(filepath.Join(blocked, "findings"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(blocked, "findings", "c"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		args []string
		code int
		msg  string
	}{
		{"replay past the watchdog", context.Background(), []string{"replay", long, "--watchdog", "1ns"}, 1, "went past --watchdog 1ns"},
		{"replay interrupted", cancelled, []string{"replay", seed}, 130, ""},
		{"minimize past the watchdog", context.Background(), []string{"minimize", long, "--runs", "3", "--watchdog", "1ns", "--out", filepath.Join(dir, "m.json")}, 1, "went past the watchdog"},
		{"minimize interrupted", cancelled, []string{"minimize", seed, "--runs", "3", "--out", filepath.Join(dir, "m2.json")}, 130, ""},
		{"minimize bad watchdog", context.Background(), []string{"minimize", seed, "--watchdog", "-1s"}, 2, "--watchdog"},
		{"replay a looping condition", context.Background(), []string{"replay", "../corpus/testdata/hostile/when-nested-map.json"}, 2, `when-nested-map.json: finding: condition "big": when: 1:5: map(…) is not allowed`},
		{"replay an escaping name", context.Background(), []string{"replay", "../corpus/testdata/hostile/name-escape.json"}, 2, `(U+001B) is not printable`},
		{"replay an environment trace", context.Background(), []string{"replay", "../corpus/testdata/hostile/trace-environ.json"}, 2, `link trace "environ":1:1: want a millisecond timestamp`},
		{"run unknown state variable", context.Background(), []string{"run", "../act/testdata/hostile/state-unknown.yaml", "--out", filepath.Join(dir, "s")}, 2, "state-unknown.yaml:3: state.nosuchvar: unknown state variable"},
		{"run names alike", context.Background(), []string{"run", "../act/testdata/hostile/names-sanitize-alike.yaml", "--out", filepath.Join(dir, "n")}, 2, `conditions[0].name "a.b" and conditions[1].name "a/b"`},
		{"run /dev/zero trace", context.Background(), []string{"run", "../act/testdata/hostile/trace-dev-zero.yaml", "--out", filepath.Join(dir, "z")}, 2, "/dev/zero: not a regular file"},
		{"run seed unwritable", context.Background(), []string{"run", tinyCampaign(t, t.TempDir(), "cwnd >= 1"), "--out", blocked, "--resume", "--isolate=false", "--quiet"}, 3, filepath.Join(blocked, "findings", "c", "act-")},
		{"sym end_s: ten", context.Background(), []string{"sym", "../netenv/symbolic/testdata/hostile/end-ten.yaml"}, 2, `end-ten.yaml:3: end_s: want a number, not "ten"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCLI(tc.ctx, tc.args...)
			if code != tc.code || !strings.Contains(out+errs, tc.msg) {
				t.Errorf("%v: exit %d, stdout %q, stderr %q; want %d mentioning %q", tc.args, code, out, errs, tc.code, tc.msg)
			}
			if strings.Contains(out+errs, "\x1b") || strings.Contains(out+errs, "hunter2") {
				t.Errorf("%v: the output carries what the file held: %q", tc.args, out+errs)
			}
		})
	}
}

package netenv_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/actfuzz/actfuzz/netenv"
)

// TestUserLinkTrace: a trace file of the user's with the content of a
// shipped trace gives exactly the shipped trace's run, in one phase or
// across phases; a seed-like round trip (content carried, loaded again)
// gives it too; and what cannot be a trace is refused with the field named.
func TestUserLinkTrace(t *testing.T) {
	dir := t.TempDir()
	lte, err := os.ReadFile("linktrace/traces/lte.trace")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "mine.trace")
	if err := os.WriteFile(path, lte, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := netenv.ReadLinkTraceFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Gzip) >= len(lte)/2 {
		t.Errorf("%d bytes compressed to %d", len(lte), len(f.Gzip))
	}
	env := netenv.DefaultEnv()
	env.Loss, env.BW, env.Delay, env.Buffer = 0, 100, 10, 200
	named := func(name string) netenv.LinkTrace {
		var tr netenv.LinkTrace
		if err := tr.UnmarshalText([]byte(name)); err != nil {
			t.Fatal(err)
		}
		return tr
	}
	shipped, user := env, env
	shipped.Trace, user.Trace = named("lte"), named("user1")
	carried := &netenv.LinkTraceFile{Name: f.Name, SHA256: f.SHA256, Gzip: f.Gzip} // as decoded from a seed
	for _, tc := range []struct {
		name  string
		sched func(e netenv.Env) netenv.Schedule
	}{
		{"one phase", func(e netenv.Env) netenv.Schedule { return netenv.Constant(e) }},
		{"switched to at 1 s", func(e netenv.Env) netenv.Schedule {
			return netenv.Schedule{{Env: env, Until: 1e9}, {Env: e}}
		}},
	} {
		cfg := single("bbr", shipped, 3_000_000, 7)
		cfg.Schedule = tc.sched(shipped)
		want, _ := run(t, cfg)
		for _, files := range [][]*netenv.LinkTraceFile{{f}, {carried}} {
			cfg := single("bbr", user, 3_000_000, 7)
			cfg.Schedule = tc.sched(user)
			cfg.LinkTraces = files
			got, _ := run(t, cfg)
			if got.TraceSHA256 != want.TraceSHA256 {
				t.Errorf("%s: the user's copy of lte ran differently from lte", tc.name)
			}
		}
	}

	bad := &netenv.LinkTraceFile{Name: f.Name, SHA256: strings.Repeat("0", 64), Gzip: f.Gzip}
	cfg := single("bbr", user, 3_000_000, 7)
	cfg.LinkTraces = []*netenv.LinkTraceFile{bad}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "sha256") {
		t.Errorf("a file whose content does not match its hash: %v", err)
	}
	cfg.LinkTraces = nil
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "user1") {
		t.Errorf("user1 without a file: %v", err)
	}
	if err := netenv.LoadLinkTraces(make([]*netenv.LinkTraceFile, 5)); err == nil {
		t.Error("five files accepted")
	}
	for _, content := range []string{"", "12\n5\n", "x\n"} {
		p := filepath.Join(dir, "bad.trace")
		_ = os.WriteFile(p, []byte(content), 0o644)
		if _, err := netenv.ReadLinkTraceFile(p); err == nil {
			t.Errorf("trace %q accepted", content)
		}
	}
}

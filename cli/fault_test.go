package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/netenv"
)

// TestMain makes the test binary its own `actfuzz worker`: the supervisor
// starts os.Executable() with the argument "worker", so the test-only CCAIs
// below exist in the workers too.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "worker" {
		os.Exit(dispatch(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// Test-only CCAIs: Reno that, after 100 ms of simulated time, hangs or
// panics on another goroutine.
type misbehaving struct {
	ccai.Reno
	fn func()
}

func (m *misbehaving) CongAvoid(s *ccai.Sock, acked uint32) {
	if s.Now >= 100*time.Millisecond {
		m.fn()
	}
	m.Reno.CongAvoid(s, acked)
}

func init() {
	for name, fn := range map[string]func(){
		"test-hang": func() {
			for {
			}
		},
		"test-crash": func() {
			go func() { panic("test-crash: a panic on another goroutine") }()
			time.Sleep(time.Hour)
		},
	} {
		ccai.Register(ccai.Info{Name: name, Description: "test only", New: func() ccai.Algorithm { return &misbehaving{fn: fn} }})
	}
}

// `actfuzz replay` identifies a hang, oom or crash seed as that fault, in a
// supervised worker, without hanging or dying itself.
func TestReplayProcessFaults(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		subject, cca, kind string
		args               []string
		code               int
		out                string
	}{
		{"native", "test-hang", corpus.FaultHang, []string{"--watchdog", "1s"}, 0, "reproduced: hang"},
		{"native", "test-crash", corpus.FaultCrash, nil, 0, "test-crash: a panic on another goroutine"},
		{"native", "reno", corpus.FaultCrash, nil, 1, "NOT reproduced: crash: the run ended cleanly"},
		// A subject that is not deterministic (its condition seeds
		// replay as confirm's repeated runs) replays a process fault
		// once in a worker too: 100 MB in real time outlast 1 s.
		{"quic", "reno", corpus.FaultHang, []string{"--watchdog", "1s"}, 0, "reproduced: hang"},
	} {
		s := &corpus.Seed{Version: corpus.SeedVersion, Program: corpus.ProgramVersion(), Subject: tc.subject, CCAI: []string{tc.cca},
			Profile: "linux", Topology: netenv.TopoSingleLink, Bytes: 1_000_000, SACK: true, Seed: 7,
			Schedule: netenv.Constant(netenv.DefaultEnv()), Finding: &corpus.Finding{Kind: tc.kind}}
		if tc.subject == "quic" {
			s.Bytes = 100_000_000
		}
		path := filepath.Join(dir, tc.subject+"-"+tc.cca+".json")
		if err := s.Write(path); err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		start := time.Now()
		code := dispatch(context.Background(), append([]string{"replay", path}, tc.args...), &out, &errb)
		if code != tc.code || !strings.Contains(out.String(), tc.out) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want %d and %q", tc.cca, code, out.String(), errb.String(), tc.code, tc.out)
		}
		t.Logf("%s: %v: %s", tc.cca, time.Since(start).Round(time.Millisecond), strings.TrimSpace(out.String()))
	}
}

// The worker-process flags are checked like the others.
func TestIsolateFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"run", "--worker-memory", "lots"}, "--worker-memory"},
		{[]string{"run", "--worker-memory", "-1G"}, "--worker-memory"},
		{[]string{"compare", "--watchdog", "-1s"}, "--watchdog"},
		{[]string{"replay", "--worker-memory", "0", "x.json"}, "--worker-memory"},
		{[]string{"worker", "--memory-limit", "0"}, "--memory-limit"},
	} {
		var out, errb bytes.Buffer
		if code := dispatch(context.Background(), tc.args, &out, &errb); code != exitUsage || !strings.Contains(errb.String(), tc.msg) {
			t.Errorf("%v: exit %d, stderr %q; want %d naming %s", tc.args, code, errb.String(), exitUsage, tc.msg)
		}
	}
	for _, s := range []struct {
		in   string
		want int64
	}{{"1G", 1 << 30}, {"512M", 512 << 20}, {"1.5KiB", 1536}, {"1000", 1000}} {
		if got, err := parseSize(s.in); err != nil || got != s.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", s.in, got, err, s.want)
		}
	}
}

// `actfuzz replay` of a hang of a window of ACT's symbolic step explores
// the window its seed names (symbolic_window) again under the watchdog:
// the seed's (here 1 µs: it hangs again), or --watchdog's (here long
// enough to finish: reported plainly as not hanging this time). Bad
// windows exit 2 naming the field.
func TestReplaySymbolicHang(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, edit func(w *corpus.SymWindow)) string {
		s := &corpus.Seed{Version: corpus.SeedVersion, Program: corpus.ProgramVersion(), Subject: "native", CCAI: []string{"reno"},
			Profile: "linux", Topology: netenv.TopoSingleLink, Bytes: 1_000_000, SACK: true, Seed: 7,
			Schedule: netenv.Constant(netenv.DefaultEnv()), Finding: &corpus.Finding{Kind: corpus.FaultHang, TimeNS: 1e9},
			SymWindow: &corpus.SymWindow{Window: "last 2 before hit", AtNS: 1e9, LoMS: 1, HiMS: 50, ResMS: 1, Reductions: "SCI",
				MaxBranches: 4, WatchdogNS: int64(time.Microsecond)}}
		if edit != nil {
			edit(s.SymWindow)
		}
		path := filepath.Join(dir, name+".json")
		if err := s.Write(path); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good := write("good", nil)
	for _, tc := range []struct {
		name string
		args []string
		code int
		out  string // stdout, or stderr when code is exitUsage
	}{
		{"the seed's watchdog", []string{"replay", good}, 0, "reproduced: hang: symbolic window \"last 2 before hit\""},
		{"a longer watchdog", []string{"replay", good, "--watchdog", "10m"}, 1, "NOT reproduced: hang: symbolic window \"last 2 before hit\" at 1s (data "},
		{"json", []string{"replay", "--json", good, "--watchdog", "10m"}, 1, `"reproduced": false`},
		{"bad resolution", []string{"replay", write("res", func(w *corpus.SymWindow) { w.ResMS = 0 })}, exitUsage, "symbolic_window.res_ms"},
		{"too early", []string{"replay", write("early", func(w *corpus.SymWindow) { w.AtNS = 1 }), "--watchdog", "10m"}, exitUsage, "symbolic_window: --window"},
		{"minimize", []string{"minimize", good}, exitUsage, "a hang of a symbolic window"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := dispatch(context.Background(), tc.args, &out, &errb)
			got := out.String()
			if tc.code == exitUsage {
				got = errb.String()
			}
			if code != tc.code || !strings.Contains(got, tc.out) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want %d and %q", code, out.String(), errb.String(), tc.code, tc.out)
			}
			t.Logf("%s", strings.TrimSpace(out.String()+errb.String()))
		})
	}
}

// A process fault's replay without --watchdog allows what a run of the
// seed's subject takes by design: a quic run lasts up to 2 minutes of
// wall clock, which the replay's 60 s default took for a hang.
func TestFaultReplayWatchdog(t *testing.T) {
	for _, tc := range []struct {
		subject string
		set     time.Duration // --watchdog, 0: not given
		want    time.Duration
	}{
		{"native", 0, 60 * time.Second},
		{"quic", 0, 4 * time.Minute},
		{"quic", 5 * time.Second, 5 * time.Second},
	} {
		iso := act.IsolateOptions{Watchdog: 60 * time.Second} // the flag's default
		if tc.set > 0 {
			iso.Watchdog = tc.set
		}
		got := faultReplayOptions(&corpus.Seed{Subject: tc.subject}, iso, tc.set > 0).FirstWatchdog()
		if got != tc.want {
			t.Errorf("%s seed, --watchdog %v: watchdog %v, want %v", tc.subject, tc.set, got, tc.want)
		}
	}
}

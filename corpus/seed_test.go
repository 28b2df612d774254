package corpus

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv"
)

func testSeed(e uint64) *Seed {
	env := netenv.DefaultEnv()
	env.Loss = 0.01
	env.QShape, env.QScale = 1.5, 2
	env2 := env
	env2.BW = 3
	return &Seed{Version: SeedVersion, Program: ProgramVersion(), Subject: "native", CCAI: []string{"cubic"}, Profile: "linux",
		Topology: netenv.TopoSingleLink, Bytes: 200_000, SACK: true, Seed: e,
		Schedule: netenv.Schedule{{Env: env, Until: 300 * time.Millisecond}, {Env: env2}}}
}

func TestSeedRoundTrip(t *testing.T) {
	s := testSeed(9)
	s.Finding = &Finding{Condition: "c", When: "cwnd > 5", Kind: "condition", TimeNS: 123, State: map[string]any{"cwnd": 7.0, "ca_state": "open"}}
	path := filepath.Join(t.TempDir(), "s.json")
	if err := s.Write(path); err != nil {
		t.Fatal(err)
	}
	got, err := ReadSeed(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, s) {
		t.Fatalf("round trip changed the seed:\n%+v\n%+v", got, s)
	}
}

// Non-finite state values are written as "NaN", "+Inf", "-Inf" and read
// back as numbers.
func TestSeedNonFinite(t *testing.T) {
	s := testSeed(9)
	s.Finding = &Finding{Condition: "c", When: "cwnd > 5", Kind: "condition", TimeNS: 1,
		State: StateValues{"cwnd": 7.0, "nan": math.NaN(), "pinf": math.Inf(1), "ninf": math.Inf(-1), "ca_state": "open"}}
	path := filepath.Join(t.TempDir(), "s.json")
	if err := s.Write(path); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	for _, want := range []string{`"nan": "NaN"`, `"pinf": "+Inf"`, `"ninf": "-Inf"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("seed file lacks %s", want)
		}
	}
	got, err := ReadSeed(path)
	if err != nil {
		t.Fatal(err)
	}
	st := got.Finding.State
	if f, _ := st["nan"].(float64); !math.IsNaN(f) {
		t.Errorf("nan read back as %v", st["nan"])
	}
	if st["pinf"] != math.Inf(1) || st["ninf"] != math.Inf(-1) || st["cwnd"] != 7.0 || st["ca_state"] != "open" {
		t.Errorf("read back %v", st)
	}
}

func TestMalformedSeeds(t *testing.T) {
	good, _ := os.ReadFile(func() string {
		p := filepath.Join(t.TempDir(), "g.json")
		_ = testSeed(1).Write(p)
		return p
	}())
	for _, tc := range []struct{ name, body, want string }{
		{"truncated", string(good[:len(good)/2]), "malformed seed file"},
		{"not json", "hello", "malformed seed file"},
		{"unknown field", strings.Replace(string(good), `"version"`, `"colour": 1, "version"`, 1), "unknown field"},
		{"future version", strings.Replace(string(good), `"version": 2`, `"version": 99`, 1), "version 99"},
		{"bad ccai", strings.Replace(string(good), `"cubic"`, `"nope"`, 1), "unknown congestion control"},
		{"negative time", strings.Replace(string(good), `"seed": 1,`, `"seed": 1, "finding": {"condition": "c", "when": "cwnd > 1", "kind": "condition", "time_ns": -1, "flow": 0},`, 1), "finding.time_ns"},
		{"flow out of range", strings.Replace(string(good), `"seed": 1,`, `"seed": 1, "finding": {"condition": "c", "when": "cwnd > 1", "kind": "condition", "time_ns": 5, "flow": 3},`, 1), "finding.flow"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "s.json")
			os.WriteFile(p, []byte(tc.body), 0o644)
			_, err := ReadSeed(p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// Seeds of format version 1 (before witness) still read.
func TestSeedVersion1Reads(t *testing.T) {
	s := testSeed(1)
	s.Version = 1
	p := filepath.Join(t.TempDir(), "v1.json")
	if err := s.Write(p); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSeed(p); err != nil {
		t.Fatal(err)
	}
}

// Random seeds replayed twice give identical trace hashes.
func TestReplayDeterministic(t *testing.T) {
	n := 1000
	if testing.Short() {
		n = 100
	}
	for e := uint64(0); e < uint64(n); e++ {
		s := testSeed(e)
		a, err := Replay(context.Background(), s, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Replay(context.Background(), s, nil)
		if a.Result.TraceSHA256 != b.Result.TraceSHA256 {
			t.Fatalf("seed %d: %s vs %s", e, a.Result.TraceSHA256, b.Result.TraceSHA256)
		}
	}
}

// A finding replays: its condition holds at the recorded time with the
// recorded state; a tampered one does not.
func TestReplayFinding(t *testing.T) {
	s := testSeed(3)
	s.Finding = &Finding{Condition: "big", When: "cwnd > 12", Kind: "condition"}
	r, err := Replay(context.Background(), s, nil)
	if err != nil || r.HitTimeNS < 0 {
		t.Fatalf("no hit: %v %+v", err, r)
	}
	s.Finding.TimeNS, s.Finding.State = r.HitTimeNS, r.HitState
	r2, _ := Replay(context.Background(), s, nil)
	if !r2.Reproduced {
		t.Fatalf("did not reproduce: %v", r2.Diff)
	}
	s.Finding.TimeNS++
	r3, _ := Replay(context.Background(), s, nil)
	if r3.Reproduced {
		t.Fatal("tampered finding reproduced")
	}
}

// A condition on one CCAI's variable applies to the flows that have it.
func TestWatcherMixedCCAIs(t *testing.T) {
	w, err := NewWatcher([]string{"cubic", "reno"}, []ConditionSpec{{Name: "t", When: "target > 2*cwnd"}, {Name: "c", When: "cwnd > 5"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(w.conds[0]) != 2 || len(w.conds[1]) != 1 {
		t.Fatalf("conditions per flow: %d, %d; want 2, 1", len(w.conds[0]), len(w.conds[1]))
	}
	if _, err := NewWatcher([]string{"reno", "cubic"}, []ConditionSpec{{Name: "t", When: "target > 2*cwnd"}}); err == nil {
		t.Fatal("a condition unknown to the first flow's CCAI must be an error")
	}
}

// TestSeedSetupRoundTrip checks that a seed made from a setup gives the
// setup back, and the run configuration that the setup gives.
func TestSeedSetupRoundTrip(t *testing.T) {
	prof, err := ccai.ParseProfile("linux-3.10")
	if err != nil {
		t.Fatal(err)
	}
	st := netenv.Setup{CCAI: []string{"reno", "cubic"}, Topology: netenv.TopoDumbbell, Profile: prof, Bytes: 123456, SACK: false, Handshake: true}
	sched := netenv.Schedule{{Env: netenv.DefaultEnv(), Until: time.Second}, {Env: netenv.DefaultEnv()}}
	s := NewSeed("native", st, 42, sched)
	back, err := s.Setup()
	if err != nil || !reflect.DeepEqual(back, st) {
		t.Fatalf("Setup() = %+v, %v; want %+v", back, err, st)
	}
	cfg, err := s.Config()
	if err != nil {
		t.Fatal(err)
	}
	want := st.Config(42, sched)
	if !reflect.DeepEqual(cfg, want) || len(cfg.Flows) != 2 || cfg.Flows[1] != (netenv.Flow{CCA: "cubic", Bytes: 123456}) {
		t.Fatalf("Config() = %+v, want %+v", cfg, want)
	}
}

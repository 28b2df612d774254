package corpus

import (
	"context"
	"fmt"
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
		{"future version", strings.Replace(string(good), fmt.Sprintf(`"version": %d`, SeedVersion), `"version": 99`, 1), "version 99"},
		{"bad ccai", strings.Replace(string(good), `"cubic"`, `"nope"`, 1), "unknown congestion control"},
		{"negative time", strings.Replace(string(good), `"seed": 1,`, `"seed": 1, "finding": {"condition": "c", "when": "cwnd > 1", "kind": "condition", "time_ns": -1, "flow": 0},`, 1), "finding.time_ns"},
		{"trace absolute", strings.Replace(string(good), `"seed": 1,`, `"seed": 1, "finding": {"condition": "c", "when": "cwnd > 1", "kind": "condition", "time_ns": 5, "flow": 0, "trace": {"file": "/etc/passwd.csv", "records": 3, "kept": [], "trimmed": false, "window": 1}},`, 1), "finding.trace: file"},
		{"trace not a trace", strings.Replace(string(good), `"seed": 1,`, `"seed": 1, "finding": {"condition": "c", "when": "cwnd > 1", "kind": "condition", "time_ns": 5, "flow": 0, "trace": {"file": "x.sh", "records": 3, "kept": [], "trimmed": false, "window": 1}},`, 1), "finding.trace: file"},
		{"trace spans", strings.Replace(string(good), `"seed": 1,`, `"seed": 1, "finding": {"condition": "c", "when": "cwnd > 1", "kind": "condition", "time_ns": 5, "flow": 0, "trace": {"file": "t.csv.gz", "records": 3, "kept": [{"first": 2, "last": 5, "from_ns": 0, "to_ns": 1}], "trimmed": false, "window": 1}},`, 1), "finding.trace: kept[0]"},
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

// Seeds of format versions 1 (before witness) and 2 (before
// symbolic_window) still read.
func TestSeedOldVersionsRead(t *testing.T) {
	for v := 1; v < SeedVersion; v++ {
		s := testSeed(1)
		s.Version = v
		p := filepath.Join(t.TempDir(), fmt.Sprintf("v%d.json", v))
		if err := s.Write(p); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadSeed(p); err != nil {
			t.Fatalf("version %d: %v", v, err)
		}
	}
}

// hangSeed is a seed of a window of ACT's symbolic step that hung.
func hangSeed() *Seed {
	s := testSeed(3)
	s.Finding = &Finding{Kind: FaultHang, TimeNS: 150_000_000, Detail: "symbolic window"}
	s.SymWindow = &SymWindow{Window: "last 2 before hit", AtNS: 150_000_000, LoMS: 1, HiMS: 50, ResMS: 1, Reductions: "SCI", MaxBranches: 6, WatchdogNS: 1000}
	return s
}

// A seed's symbolic_window round-trips, and gives ExploreSeed the window
// the symbolic step explored.
func TestSymWindowRoundTrip(t *testing.T) {
	s := hangSeed()
	path := filepath.Join(t.TempDir(), "hang.json")
	if err := s.Write(path); err != nil {
		t.Fatal(err)
	}
	got, err := ReadSeed(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, s) {
		t.Fatalf("round trip changed the seed:\n%+v\n%+v", got.SymWindow, s.SymWindow)
	}
	opt, err := got.SymWindow.Options()
	if err != nil {
		t.Fatal(err)
	}
	if opt.Window.Kind != "before" || opt.Window.N != 2 || opt.Flow != FlowAtHit || opt.At != 150*time.Millisecond ||
		opt.Lo != time.Millisecond || opt.Hi != 50*time.Millisecond || opt.Res != time.Millisecond || opt.Reductions.String() != "SCI" || opt.MaxBranches != 6 {
		t.Fatalf("options %+v", opt)
	}
	// NewSymWindow is Options' inverse.
	if back := NewSymWindow(&opt, time.Duration(s.SymWindow.WatchdogNS)); !reflect.DeepEqual(back, s.SymWindow) {
		t.Fatalf("NewSymWindow(Options()) = %+v, want %+v", back, s.SymWindow)
	}
}

// Bad symbolic_window fields are refused naming the field.
func TestMalformedSymWindow(t *testing.T) {
	one := 1
	neg := -1
	for _, tc := range []struct {
		name string
		edit func(s *Seed)
		want string
	}{
		{"bad window", func(s *Seed) { s.SymWindow.Window = "first 2" }, "symbolic_window.window"},
		{"no moment", func(s *Seed) { s.SymWindow.AtNS = 0 }, "symbolic_window.at_ns"},
		{"negative flow", func(s *Seed) { s.SymWindow.Flow = &neg }, "symbolic_window.flow"},
		{"flow out of range", func(s *Seed) { s.SymWindow.Flow = &one }, "symbolic_window.flow"},
		{"flow at hit of a data window", func(s *Seed) { s.SymWindow.Window = "data 3..4" }, "symbolic_window.flow"},
		{"NaN lo", func(s *Seed) { s.SymWindow.LoMS = math.NaN() }, "symbolic_window.lo_ms"},
		{"hi below lo", func(s *Seed) { s.SymWindow.HiMS = 0.5 }, "symbolic_window.hi_ms"},
		{"zero resolution", func(s *Seed) { s.SymWindow.ResMS = 0 }, "symbolic_window.res_ms"},
		{"off the resolution", func(s *Seed) { s.SymWindow.ResMS = 3 }, "symbolic_window.res_ms"},
		{"no branches", func(s *Seed) { s.SymWindow.MaxBranches = 0 }, "symbolic_window.max_branches"},
		{"bad reductions", func(s *Seed) { s.SymWindow.Reductions = "XYZ" }, "symbolic_window.reductions"},
		{"state hashing", func(s *Seed) { s.SymWindow.Reductions = "SH" }, "symbolic_window.reductions"},
		{"negative watchdog", func(s *Seed) { s.SymWindow.WatchdogNS = -1 }, "symbolic_window.watchdog_ns"},
		{"not native", func(s *Seed) { s.Subject = "ns3" }, "symbolic_window"},
		{"pinned too", func(s *Seed) {
			s.Pinned = &PinnedDelays{Flow: 0, Kind: "data", From: 1, DelaysMS: []float64{1}}
		}, "symbolic_window"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := hangSeed()
			tc.edit(s)
			if math.IsNaN(s.SymWindow.LoMS) {
				// JSON has no NaN: check the value directly.
				if err := s.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error %v, want %q", err, tc.want)
				}
				return
			}
			p := filepath.Join(t.TempDir(), "s.json")
			if err := s.Write(p); err != nil {
				t.Fatal(err)
			}
			_, err := ReadSeed(p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
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

// Clone is equal to the seed and shares none of its slices.
func TestSeedClone(t *testing.T) {
	s := hangSeed()
	c, err := s.Clone()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c, s) {
		t.Fatalf("clone %+v, want %+v", c, s)
	}
	c.Schedule[0].Env.BW++
	c.CCAI[0] = "reno"
	c.SymWindow.MaxBranches++
	if s.Schedule[0].Env.BW == c.Schedule[0].Env.BW || s.CCAI[0] != "cubic" || s.SymWindow.MaxBranches != 6 {
		t.Fatal("the clone shares memory with the seed")
	}
}

// TestSeedSubjects: a seed of every subject validates (a quic campaign's
// findings replay and confirm), and an unknown subject is refused naming
// them.
func TestSeedSubjects(t *testing.T) {
	for _, subj := range netenv.SubjectNames() {
		s := testSeed(1)
		s.Subject = subj
		if err := s.Validate(); err != nil {
			t.Errorf("subject %s: %v", subj, err)
		}
	}
	s := testSeed(1)
	s.Subject = "bogus"
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "linux or quic") {
		t.Errorf("subject bogus: %v, want an error listing the subjects", err)
	}
}

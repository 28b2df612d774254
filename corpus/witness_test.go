package corpus

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/netenv/symbolic"
)

// TestWitnessSeedsReplay explores small windows, writes the witnesses as
// seeds and replays every one from its file: each must reproduce its
// branch's outcome and trace hash, and a seed whose delays are moved into
// another class must not.
func TestWitnessSeedsReplay(t *testing.T) {
	ctx := context.Background()
	for _, sc := range []*symbolic.Scenario{
		symbolic.UDP4(2, time.Millisecond, 64*time.Millisecond),
		symbolic.TCPBulk(3, 16*time.Millisecond),
	} {
		t.Run(sc.Name, func(t *testing.T) {
			rep, err := symbolic.Explore(ctx, sc, symbolic.Options{Reductions: symbolic.Reductions{S: true, Ce: true, Cc: true, Coc: true, I: true}})
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			paths, err := WriteWitnessSeeds(ctx, sc, rep, dir, true)
			if err != nil {
				t.Fatal(err)
			}
			if len(paths) != rep.Branches {
				t.Fatalf("%d seeds for %d branches (every branch asked for)", len(paths), rep.Branches)
			}
			outcomes := map[string][]float64{}
			for _, p := range paths {
				for _, ext := range []string{".csv", ".png"} {
					if _, err := os.Stat(strings.TrimSuffix(p, ".json") + ext); err != nil {
						t.Errorf("artifact: %v", err)
					}
				}
				s, err := ReadSeed(p)
				if err != nil {
					t.Fatal(err)
				}
				res, err := Replay(ctx, s, nil)
				if err != nil {
					t.Fatal(err)
				}
				if !res.Reproduced {
					t.Errorf("%s: not reproduced: %v", p, res.Diff)
				}
				outcomes[s.Witness.Outcome] = s.Witness.DelaysMS
			}
			if len(outcomes) != len(rep.Outcomes) {
				t.Errorf("seeds cover %d outcomes, the exploration found %d", len(outcomes), len(rep.Outcomes))
			}
			if len(outcomes) < 2 {
				return
			}
			// Move the first seed's delays to another outcome's witness.
			s, err := ReadSeed(paths[0])
			if err != nil {
				t.Fatal(err)
			}
			for o, d := range outcomes {
				if o != s.Witness.Outcome {
					s.Witness.DelaysMS = d
					break
				}
			}
			res, err := Replay(ctx, s, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Reproduced || len(res.Diff) == 0 {
				t.Errorf("delays of another class reproduced the seed's outcome %q", s.Witness.Outcome)
			}
		})
	}
}

func TestWitnessSeedValidation(t *testing.T) {
	ctx := context.Background()
	sc := symbolic.UDP4(1, time.Millisecond, 8*time.Millisecond)
	rep, err := symbolic.Explore(ctx, sc, symbolic.Options{})
	if err != nil {
		t.Fatal(err)
	}
	good, err := WitnessSeed(ctx, sc, rep, rep.Witnesses(false)[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		change func(s *Seed)
		want   string
	}{
		{"delay out of range", func(s *Seed) { s.Witness.DelaysMS = []float64{9} }, "witness.delays_ms"},
		{"too many delays", func(s *Seed) { s.Witness.DelaysMS = []float64{1, 2} }, "witness.delays_ms"},
		{"unknown scenario key", func(s *Seed) { s.Witness.Scenario = json.RawMessage(`{"nmae": "x"}`) }, "witness.scenario"},
		{"bad scenario", func(s *Seed) {
			s.Witness.Scenario = json.RawMessage(`{"end_s": 1, "window": {"last": 1, "lo_ms": 1, "hi_ms": 2}}`)
		}, "witness.scenario"},
		{"ns3 subject", func(s *Seed) { s.Subject = "ns3" }, "subject"},
		{"no outcome", func(s *Seed) { s.Witness.Outcome = "" }, "witness.outcome"},
	} {
		b, _ := json.Marshal(good)
		var s Seed
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		tc.change(&s)
		path := filepath.Join(t.TempDir(), "w.json")
		if err := s.Write(path); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadSeed(path); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %s", tc.name, err, tc.want)
		}
	}
}

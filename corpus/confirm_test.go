package corpus

import (
	"context"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

// ownVarSubject is a subject with one variable of its own ("lost", as the
// quic subject's) that emits one record per entry of lost, 10 ms apart.
type ownVarSubject struct{ lost []float64 }

func (s ownVarSubject) Name() string { return "own-var" }

func (s ownVarSubject) Capabilities() netenv.Capabilities {
	return netenv.Capabilities{Name: "own-var", CCAs: []string{"reno"},
		Vars: func(string) []ccai.VarDesc { return []ccai.VarDesc{{Name: "lost", Doc: "packets lost so far"}} }}
}

func (s ownVarSubject) Run(_ context.Context, _ netenv.Config, obs observe.Observer) (netenv.Result, error) {
	for i, l := range s.lost {
		r := observe.Record{Time: time.Duration(i+1) * 10 * time.Millisecond, Cwnd: 10, SRTT: 20 * time.Millisecond, Vars: []float64{l}}
		obs.Observe(&r)
	}
	return netenv.Result{}, nil
}

// TestFirstHitSubjectVars: confirm's run (FirstHit) evaluates a condition
// on the subject's own variables (before, it compiled conditions on the
// native schema, and "lost" was an unknown name).
func TestFirstHitSubjectVars(t *testing.T) {
	cfg := netenv.Config{Schedule: netenv.Constant(netenv.DefaultEnv()), Flows: []netenv.Flow{{CCA: "reno", Bytes: 1}}}
	seed := &Seed{CCAI: []string{"reno"}}
	spec := []ConditionSpec{{Name: "loses", When: "lost > prev.lost"}}
	for _, tc := range []struct {
		name string
		lost []float64
		held bool
		at   time.Duration
	}{
		{"third record", []float64{0, 0, 2, 2}, true, 30 * time.Millisecond},
		{"never", []float64{1, 1, 1}, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at, held, _, err := FirstHit(context.Background(), ownVarSubject{tc.lost}, seed, cfg, spec, nil)
			if err != nil {
				t.Fatal(err)
			}
			if held != tc.held || (held && at != tc.at) {
				t.Fatalf("held %v at %v, want %v at %v", held, at, tc.held, tc.at)
			}
		})
	}
}

package netenv_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/tcp"
)

// Scenario tests for the CCAIs of package ccai on the native simulator.

// csRecorder keeps a copy of every state record of flow 0.
type csRecorder struct{ recs []tcp.StateRecord }

func (r *csRecorder) Observe(rec *tcp.StateRecord) {
	c := *rec
	c.Vars = append([]float64(nil), rec.Vars...)
	r.recs = append(r.recs, c)
}

func csRun(t testing.TB, cfg netenv.Config, obs tcp.Observer) netenv.Result {
	t.Helper()
	res, err := netenv.Run(context.Background(), cfg, obs)
	if err != nil {
		t.Fatalf("%s: %v", cfg.Flows[0].CCA, err)
	}
	return res
}

func csConfig(cca string, sched netenv.Schedule, bytes uint64, sack bool, p ccai.Profile, seed uint64) netenv.Config {
	return netenv.Config{Seed: seed, Schedule: sched, Flows: []netenv.Flow{{CCA: cca, Bytes: bytes}}, SACK: sack, Profile: p}
}

// varIndex is the position of a CCAI variable in StateRecord.Vars.
func varIndex(t testing.TB, cca, name string) int {
	a, err := ccai.New(cca)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range ccai.VarsOf(a) {
		if v.Name == name {
			return i
		}
	}
	t.Fatalf("%s exposes no variable %q", cca, name)
	return -1
}

func csProfiles() []ccai.Profile { return []ccai.Profile{ccai.ProfileLinux, ccai.ProfileLinux310} }

// TestCCAIsComplete: every registered CCAI finishes the default scenario
// (10 Mbit/s, 20 ms, loss 1e-4, 100-packet buffer) and a lossy long-delay
// one (2% loss, 400 ms one-way delay) under both profiles, without hitting
// a simulation cap.
func TestCCAIsComplete(t *testing.T) {
	lossy := netenv.DefaultEnv()
	lossy.Loss, lossy.Delay = 0.02, 400
	scenarios := []struct {
		name  string
		env   netenv.Env
		bytes uint64
		sack  bool
	}{
		{"default-3MB", netenv.DefaultEnv(), 3_000_000, true},
		{"default-3MB-nosack", netenv.DefaultEnv(), 3_000_000, false},
		{"lossy-400ms-500kB", lossy, 500_000, true},
	}
	for _, cca := range ccai.Names() {
		for _, sc := range scenarios {
			for _, p := range csProfiles() {
				cfg := csConfig(cca, netenv.Constant(sc.env), sc.bytes, sc.sack, p, 11)
				res := csRun(t, cfg, nil)
				f := res.Flows[0]
				if res.Capped || !f.Done || f.DeliveredBytes != sc.bytes {
					t.Errorf("%s %s %v: capped=%v (%s) done=%v delivered=%d", cca, sc.name, p, res.Capped, res.CapReason, f.Done, f.DeliveredBytes)
				}
			}
		}
	}
	// The full 15 MB default for a few.
	for _, cca := range []string{"reno", "cubic", "bbr", "vegas"} {
		res := csRun(t, csConfig(cca, netenv.Constant(netenv.DefaultEnv()), netenv.DefaultBytes, true, ccai.ProfileLinux, 1), nil)
		if f := res.Flows[0]; res.Capped || !f.Done {
			t.Errorf("%s default 15 MB: capped=%v done=%v", cca, res.Capped, f.Done)
		}
	}
}

// csExplore prints, for a list of environments and seeds, how often a
// condition holds. It only runs with ACTFUZZ_EXPLORE set; it is how the
// environments of the bug tests below were found.
func TestCSExplore(t *testing.T) {
	if os.Getenv("ACTFUZZ_EXPLORE") == "" {
		t.Skip("set ACTFUZZ_EXPLORE to search for bug environments")
	}
	type cond struct {
		name string
		hit  func(prev, cur *tcp.StateRecord) bool
	}
	undoUp := cond{"undo raises cwnd above prior_cwnd", func(prev, cur *tcp.StateRecord) bool {
		return prev.CAState == ccai.StateRecovery && cur.CAState != ccai.StateRecovery && cur.Cwnd > cur.PriorCwnd
	}}
	rise4 := cond{"undo raises cwnd < 4 to 4", func(prev, cur *tcp.StateRecord) bool {
		return prev.CAState == ccai.StateRecovery && cur.CAState != ccai.StateRecovery && cur.PriorCwnd < 4 && cur.Cwnd >= 4
	}}
	huge := cond{"cwnd > 1e7", func(prev, cur *tcp.StateRecord) bool { return cur.Cwnd > 1e7 }}
	for _, cca := range []string{"reno", "htcp", "veno", "highspeed"} {
		for _, c := range []cond{undoUp, rise4, huge} {
			for _, sack := range []bool{true, false} {
				for _, env := range []netenv.Env{
					{Loss: 0.001, BW: 10, Delay: 20, QShape: 2, QScale: 2, App: 10000, Buffer: 100},
					{Loss: 0.05, BW: 10, Delay: 20, QShape: 2, QScale: 5, App: 10000, Buffer: 100},
					{Loss: 0.1, BW: 1, Delay: 50, QShape: 1, QScale: 20, App: 10000, Buffer: 20},
					{Loss: 0.0, BW: 10, Delay: 20, QShape: 1, QScale: 10, App: 10000, Buffer: 100},
				} {
					for _, p := range csProfiles() {
						hits, undos := 0, uint64(0)
						first := ""
						for seed := uint64(1); seed <= 5; seed++ {
							rec := &csRecorder{}
							res := csRun(t, csConfig(cca, netenv.Constant(env), 1_000_000, sack, p, seed), rec)
							undos += res.Flows[0].Undos
							for i := 1; i < len(rec.recs); i++ {
								if c.hit(&rec.recs[i-1], &rec.recs[i]) {
									if hits == 0 {
										r := rec.recs[i]
										first = fmt.Sprintf("seed %d t=%v cwnd %d prior %d ssthresh %d", seed, r.Time, r.Cwnd, r.PriorCwnd, r.SSThresh)
									}
									hits++
								}
							}
						}
						if hits > 0 || c.name == huge.name {
							t.Logf("%-9s %-35s sack=%-5v %v loss=%g q=%g/%g: %d hits, %d undos %s", cca, c.name, sack, p, env.Loss, env.QShape, env.QScale, hits, undos, first)
						}
					}
				}
			}
		}
	}
}

var _ = math.Abs
var _ = time.Second

func TestCSDump(t *testing.T) {
	if os.Getenv("ACTFUZZ_DUMP") == "" {
		t.Skip()
	}
	env := netenv.Env{Loss: 0.001, BW: 10, Delay: 20, QShape: 2, QScale: 2, App: 10000, Buffer: 100}
	rec := &csRecorder{}
	csRun(t, csConfig("veno", netenv.Constant(env), 1_000_000, false, ccai.ProfileLinux310, 2), rec)
	for i, r := range rec.recs {
		if r.Time > 260*time.Millisecond {
			break
		}
		if r.Time > 150*time.Millisecond && (r.Reason != tcp.ReasonAck || i > 0 && (rec.recs[i-1].Cwnd != r.Cwnd || rec.recs[i-1].CAState != r.CAState)) {
			t.Logf("%v %v %v->%v cwnd %d ssthresh %d prior %d inflight %d", r.Time, r.Reason, r.PrevCAState, r.CAState, r.Cwnd, r.SSThresh, r.PriorCwnd, r.InFlight)
		}
	}
}

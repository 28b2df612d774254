package netenv_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/sim"
	"github.com/actfuzz/actfuzz/netenv/snapshot"
)

// snapshotEnvs are environments that exercise every piece of state a link
// keeps: random loss and queuing delays (PRNG streams), RED and CoDel, the
// policer, ACK aggregation, a trace-driven bottleneck and ECN marking.
func snapshotEnvs() map[string]netenv.Schedule {
	base := netenv.DefaultEnv()
	base.Loss, base.QShape, base.QScale, base.Buffer = 0.002, 2, 1, 60
	red, codel, shaped, traced := base, base, base, base
	red.AQM, red.ECN = netenv.AQMRED, netenv.ECNOn
	codel.AQM = netenv.AQMCoDel
	shaped.PolicerRate, shaped.PolicerBurst, shaped.AckAgg, shaped.AckAggMax = 8, 30, 2, 8
	traced.Trace, traced.TraceScale = 2, 1 // lte
	switched := netenv.Schedule{{Env: base, Until: 700 * time.Millisecond}, {Env: red}}
	return map[string]netenv.Schedule{
		"random": netenv.Constant(base), "red-ecn": netenv.Constant(red), "codel": netenv.Constant(codel),
		"shaped": netenv.Constant(shaped), "traced": netenv.Constant(traced), "switched": switched,
	}
}

// TestSessionSnapshot pauses a run halfway, saves it, and finishes it three
// times from the same snapshot: every finish must give the uninterrupted
// run's trace hash and counters, for every CCAI, topology and link model.
// A piece of state the snapshot missed makes the second or third finish
// start from where the previous one ended.
func TestSessionSnapshot(t *testing.T) {
	ctx := context.Background()
	envs := snapshotEnvs()
	topos := []string{netenv.TopoSingleLink, netenv.TopoDumbbell, netenv.TopoParkingLot}
	n := 0
	for _, cca := range ccai.Names() {
		for _, topo := range topos {
			for name, sched := range envs {
				// Every CCAI on the plain link, every topology and
				// link model with a few of them: enough to cover
				// every combination of state once, in seconds.
				if n++; name != "random" && topo != netenv.TopoSingleLink && n%5 != 0 {
					continue
				}
				flows := []netenv.Flow{{CCA: cca, Bytes: 400_000}}
				if topo != netenv.TopoSingleLink {
					flows = append(flows, netenv.Flow{CCA: "cubic", Bytes: 300_000})
				}
				cfg := netenv.Config{Seed: 7, Schedule: sched, Flows: flows, Topology: topo, SACK: true, HashTrace: true,
					Limits: sim.Limits{MaxTime: 30 * time.Second}, Handshake: n%2 == 0}
				t.Run(fmt.Sprintf("%s/%s/%s", cca, topo, name), func(t *testing.T) {
					want, err := netenv.Run(ctx, cfg, nil)
					if err != nil {
						t.Fatal(err)
					}
					s, err := netenv.NewSession(cfg, nil)
					if err != nil {
						t.Fatal(err)
					}
					want.Wall = 0
					finishThrice(t, s, want.Events, func() (any, error) {
						got, err := s.Finish(ctx)
						got.Wall = 0
						return got, err
					}, want)
				})
			}
		}
	}
}

// TestTopoSessionSnapshot does the same for a UDP topology run.
func TestTopoSessionSnapshot(t *testing.T) {
	ctx := context.Background()
	cfg := netenv.TopoConfig{Topology: netenv.UDP4(), Limits: sim.Limits{MaxTime: 11 * time.Second}, HashTrace: true}
	want, err := netenv.RunTopology(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := netenv.NewTopoSession(cfg)
	if err != nil {
		t.Fatal(err)
	}
	finishThrice(t, s, want.Events, func() (any, error) { return s.Finish(ctx) }, want)
}

// pausable is a Session or a TopoSession.
type pausable interface {
	RunTo(ctx context.Context, events uint64) error
	Events() uint64
}

// finishThrice pauses s halfway through a run of total events, takes a
// snapshot, and finishes the run three times from it: each must give want.
func finishThrice(t *testing.T, s pausable, total uint64, finish func() (any, error), want any) {
	t.Helper()
	if err := s.RunTo(context.Background(), total/2); err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.Take(s)
	if err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 3; round++ {
		if round > 0 {
			snap.Restore()
		}
		if s.Events() != total/2 {
			t.Fatalf("at %d events from the snapshot, want %d", s.Events(), total/2)
		}
		got, err := finish()
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("finish %d from the snapshot:\n got %+v\nwant %+v", round, got, want)
		}
	}
}

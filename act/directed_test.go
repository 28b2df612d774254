package act

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/actfuzz/actfuzz/netenv"
)

// The directed step moves against the distance's gradient in P: with a
// distance that falls as bandwidth rises (and ignores the rest), its
// environments have more bandwidth than the best run's far more often than
// less; with the gradient reversed, less. A third of them are concatenations
// at the best state's time, which keep the best run's schedule before it.
func TestDirectedStepDescends(t *testing.T) {
	for _, tc := range []struct {
		name string
		dist func(bw float64) float64 // distance of a run at bandwidth bw (Mbit/s)
		up   bool                     // the step should raise bandwidth
	}{
		{"falls with bandwidth", func(bw float64) float64 { return 1 - bw/50 }, true},
		{"rises with bandwidth", func(bw float64) float64 { return bw / 50 }, false},
	} {
		c := smallCampaign(t)
		cl, err := openConfigLog("", 0)
		if err != nil {
			t.Fatal(err)
		}
		defer cl.close()
		src := rand.NewPCG(3, 4)
		s := &selector{c: c, method: "act", src: src, rng: rand.New(src), log: cl, pc: make([]float64, len(c.Params)),
			dir: newDirectedState(len(c.Conditions))}
		bwi := netenv.ParamIndex("bw")
		// 200 runs of random environments; their distances follow tc.dist.
		for i := range 200 {
			g := Config{Seed: uint64(i), Schedule: netenv.Constant(c.uniformEnv(s.rng)), Step: StepRandom}
			if err := cl.append(g); err != nil {
				t.Fatal(err)
			}
			d := tc.dist(g.Schedule[0].Env.Get(bwi))
			s.dir.add(c, i, g, []float64{d}, []int64{int64(1e9)})
		}
		up, down, concat := 0, 0, 0
		for range 400 {
			g, ok := s.directed()
			if !ok {
				t.Fatal("no directed configuration")
			}
			from := s.dir.Best[0]
			// The start is one of the dirPick best runs: compare with the
			// worst of them for "up" and the best for "down".
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, e := range from[:dirPick] {
				sg, _ := cl.get(e.Config)
				v := sg.Schedule[0].Env.Get(bwi)
				lo, hi = min(lo, v), max(hi, v)
			}
			last := g.Schedule[len(g.Schedule)-1].Env.Get(bwi)
			if len(g.Schedule) > 1 {
				concat++
			}
			switch {
			case last > hi:
				up++
			case last < lo:
				down++
			}
		}
		t.Logf("%s: %d above the best runs' bandwidth, %d below, %d concatenations of 400", tc.name, up, down, concat)
		if tc.up && up < 4*down || !tc.up && down < 4*up {
			t.Errorf("%s: %d moves up, %d down", tc.name, up, down)
		}
		if concat < 80 || concat > 200 {
			t.Errorf("%s: %d concatenations of 400, want about a third", tc.name, concat)
		}
	}
}

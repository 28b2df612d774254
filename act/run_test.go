package act

import (
	"context"
	"maps"
	"slices"
	"testing"
)

// campaignWith is the small test campaign (Reno-like flows over 0.5–50 Mbit/s,
// 1–200 ms, the undo-increase condition) with the CCAI cca.
func campaignWith(t testing.TB, cca string) *Campaign {
	t.Helper()
	c, err := ParseCampaign("c.yaml", []byte(`
ccai: [`+cca+`]
profile: linux-3.10
bytes: 300000
params:
  bw: {min: 0.5, max: 50, step: 0.1}
  delay: {min: 1, max: 200, step: 1}
conditions:
  - {name: undo-increase, when: 'prev.ca_state == "recovery" && ca_state == "open" && cwnd > prior_cwnd'}
window: 64
`))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func smallCampaign(t testing.TB) *Campaign {
	t.Helper()
	return campaignWith(t, "reno")
}

// Results do not depend on the worker count, under either schedule (the
// adaptive one's bandit is fed in configuration order at merge time).
func TestRunIndependentOfWorkers(t *testing.T) {
	for _, sched := range []string{ScheduleAdaptive, SchedulePaper} {
		c := smallCampaign(t)
		c.Schedule = sched
		var regions [][]uint64
		var steps []map[Step]int
		for _, w := range []int{1, 2, 3} {
			rep, err := Run(context.Background(), c, Options{Budget: 384, Workers: w})
			if err != nil {
				t.Fatal(err)
			}
			var r []uint64
			for _, k := range c.Space.Ks() {
				r = append(r, rep.Store.VisitedRegions(k))
			}
			regions = append(regions, r)
			steps = append(steps, rep.StepSims)
		}
		for i := 1; i < len(regions); i++ {
			if !slices.Equal(regions[0], regions[i]) || !maps.Equal(steps[0], steps[i]) {
				t.Fatalf("%s: regions or steps differ with worker count: %v %v vs %v %v", sched, regions[0], steps[0], regions[i], steps[i])
			}
		}
		t.Logf("%s: steps %v", sched, steps[0])
	}
}

// All three steps run and ACT reaches at least as many large regions as RAN
// on the same budget.
func TestACTStepsAndBaselines(t *testing.T) {
	c := smallCampaign(t)
	act, err := Run(context.Background(), c, Options{Budget: 640})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []Step{StepRandom, StepEstimation, StepConcatenation} {
		if act.StepSims[s] == 0 {
			t.Errorf("step %v never ran: %v", s, act.StepSims)
		}
	}
	ran, err := Run(context.Background(), c, Options{Budget: 640, Method: "ran"})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("k=128: act %d, ran %d; k=16: act %d, ran %d", act.Store.VisitedRegions(128), ran.Store.VisitedRegions(128), act.Store.VisitedRegions(16), ran.Store.VisitedRegions(16))
	if act.Store.VisitedRegions(128) < ran.Store.VisitedRegions(128) {
		t.Errorf("ACT visited fewer k=128 regions than RAN")
	}
}

package act

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"
)

// A selection reads its pools at once (nextBatch: every pick first, then
// every pool, then every pick finished): its configurations are those of
// the same picks finished one by one, at every split of the selection,
// in steps 2 and 3, whose picks draw visits from pools.
func TestSelectionAtOnce(t *testing.T) {
	c := smallCampaign(t)
	dir := t.TempDir()
	rep, err := Run(context.Background(), c, Options{Budget: 192, Workers: 1, Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "coverage", "configs-act.log")
	for _, step := range []Step{StepEstimation, StepConcatenation} {
		selection := func(split []int) []Config {
			t.Helper()
			l, err := openConfigLog(logPath, rep.Sims)
			if err != nil {
				t.Fatal(err)
			}
			defer l.close()
			src := newSource(c.Seed+1, "act")
			s := &selector{c: c, method: "act", src: src, rng: rand.New(src), store: rep.Store, log: l,
				prof: newProfile(c.dimP(), len(c.Space.Vars)), step: step, pc: make([]float64, c.dimP())}
			var out []Config
			for _, n := range split {
				out = s.nextBatch(out, n)
			}
			if s.err != nil {
				t.Fatal(s.err)
			}
			return out
		}
		whole := selection([]int{96})
		drawn := 0
		for _, g := range whole {
			if g.Step == step {
				drawn++
			}
		}
		// Most picks must have drawn from pools, or the test shows
		// nothing.
		if drawn < len(whole)/2 {
			t.Fatalf("%v: %d of %d configurations of the step", step, drawn, len(whole))
		}
		for _, split := range [][]int{{1, 1, 1, 93}, {40, 56}, {95, 1}} {
			if got := selection(split); !reflect.DeepEqual(got, whole) {
				t.Fatalf("%v: the selection split %v differs from the selection at once", step, split)
			}
		}
	}
}

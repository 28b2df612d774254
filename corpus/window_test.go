package corpus

import (
	"testing"

	"github.com/actfuzz/actfuzz/ccai"
)

// TestHeld: held.X is the length of the run of X's previous value, read
// on the record that ends it, and the run so far on any other.
func TestHeld(t *testing.T) {
	schema := SchemaFor("reno")
	conds, err := Compile([]ConditionSpec{
		{Name: "short-recovery", When: `prev.ca_state == "recovery" && ca_state != "recovery" && held.ca_state < 0.2`},
		{Name: "long-open", When: `prev.ca_state == "open" && ca_state == "open" && held.ca_state >= 0.3`},
	}, schema)
	if err != nil {
		t.Fatal(err)
	}
	e := NewEvaluator(schema, conds)
	ti, ci := schema.Index("time"), schema.Index("ca_state")
	open, recovery := float64(ccai.StateOpen), float64(ccai.StateRecovery)
	var prev []float64
	for _, tc := range []struct {
		time, state float64
		want        []int
	}{
		{0, open, nil},
		{0.1, open, nil},
		{0.3, open, []int{1}},  // open has held 0.3 s
		{0.35, recovery, nil},  // the open run that ended lasted 0.35 s, but this is recovery
		{0.5, recovery, nil},   // recovery so far: 0.15 s
		{0.52, open, []int{0}}, // recovery lasted 0.17 s < 0.2
		{0.6, recovery, nil},   // open held 0.08 s
		{0.9, open, nil},       // this recovery lasted 0.3 s
		{1.3, open, []int{1}},  // open since 0.9
	} {
		cur := make([]float64, len(schema))
		cur[ti], cur[ci] = tc.time, tc.state
		if prev == nil {
			prev = cur
		}
		hits, err := e.Eval(cur, prev, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !equalInts(hits, tc.want) {
			t.Errorf("t=%v state %v: hits %v, want %v", tc.time, tc.state, hits, tc.want)
		}
		prev = cur
	}
	// A new simulation starts every run afresh.
	e.Reset()
	cur := make([]float64, len(schema))
	cur[ti], cur[ci] = 5, open
	if hits, _ := e.Eval(cur, cur, nil); len(hits) != 0 {
		t.Errorf("first record after Reset: hits %v, want none (held is 0)", hits)
	}
}

package corpus

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// A distance is 0 exactly when its condition holds (checked against the
// evaluator on random states), and it shrinks as the state nears the
// condition; expressions without a useful distance say so.
func TestDistance(t *testing.T) {
	schema := SchemaFor("cubic")
	idx := func(n string) int { return schema.Index(n) }
	for _, tc := range []struct {
		when   string
		err    string // non-empty: no distance, error containing this
		closer [2]map[string]float64
	}{
		{when: "cwnd > 1e7", closer: [2]map[string]float64{{"cwnd": 10}, {"cwnd": 1e6}}},
		{when: "cwnd > ssthresh && target > 2*cwnd", closer: [2]map[string]float64{{"cwnd": 100, "ssthresh": 200, "target": 10}, {"cwnd": 100, "ssthresh": 99, "target": 150}}},
		{when: `prev.ca_state == "recovery" && ca_state == "open" && cwnd >= prior_cwnd`},
		{when: `prev.ca_state != ca_state || !(cwnd <= 10)`},
		{when: `not (cwnd < 5 or ssthresh == 3)`},
		{when: "cwnd - prev.cwnd >= 8 && -srtt < -5"},
		{when: "cwnd * 2 == 6 && in_flight / cwnd < 0.5"},
		{when: "true && cwnd != 4"},
		{when: "max(cwnd, 3) > 4", err: "no branch distance"},
		{when: `ca_state > "open"`, err: "categorical"},
		{when: "cwnd > 1 ? true : false", err: "no branch distance"},
	} {
		spec := ConditionSpec{Name: "c", When: tc.when}
		d, err := CompileDistance(spec, schema)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.when, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.when, err)
			continue
		}
		conds, err := Compile([]ConditionSpec{spec}, schema)
		if err != nil {
			t.Fatal(err)
		}
		ev := NewEvaluator(schema, conds)
		rng := rand.New(rand.NewPCG(1, 2))
		held := 0
		for range 5000 {
			cur, prev := make([]float64, len(schema)), make([]float64, len(schema))
			for i, v := range schema {
				for _, s := range [][]float64{cur, prev} {
					if len(v.Values) > 0 {
						s[i] = float64(rng.IntN(len(v.Values)))
					} else {
						s[i] = float64(rng.IntN(12))
					}
				}
			}
			ev.Reset()
			hits, err := ev.Eval(cur, prev, nil)
			if err != nil {
				t.Fatal(err)
			}
			dist := d.Eval(cur, prev)
			if (dist == 0) != (len(hits) > 0) || dist < 0 {
				t.Fatalf("%s: distance %v but holds=%v at cur %v prev %v", tc.when, dist, len(hits) > 0, cur, prev)
			}
			if dist == 0 {
				held++
			}
		}
		if held == 0 && tc.closer[0] == nil {
			t.Errorf("%s: never held on random states: the check tests nothing", tc.when)
		}
		if tc.closer[0] != nil {
			var ds [2]float64
			for k, m := range tc.closer {
				cur := make([]float64, len(schema))
				for n, v := range m {
					cur[idx(n)] = v
				}
				ds[k] = d.Eval(cur, cur)
			}
			if !(ds[1] < ds[0]) || ds[1] == 0 {
				t.Errorf("%s: distance %v for %v, not below %v for %v", tc.when, ds[1], tc.closer[1], ds[0], tc.closer[0])
			}
		}
	}
}

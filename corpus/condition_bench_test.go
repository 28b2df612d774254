package corpus

import "testing"

// BenchmarkEvaluator is the per-record cost of conditions on the common
// path: three conditions over a stream where cwnd changes every record
// (so the one that reads it re-runs) and the others' inputs mostly do not
// (so their cache answers).
func BenchmarkEvaluator(b *testing.B) {
	schema := SchemaFor("cubic")
	conds, err := Compile([]ConditionSpec{
		{Name: "huge", When: "cwnd > 1e7"},
		{Name: "aggressive", When: "cwnd > ssthresh && target > 2*cwnd"},
		{Name: "undo", When: `prev.ca_state == "recovery" && ca_state == "open" && cwnd > prior_cwnd`},
	}, schema)
	if err != nil {
		b.Fatal(err)
	}
	e := NewEvaluator(schema, conds)
	cur, prev := make([]float64, len(schema)), make([]float64, len(schema))
	ci, si := schema.Index("cwnd"), schema.Index("ssthresh")
	cur[si] = 1 << 30
	var hits []int
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		copy(prev, cur)
		cur[ci] = float64(10 + i%100)
		hits, _ = e.Eval(cur, prev, hits[:0])
	}
}

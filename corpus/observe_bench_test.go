package corpus

import (
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

// BenchmarkObserve is the per-ACK observation of a CUBIC flow's record
// into its native schema (Schema.Observe, the identity fast path).
func BenchmarkObserve(b *testing.B) {
	s := SchemaFor("cubic")
	dst := make([]float64, len(s))
	r := &observe.Record{Time: time.Second, Cwnd: 10, SSThresh: 7, SRTT: 20 * time.Millisecond, CAState: ccai.StateOpen,
		Vars: make([]float64, len(s)-len(BaseVars)-len(DerivedVars))}
	for b.Loop() {
		s.Observe(r, dst)
	}
}

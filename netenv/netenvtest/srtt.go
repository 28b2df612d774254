package netenvtest

import (
	"time"

	"github.com/actfuzz/actfuzz/netenv/observe"
)

// MeanSRTT is the mean smoothed RTT (ms) of the records at or after from
// that have one, 0 when none has: how much queue a subject's bottleneck
// held (the queue-discipline tests of every subject).
func MeanSRTT(recs []observe.Record, from time.Duration) float64 {
	var sum float64
	n := 0
	for _, r := range recs {
		if r.Time >= from && r.SRTT > 0 {
			sum += float64(r.SRTT) / 1e6
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

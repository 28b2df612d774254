package tcp

import (
	"testing"
	"time"
)

func TestRTTEstimator(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name      string
		samples   []time.Duration
		srtt, rto time.Duration
	}{
		// RFC 6298 §2.2: first sample R: SRTT = R, RTTVAR = R/2, RTO =
		// SRTT + max(4·RTTVAR, MinRTO).
		{"first sample", []time.Duration{100 * ms}, 100 * ms, 100*ms + max(200*ms, MinRTO)},
		{"first small sample floors at MinRTO", []time.Duration{10 * ms}, 10 * ms, 10*ms + MinRTO},
		// §2.3: SRTT ← 7/8·SRTT + 1/8·R'.
		{"second sample", []time.Duration{100 * ms, 180 * ms}, 110 * ms, 110*ms + 4*(50*ms*3/4+80*ms/4)},
		{"no sample", nil, 0, InitialRTO},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r rttEstimator
			for _, s := range tc.samples {
				r.sample(s)
			}
			if r.srtt != tc.srtt || r.rto() != tc.rto {
				t.Fatalf("srtt %v rto %v, want %v %v", r.srtt, r.rto(), tc.srtt, tc.rto)
			}
		})
	}
}

// A sample below srtt moves the deviation 8× less when it would grow it
// (Linux's tcp_rtt_estimator), so a falling RTT does not inflate the RTO.
func TestFallingRTTDampsDeviation(t *testing.T) {
	var up, down rttEstimator
	up.sample(100 * time.Millisecond)
	down.sample(100 * time.Millisecond)
	up.sample(200 * time.Millisecond)
	down.sample(1 * time.Millisecond)
	if dUp, dDown := up.mdev-200*time.Millisecond, down.mdev-200*time.Millisecond; dDown >= dUp/4 {
		t.Fatalf("deviation grew by %v on a fall of 99 ms and %v on a rise of 100 ms", dDown, dUp)
	}
}

func TestRTOCapsAtMax(t *testing.T) {
	var r rttEstimator
	r.sample(200 * time.Second)
	if r.rto() != MaxRTO {
		t.Fatalf("rto %v, want %v", r.rto(), MaxRTO)
	}
}

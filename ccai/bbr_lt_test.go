package ccai

import (
	"testing"
	"time"
)

// TestBBRLongTermModel drives the long-term sampler with intervals of 5
// rounds ending in a 25% loss at a steady delivery rate (a policer): the
// first interval gives a sample, the second one close to it makes BBR use
// their average at pacing gain 1; 48 rounds of PROBE_BW later it probes
// again. A rate that differs by more than 1/8 starts over instead.
func TestBBRLongTermModel(t *testing.T) {
	for _, tc := range []struct {
		name   string
		rates  []uint64 // packets per ms of each interval
		detect bool
	}{
		{"steady policer", []uint64{10, 10}, true},
		{"within 1/8", []uint64{10, 11}, true},
		{"not steady", []uint64{10, 14}, false},
	} {
		b := &BBR{}
		s := fakeSock(ProfileLinux)
		b.Init(s)
		b.mode = BBRProbeBW
		for _, rate := range tc.rates {
			for round := 0; round < 5; round++ {
				b.roundStart = true
				s.Delivered += 10 * rate
				s.DeliveredTime += 10 * time.Millisecond
				losses := uint32(0)
				if round == 4 {
					losses = uint32(10 * rate * 5 / 4) // ≥ 20% of the interval's deliveries
					b.lt.lost += uint64(losses)
				} else if round == 0 && !b.lt.sampling {
					losses = 1 // a loss starts sampling
					b.lt.lost++
				}
				b.ltSampling(s, losses, false)
			}
		}
		if b.lt.useBW != tc.detect {
			t.Fatalf("%s: policer detected %v, want %v (lt_bw %d)", tc.name, b.lt.useBW, tc.detect, b.lt.bw)
		}
		if !tc.detect {
			continue
		}
		b.updateGains()
		if b.pacingGain != bbrUnit || b.bwEst() != b.lt.bw {
			t.Fatalf("%s: pacing gain %d, bw %d (lt %d): want gain 1 at lt_bw", tc.name, b.pacingGain, b.bwEst(), b.lt.bw)
		}
		for range bbrLtBWMaxRTTs {
			b.roundStart = true
			b.ltSampling(s, 0, false)
		}
		if b.lt.useBW {
			t.Fatalf("%s: still using lt_bw after %d rounds", tc.name, bbrLtBWMaxRTTs)
		}
	}
}

package ccai

import (
	"testing"
	"time"
)

// TestLPEarlyCongestion checks TCP-LP's early congestion inference (paper
// §III.B–C): the smoothed one-way delay against d_min + 15%·(d_max − d_min),
// halving outside the inference timeout of 3 RTTs and cutting to 1 inside
// it, no growth inside it.
func TestLPEarlyCongestion(t *testing.T) {
	ms := time.Millisecond
	rtt := 100 * ms // inference timeout 300 ms
	type step struct {
		dt       time.Duration // time since the previous step
		owd      time.Duration
		wantCwnd uint32
		wantThr  bool
		wantInf  bool
		wantSowd float64 // ms
	}
	steps := []step{
		// First sample: d_min = d_max = d_s, so d_s is not below the
		// threshold: an indication, as in Linux. cwnd 40 → 20, then the
		// same ACK's slow start (outside any timeout) makes it 21; the
		// range is re-anchored at [10, 20] ms.
		{0, 10 * ms, 21, false, false, 10},
		// 10 ms later, same delay: below 10 + 1.5 ms; inside the
		// inference timeout, so no growth.
		{10 * ms, 10 * ms, 21, true, true, 10},
		// A 30 ms sample: d_s = 10 + (30−10)/8 = 12.5 ms > 11.5 ms, inside
		// the timeout: cwnd 1.
		{10 * ms, 30 * ms, 1, false, true, 12.5},
		// 400 ms later (timeout over), delay back to 10 ms: d_s = 12.5 −
		// 2.5/8 = 12.1875 ms; range re-anchored at [12.5, 25]: within.
		// Reno grows cwnd 1 → 2 (slow start).
		{400 * ms, 10 * ms, 2, true, false, 12.1875},
		// A 60 ms spike: d_s = 12.1875 + (60−12.1875)/8 = 18.16 ms >
		// 12.5 + 15%·12.5 = 14.375 ms, outside the timeout: halve 2 → 1,
		// and slow start on the same ACK gives 2.
		{10 * ms, 60 * ms, 2, false, false, 18.164},
	}
	l := &LP{}
	s := fakeSock(ProfileLinux)
	l.Init(s)
	s.Cwnd, s.SSThresh = 40, 1000
	s.Now = time.Second
	for i, st := range steps {
		s.Now += st.dt
		s.OneWayDelay = st.owd
		ack(l, s, 1, rtt)
		dst := make([]float64, len(l.Vars()))
		l.ReadVars(s, dst)
		if s.Cwnd != st.wantCwnd || l.withinThr != st.wantThr || l.withinInf != st.wantInf || !near(dst[2], st.wantSowd, 0.001) {
			t.Errorf("step %d: cwnd=%d thr=%v inf=%v sowd=%.4fms, want %d %v %v %.4f",
				i, s.Cwnd, l.withinThr, l.withinInf, dst[2], st.wantCwnd, st.wantThr, st.wantInf, st.wantSowd)
		}
	}
}

// TestLPWithoutOneWayDelay: with no delay samples (timestamps off) LP is
// Reno, as in Linux.
func TestLPWithoutOneWayDelay(t *testing.T) {
	l := &LP{}
	s := fakeSock(ProfileLinux)
	l.Init(s)
	s.Cwnd, s.SSThresh = 10, 5
	for i := 0; i < 10; i++ {
		ack(l, s, 1, 100*time.Millisecond)
	}
	if s.Cwnd != 11 || l.cuts != 0 {
		t.Errorf("cwnd = %d cuts = %d, want Reno's 11 and no cuts", s.Cwnd, l.cuts)
	}
}

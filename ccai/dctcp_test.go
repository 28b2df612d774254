package ccai

import (
	"math"
	"testing"
)

// TestDCTCPAlpha: α follows RFC 8257 §3.3's EWMA with g = 1/16, once per
// window, and the ECN reduction is cwnd·(1 − α/2) (§3.4).
func TestDCTCPAlpha(t *testing.T) {
	for _, tc := range []struct {
		name     string
		fraction float64 // of each window's bytes acked with ECE
		windows  int
		alpha    float64 // expected α after them
	}{
		{"no marks decays from 1", 0, 1, 15.0 / 16},
		{"no marks, many windows", 0, 50, math.Pow(15.0/16, 50)},
		{"all marked stays at 1", 1, 10, 1},
		{"half marked tends to 1/2", 0.5, 200, 0.5},
	} {
		d := &DCTCP{}
		s := fakeSock(ProfileLinux)
		s.Cwnd = 100
		d.Init(s)
		for range tc.windows {
			// One window: 100 packets, the marked ones first.
			marked := int(tc.fraction * 100)
			for i := range 100 {
				s.SndUna += uint64(s.MSS)
				var fl AckFlags
				if i < marked {
					fl = AckECE
				}
				if i == 0 {
					s.SndNxt = s.SndUna + 100*uint64(s.MSS) // the window in flight
				}
				d.InAckEvent(s, fl, s.MSS)
			}
		}
		var v [1]float64
		d.ReadVars(s, v[:])
		// Integer α (1/1024) rounds down at each update.
		if math.Abs(v[0]-tc.alpha) > 0.02 {
			t.Errorf("%s: α = %.4f, want %.4f", tc.name, v[0], tc.alpha)
		}
		want := max(uint32(float64(s.Cwnd)*(1-v[0]/2)), 2)
		if got := d.SSThresh(s); got < want-1 || got > want+1 {
			t.Errorf("%s: ssthresh %d at α %.3f, want about %d", tc.name, got, v[0], want)
		}
	}
}

// TestDCTCPLossHalves: a loss (entering Recovery) halves the window as
// Reno does, whatever α, and undo restores the window before it.
func TestDCTCPLossHalves(t *testing.T) {
	d := &DCTCP{}
	s := fakeSock(ProfileLinux)
	s.Cwnd = 80
	d.Init(s)
	d.alpha = 100 // α ≈ 0.1: an ECN reduction would keep 95%
	s.SSThresh = d.SSThresh(s)
	if s.SSThresh < 75 {
		t.Fatalf("ECN ssthresh %d at α 0.1", s.SSThresh)
	}
	d.SetState(s, StateRecovery)
	if s.SSThresh != 40 {
		t.Fatalf("loss ssthresh %d, want 40", s.SSThresh)
	}
	s.Cwnd = 40
	if got := d.UndoCwnd(s); got != 80 {
		t.Fatalf("undo gives %d, want 80", got)
	}
}

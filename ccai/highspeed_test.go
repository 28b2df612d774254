package ccai

import (
	"math"
	"testing"
)

// RFC 3649 §5 parameters.
const (
	rfcLowWindow     = 38.0
	rfcHighWindow    = 83000.0
	rfcHighP         = 1e-7
	rfcHighDecrease  = 0.1
	rfcLowPInterpol  = 1.5 / (rfcLowWindow * rfcLowWindow)
	rfcResponseConst = 0.078 // p(w) = 0.078/w^1.2 (RFC 3649 §5)
)

func rfcB(w float64) float64 {
	return (rfcHighDecrease-0.5)*(math.Log(w)-math.Log(rfcLowWindow))/(math.Log(rfcHighWindow)-math.Log(rfcLowWindow)) + 0.5
}

// rfcA is a(w) = w²·p(w)·2·b(w)/(2 − b(w)) with the response function
// p(w) = 0.078/w^1.2 that Appendix B uses.
func rfcA(w float64) float64 {
	p := rfcResponseConst / math.Pow(w, 1.2)
	return w * w * p * 2 * rfcB(w) / (2 - rfcB(w))
}

// rfcAInterpolated is a(w) with p(w) interpolated log-linearly between
// (Low_Window, 1.5/Low_Window²) and (High_Window, High_P), RFC 3649 §5.
func rfcAInterpolated(w float64) float64 {
	f := (math.Log(w) - math.Log(rfcLowWindow)) / (math.Log(rfcHighWindow) - math.Log(rfcLowWindow))
	p := math.Exp(f*(math.Log(rfcHighP)-math.Log(rfcLowPInterpol)) + math.Log(rfcLowPInterpol))
	return w * w * p * 2 * rfcB(w) / (2 - rfcB(w))
}

// TestHighSpeedTableMatchesRFC recomputes every row of the table from the
// RFC's formulas: the row for w_i has a(w_i) = i+1 and b(w_i)·256.
func TestHighSpeedTableMatchesRFC(t *testing.T) {
	prev := uint32(0)
	for i, row := range hstcpAIMD {
		if row.cwnd <= prev {
			t.Errorf("row %d: windows not increasing (%d after %d)", i, row.cwnd, prev)
		}
		prev = row.cwnd
		w := float64(row.cwnd)
		if i > 0 {
			if a := rfcA(w); a < float64(i+1)-0.1 || a > float64(i+1)+0.1 {
				t.Errorf("row %d (w=%d): RFC a(w) = %.3f, table gives %d", i, row.cwnd, a, i+1)
			}
		}
		if b := rfcB(w) * 256; uint32(b) != row.md {
			t.Errorf("row %d (w=%d): RFC b(w)·256 = %.2f, table has %d", i, row.cwnd, b, row.md)
		}
	}
}

// TestHighSpeedAB checks a(w) and b(w) at the RFC's anchor points: standard
// TCP at Low_Window = 38 (a = 1, b = 0.5) and a ≈ 72, b ≈ 0.1 at
// High_Window = 83000.
func TestHighSpeedAB(t *testing.T) {
	tests := []struct {
		w     uint32
		wantA uint32
		wantB float64 // exact table value
	}{
		{w: 10, wantA: 1, wantB: 0.5},
		{w: 38, wantA: 1, wantB: 0.5},
		{w: 39, wantA: 2, wantB: 112.0 / 256},
		{w: 118, wantA: 2, wantB: 112.0 / 256},
		{w: 119, wantA: 3, wantB: 104.0 / 256},
		{w: 1000, wantA: 8, wantB: 83.0 / 256},
		{w: 83000, wantA: 71, wantB: 25.0 / 256},
		{w: 1000000, wantA: 72, wantB: 24.0 / 256},
	}
	for _, tc := range tests {
		ai := hstcpIndex(tc.w, 0)
		if ai2 := hstcpIndex(tc.w, uint32(len(hstcpAIMD)-1)); ai2 != ai {
			t.Errorf("w=%d: index depends on the starting point (%d vs %d)", tc.w, ai, ai2)
		}
		a, b := ai+1, float64(hstcpAIMD[ai].md)/256
		if a != tc.wantA || b != tc.wantB {
			t.Errorf("w=%d: a=%d b=%.4f, want a=%d b=%.4f", tc.w, a, b, tc.wantA, tc.wantB)
		}
	}
	// The RFC's anchor values.
	if a := rfcAInterpolated(38); !near(a, 1, 1e-9) {
		t.Errorf("RFC a(38) = %v", a)
	}
	ai := hstcpIndex(83000, 0)
	if a := float64(ai + 1); !near(a, rfcAInterpolated(83000), 1.6) || !near(a, 72, 1) {
		t.Errorf("a(83000) = %v, RFC gives %.2f ≈ 72", a, rfcAInterpolated(83000))
	}
	if b := float64(hstcpAIMD[ai].md) / 256; !near(b, 0.1, 0.005) {
		t.Errorf("b(83000) = %v, want ≈ 0.1", b)
	}
}

func TestHighSpeedCongAvoidAndSSThresh(t *testing.T) {
	tests := []struct {
		name      string
		cwnd      uint32
		acks      int
		wantCwnd  uint32
		wantSSThr uint32
	}{
		// a(1000) = 8: the 8th increment needs 8·(1000+…+1007)/8 = 8028
		// units, i.e. 1004 ACKs of 8 each.
		{"a=8 before 8th increment", 1000, 1003, 1007, 0},
		{"a=8 at 8th increment", 1000, 1004, 1008, 0},
		// Standard TCP below 38.
		{"reno region", 30, 30, 31, 0},
		// ssthresh = cwnd − cwnd·b(w): 1000 − 1000·83/256 = 676.
		{"md at 1000", 1000, 0, 1000, 676},
		{"md at 30", 30, 0, 30, 15},
		{"md floor", 3, 0, 3, 2},
	}
	for _, tc := range tests {
		for _, p := range profiles() {
			t.Run(tc.name+"/"+p.String(), func(t *testing.T) {
				h := &HighSpeed{}
				s := fakeSock(p)
				h.Init(s)
				s.Cwnd, s.SSThresh = tc.cwnd, 2
				h.ai = hstcpIndex(s.Cwnd, 0)
				for i := 0; i < tc.acks; i++ {
					ack(h, s, 1, -1)
				}
				if s.Cwnd != tc.wantCwnd {
					t.Errorf("cwnd = %d, want %d", s.Cwnd, tc.wantCwnd)
				}
				if tc.wantSSThr != 0 {
					if got := h.SSThresh(s); got != tc.wantSSThr {
						t.Errorf("ssthresh = %d, want %d", got, tc.wantSSThr)
					}
				}
			})
		}
	}
}

// TestHighSpeedUndo is the Linux-3.10 default-undo bug (ACT paper §4.5):
// after an undone recovery 3.10 doubles ssthresh instead of restoring the
// pre-recovery window.
func TestHighSpeedUndo(t *testing.T) {
	tests := []struct {
		p    Profile
		want uint32
	}{
		{ProfileLinux, 1000},
		{ProfileLinux310, 1352}, // 2·676 > 1000
	}
	for _, tc := range tests {
		h := &HighSpeed{}
		s := fakeSock(tc.p)
		h.Init(s)
		s.Cwnd = 1000
		h.ai = hstcpIndex(s.Cwnd, 0)
		enterRecovery(h, s)
		if s.SSThresh != 676 {
			t.Fatalf("%v: ssthresh = %d", tc.p, s.SSThresh)
		}
		if got := h.UndoCwnd(s); got != tc.want {
			t.Errorf("%v: undo = %d, want %d", tc.p, got, tc.want)
		}
	}
}

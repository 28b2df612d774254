package ccai

import (
	"testing"
	"time"
)

// TestIllinoisAlphaBeta checks α(d_a) and β(d_a) for a maximum queueing
// delay d_m = 100 ms (paper §III.A): α = α_max up to d_m/100 and α_min at
// d_m; β = 1/8 up to d_m/10, 1/2 from 8·d_m/10, linear between.
func TestIllinoisAlphaBeta(t *testing.T) {
	const dm = 100000 // µs
	tests := []struct {
		da        uint32
		wantAlpha uint32 // ×128
		wantBeta  uint32 // ×64
	}{
		{0, illinoisAlphaMax, illinoisBetaMin},
		{1000, illinoisAlphaMax, illinoisBetaMin},
		// x = 49000, D = 99000: 99000·1280/(99000 + 49000·1242/38) = 74.
		{50000, 74, 21}, // β: (8·70000 + 24·40000)/70000 = 21.7
		{dm, illinoisAlphaMin, illinoisBetaMax},
		{10000, 322, illinoisBetaMin}, // 99000·1280/(99000 + 9000·1242/38)
		{80000, 47, illinoisBetaMax},
	}
	for _, tc := range tests {
		c := &Illinois{alpha: illinoisAlphaMax}
		if a := c.alphaFor(tc.da, dm); a != tc.wantAlpha {
			t.Errorf("alpha(%d) = %d, want %d", tc.da, a, tc.wantAlpha)
		}
		if b := betaFor(tc.da, dm); b != tc.wantBeta {
			t.Errorf("beta(%d) = %d, want %d", tc.da, b, tc.wantBeta)
		}
	}
	// α returns to α_max only after θ = 5 low-delay RTTs.
	c := &Illinois{alpha: illinoisAlphaMax}
	c.alpha = c.alphaFor(50000, dm)
	for i := 1; i < illinoisTheta; i++ {
		if c.alpha = c.alphaFor(0, dm); c.alpha != 74 {
			t.Fatalf("low-delay RTT %d: alpha = %d, want 74 kept", i, c.alpha)
		}
	}
	if c.alpha = c.alphaFor(0, dm); c.alpha != illinoisAlphaMax {
		t.Errorf("after θ low-delay RTTs alpha = %d, want α_max", c.alpha)
	}
}

// TestIllinoisPerRTT drives one RTT of samples: base 100 ms, maximum
// 200 ms, average 150 ms (d_a = 50 ms of d_m = 100 ms).
func TestIllinoisPerRTT(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		cwnd                 uint32
		wantAlpha, wantBeta  uint32
		wantSSThresh         uint32
		wantCwndAfter20Acks  uint32
		wantCwndAfter200Acks uint32
	}{
		// α = 74/128: cwnd grows 74/128 per RTT (cnt·α ≥ 128·cwnd);
		// β = 21/64: ssthresh = 100 − 100·21/64 = 68.
		{100, 74, 21, 68, 100, 101},
		// Below 15 packets: Reno, α = 1, β = 1/2 (w → w+1 after w ACKs:
		// 22 after 186 ACKs).
		{10, 128, 32, 5, 11, 22},
	} {
		c := &Illinois{}
		s := fakeSock(ProfileLinux)
		s.SndNxt = 1000
		c.Init(s)
		s.Cwnd, s.SSThresh = tc.cwnd, 2
		for _, r := range []time.Duration{100 * ms, 200 * ms, 150 * ms, 150 * ms} {
			c.PktsAcked(s, AckSample{PktsAcked: 1, RTT: r})
		}
		s.SndUna = s.SndNxt + 1
		c.CongAvoid(s, 1)
		if c.alpha != tc.wantAlpha || c.beta != tc.wantBeta {
			t.Errorf("cwnd %d: alpha=%d beta=%d, want %d %d", tc.cwnd, c.alpha, c.beta, tc.wantAlpha, tc.wantBeta)
		}
		s.Cwnd, s.CwndCnt = tc.cwnd, 0
		if got := c.SSThresh(s); got != tc.wantSSThresh {
			t.Errorf("cwnd %d: ssthresh = %d, want %d", tc.cwnd, got, tc.wantSSThresh)
		}
		for i := 0; i < 200; i++ {
			ack(c, s, 1, -1)
			if i == 19 && s.Cwnd != tc.wantCwndAfter20Acks {
				t.Errorf("cwnd %d: after 20 ACKs cwnd = %d, want %d", tc.cwnd, s.Cwnd, tc.wantCwndAfter20Acks)
			}
		}
		if s.Cwnd != tc.wantCwndAfter200Acks {
			t.Errorf("cwnd %d: after 200 ACKs cwnd = %d, want %d", tc.cwnd, s.Cwnd, tc.wantCwndAfter200Acks)
		}
	}
}

func TestIllinoisUndo(t *testing.T) {
	// β = 1/8 at low delay: 3.10's fallback nearly doubles cwnd.
	for _, tc := range []struct {
		p    Profile
		want uint32
	}{{ProfileLinux, 800}, {ProfileLinux310, 1400}} {
		c := &Illinois{}
		s := fakeSock(tc.p)
		c.Init(s)
		c.beta = illinoisBetaMin
		s.Cwnd = 800
		enterRecovery(c, s)
		if got := c.UndoCwnd(s); got != tc.want {
			t.Errorf("%v: undo = %d, want %d", tc.p, got, tc.want)
		}
	}
}

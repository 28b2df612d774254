package ccai

import (
	"testing"
	"time"
)

// TestHtcpBeta checks β = RTT_min/RTT_max clamped to [0.5, 0.8] (×128),
// used from the second congestion event on, only when RTT_min > 10 ms, and
// the 95% fade of RTT_max towards RTT_min.
func TestHtcpBeta(t *testing.T) {
	tests := []struct {
		minRTT, maxRTT uint32 // ms (jiffies)
		wantBeta       uint32
		wantMaxRTT     uint32
	}{
		{50, 100, 64, 97},    // 0.5
		{60, 100, 76, 98},    // 60·128/100 = 76.8
		{80, 100, 102, 99},   // 0.8
		{90, 100, 102, 99},   // 0.9 → 0.8
		{20, 100, 64, 96},    // 0.2 → 0.5
		{8, 10, 64, 9},       // RTT_min ≤ 10 ms: 0.5
		{100, 100, 102, 100}, // no queueing
	}
	for _, tc := range tests {
		h := &Htcp{}
		s := fakeSock(ProfileLinux)
		h.Init(s)
		s.Cwnd = 100
		h.minRTT, h.maxRTT = tc.minRTT, tc.maxRTT
		// The first event only arms the RTT-ratio mode.
		if h.SSThresh(s); h.beta != htcpBetaMin || !h.modeSwitch {
			t.Fatalf("first event: beta = %d modeSwitch = %v", h.beta, h.modeSwitch)
		}
		h.maxRTT = tc.maxRTT
		got := h.SSThresh(s)
		if h.beta != tc.wantBeta || got != 100*tc.wantBeta>>7 || h.maxRTT != tc.wantMaxRTT {
			t.Errorf("RTT %d/%d: beta=%d ssthresh=%d maxRTT=%d, want %d %d %d",
				tc.minRTT, tc.maxRTT, h.beta, got, h.maxRTT, tc.wantBeta, 100*tc.wantBeta>>7, tc.wantMaxRTT)
		}
	}
}

// TestHtcpBandwidthSwitch: a throughput change of more than 20% between
// congestion events resets β to 0.5.
func TestHtcpBandwidthSwitch(t *testing.T) {
	for _, tc := range []struct {
		oldMaxB, maxB uint32
		wantBeta      uint32
	}{
		{1000, 1100, 102}, // +10%: keep the RTT ratio (80/100 → 0.8)
		{1000, 1250, 64},  // +25%: switch back to 0.5
		{1000, 700, 64},   // −30%
	} {
		h := &Htcp{modeSwitch: true, minRTT: 80, maxRTT: 100, oldMaxB: tc.oldMaxB, maxB: tc.maxB}
		h.betaUpdate()
		if h.beta != tc.wantBeta {
			t.Errorf("maxB %d→%d: beta = %d, want %d", tc.oldMaxB, tc.maxB, h.beta, tc.wantBeta)
		}
	}
}

// TestHtcpAlpha checks α(Δ) = 1 + 10(Δ−1) + ((Δ−1)/2)² for Δ > 1 s, times
// 2(1−β), scaled by RTT_min/100 ms within [0.5, 10] (×128).
func TestHtcpAlpha(t *testing.T) {
	tests := []struct {
		name      string
		delta     time.Duration
		minRTT    uint32 // ms
		beta      uint32
		wantAlpha uint32
	}{
		{"Δ 0.5 s: Reno", 500 * time.Millisecond, 100, 64, 128},
		{"Δ 1 s: Reno", time.Second, 100, 64, 128},
		// factor = 1 + (10·1000 + 500²/1000)/1000 = 11 (11.25).
		{"Δ 2 s", 2 * time.Second, 100, 64, 2 * 11 * 64},
		// factor = 1 + 100 + 25 = 126.
		{"Δ 11 s", 11 * time.Second, 100, 64, 2 * 126 * 64},
		{"Δ 2 s, β 0.8", 2 * time.Second, 100, 102, 2 * 11 * 26},
		// RTT scaling: 10 ms → ×0.1 (11·8/80 = 1); 200 ms → ×2; 5 ms and
		// 1 s are clamped to ×0.5... ×10 bounds of the scale.
		{"Δ 2 s, RTT 10 ms", 2 * time.Second, 10, 64, 2 * 1 * 64},
		{"Δ 2 s, RTT 200 ms", 2 * time.Second, 200, 64, 2 * 22 * 64},
		{"Δ 11 s, RTT 5 ms", 11 * time.Second, 5, 64, 2 * 12 * 64},    // 126·8/80 = 12
		{"Δ 11 s, RTT 1 s", 11 * time.Second, 1000, 64, 2 * 252 * 64}, // 126·8/4
		// (Δ−1)/2 squared wraps uint32 past ~132 s, as in the kernel:
		// Δ = 200 s: 99500² mod 2³² = 1310315408, factor = 1 +
		// (1990000 + 1310315)/1000 = 3301, not 11891.
		{"Δ 200 s wraps", 200 * time.Second, 100, 64, 2 * 3301 * 64},
	}
	for _, tc := range tests {
		h := &Htcp{}
		s := fakeSock(ProfileLinux)
		h.Init(s)
		h.minRTT, h.beta = tc.minRTT, tc.beta
		s.Now = tc.delta
		h.alphaUpdate(s)
		if h.alpha != tc.wantAlpha {
			t.Errorf("%s: alpha = %d (%.2f), want %d", tc.name, h.alpha, float64(h.alpha)/128, tc.wantAlpha)
		}
	}
}

// TestHtcpRTTSampling: RTT_max follows samples within 20 ms of it, only in
// Open.
func TestHtcpRTTSampling(t *testing.T) {
	h := &Htcp{}
	s := fakeSock(ProfileLinux)
	h.Init(s)
	ms := time.Millisecond
	for _, r := range []time.Duration{50 * ms, 60 * ms, 75 * ms, 200 * ms, 90 * ms} {
		h.PktsAcked(s, AckSample{PktsAcked: 1, RTT: r})
	}
	if h.minRTT != 50 || h.maxRTT != 90 {
		t.Errorf("minRTT=%d maxRTT=%d, want 50 90", h.minRTT, h.maxRTT)
	}
	s.CAState = StateRecovery
	h.PktsAcked(s, AckSample{PktsAcked: 1, RTT: 100 * ms})
	if h.maxRTT != 90 {
		t.Errorf("maxRTT moved in Recovery: %d", h.maxRTT)
	}
}

// TestHtcpUndo is the Linux-3.10 boundary bug (ACT paper §4.5, Fig. 13):
// from cwnd < 4, ssthresh is 2 and 3.10's undo (2<<7)/β raises cwnd to 4;
// and after ssthresh is restored to infinity the undo is enormous (§4.3).
func TestHtcpUndo(t *testing.T) {
	tests := []struct {
		name     string
		p        Profile
		cwnd     uint32
		ssthresh uint32 // after Recovery
		want     uint32
	}{
		{"cwnd 3, linux", ProfileLinux, 3, 0, 3},
		{"cwnd 3, 3.10 rises to 4", ProfileLinux310, 3, 0, 4},
		{"cwnd 2, 3.10 rises to 4", ProfileLinux310, 2, 0, 4},
		{"cwnd 100, 3.10", ProfileLinux310, 100, 0, 100},
		{"ssthresh infinite, linux", ProfileLinux, 3, InfiniteSSThresh, 3},
		{"ssthresh infinite, 3.10", ProfileLinux310, 3, InfiniteSSThresh, 67108862},
	}
	for _, tc := range tests {
		h := &Htcp{}
		s := fakeSock(tc.p)
		h.Init(s)
		s.Now = 5 * time.Second
		s.Cwnd = tc.cwnd
		enterRecovery(h, s)
		if tc.ssthresh != 0 {
			s.SSThresh = tc.ssthresh
		}
		lastCong := h.lastCong
		s.Now += time.Second
		if got := h.UndoCwnd(s); got != tc.want {
			t.Errorf("%s: undo = %d, want %d", tc.name, got, tc.want)
		}
		if h.lastCong == lastCong || h.undoLastCong != 0 {
			t.Errorf("%s: congestion time not restored", tc.name)
		}
	}
}

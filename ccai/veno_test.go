package ccai

import (
	"testing"
	"time"
)

// venoPrimed returns Veno with BaseRTT = base and three samples of rtt in
// the current window, in congestion avoidance at cwnd.
func venoPrimed(p Profile, cwnd uint32, base, rtt time.Duration) (*Veno, *Sock) {
	v := &Veno{}
	s := fakeSock(p)
	v.Init(s)
	s.Cwnd, s.SSThresh = cwnd, 2
	s.CwndLimited, s.MaxPacketsOut, s.PriorInFlight = true, cwnd, cwnd
	// The first sample sets BaseRTT; the window update after it (Reno,
	// too few samples) resets the per-window minimum.
	v.PktsAcked(s, AckSample{PktsAcked: 1, RTT: base})
	v.CongAvoid(s, 1)
	s.Cwnd, s.CwndCnt = cwnd, 0
	v.PktsAcked(s, AckSample{PktsAcked: 1, RTT: rtt})
	v.PktsAcked(s, AckSample{PktsAcked: 1, RTT: rtt})
	return v, s
}

// TestVenoBeta checks the backlog estimate N = cwnd·(RTT−BaseRTT)/RTT (in
// 1/2 packets, RTTs in µs+1) and the resulting backoff: 4/5 when N < β = 3,
// 1/2 otherwise.
func TestVenoBeta(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		cwnd       uint32
		base, rtt  time.Duration
		wantDiff   uint32 // half packets
		wantSSThr  uint32
		congestive bool
	}{
		// target = 2·20·100001/110001 = 36 → diff = 40 − 36 = 4 (2 packets).
		{20, 100 * ms, 110 * ms, 4, 16, false},
		// target = 2·30·100001/105001 = 57 → diff = 3.
		{30, 100 * ms, 105 * ms, 3, 24, false},
		// target = 2·12·100001/133001 = 18 → diff = 6 = β: congestive.
		{12, 100 * ms, 133 * ms, 6, 6, true},
		// target = 2·20·100001/150001 = 26 → diff = 14.
		{20, 100 * ms, 150 * ms, 14, 10, true},
		// No queue at all.
		{50, 100 * ms, 100 * ms, 0, 40, false},
	}
	for _, tc := range tests {
		v, s := venoPrimed(ProfileLinux, tc.cwnd, tc.base, tc.rtt)
		v.CongAvoid(s, 1)
		s.Cwnd = tc.cwnd
		if v.diff != tc.wantDiff {
			t.Errorf("cwnd %d rtt %v: diff = %d, want %d", tc.cwnd, tc.rtt, v.diff, tc.wantDiff)
		}
		if got := v.SSThresh(s); got != tc.wantSSThr {
			t.Errorf("cwnd %d rtt %v: ssthresh = %d, want %d", tc.cwnd, tc.rtt, got, tc.wantSSThr)
		}
		dst := make([]float64, len(v.Vars()))
		v.ReadVars(s, dst)
		if dst[0] != float64(tc.wantDiff)/2 || (dst[2] == 1) != tc.congestive {
			t.Errorf("cwnd %d rtt %v: vars diff=%v congestive=%v", tc.cwnd, tc.rtt, dst[0], dst[2])
		}
	}
}

// TestVenoGrowth: one packet per RTT when non-congestive, one per two RTTs
// when congestive.
func TestVenoGrowth(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name     string
		rtt      time.Duration
		acks     int
		wantCwnd uint32
	}{
		{"non-congestive: one RTT", 101 * ms, 21, 21},
		{"congestive: first window grows", 150 * ms, 21, 21},
		{"congestive: second window does not", 150 * ms, 43, 21},
		{"congestive: third window not yet", 150 * ms, 64, 21},
		{"congestive: third window grows", 150 * ms, 65, 22},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, s := venoPrimed(ProfileLinux, 20, 100*ms, tc.rtt)
			for i := 0; i < tc.acks; i++ {
				ack(v, s, 1, tc.rtt)
			}
			if s.Cwnd != tc.wantCwnd {
				t.Errorf("cwnd = %d, want %d", s.Cwnd, tc.wantCwnd)
			}
		})
	}
}

// TestVenoRenoUntilSamples: with fewer than three RTT samples Veno is Reno
// and keeps diff at 0, so a loss backs off by 4/5.
func TestVenoRenoUntilSamples(t *testing.T) {
	v := &Veno{}
	s := fakeSock(ProfileLinux)
	v.Init(s)
	s.Cwnd, s.SSThresh = 20, 2
	ack(v, s, 1, 300*time.Millisecond)
	ack(v, s, 1, 300*time.Millisecond)
	if v.diff != 0 {
		t.Errorf("diff = %d before three samples", v.diff)
	}
}

// TestVenoUndo is the Linux-3.10 default-undo bug (ACT paper §4.5, Fig.
// 14): after a 4/5 backoff the fallback doubles ssthresh.
func TestVenoUndo(t *testing.T) {
	for _, tc := range []struct {
		p    Profile
		want uint32
	}{{ProfileLinux, 20}, {ProfileLinux310, 32}} {
		v, s := venoPrimed(tc.p, 20, 100*time.Millisecond, 110*time.Millisecond)
		v.CongAvoid(s, 1)
		s.Cwnd = 20
		enterRecovery(v, s)
		if s.SSThresh != 16 {
			t.Fatalf("%v: ssthresh = %d", tc.p, s.SSThresh)
		}
		if got := v.UndoCwnd(s); got != tc.want {
			t.Errorf("%v: undo = %d, want %d", tc.p, got, tc.want)
		}
	}
}

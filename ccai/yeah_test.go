package ccai

import (
	"testing"
	"time"
)

// yeahRTT runs one YeAH RTT with three samples of rtt.
func yeahRTT(y *Yeah, s *Sock, rtt time.Duration) {
	for i := 0; i < 3; i++ {
		y.PktsAcked(s, AckSample{PktsAcked: 1, RTT: rtt})
	}
	s.SndUna = y.begSndNxt + 1
	s.SndNxt = s.SndUna + uint64(s.Cwnd)*uint64(s.MSS)
	s.CwndLimited, s.MaxPacketsOut, s.PriorInFlight = true, s.Cwnd, s.Cwnd
	y.CongAvoid(s, 1)
}

// TestYeahModes checks the queue estimate Q = cwnd·(RTT−BaseRTT)/RTT, the
// switch to slow mode above Q_max = 80 or a queueing delay above
// BaseRTT/256, and precautionary decongestion (paper §3).
func TestYeahModes(t *testing.T) {
	tests := []struct {
		name          string
		cwnd          uint32
		rtt           time.Duration
		wantQ         uint32
		wantFast      bool
		wantCwnd      uint32
		wantRenoCount uint32
	}{
		// Q = 1000·20000/120001 = 166 > 80: remove Q (≤ cwnd/2), reno_count
		// = cwnd/2.
		{"big queue: decongest", 1000, 120 * time.Millisecond, 166, false, 834, 417},
		// Q = 1000·500/100501 = 4 ≤ 80, but 500 µs > 100001/256 = 390 µs.
		{"delay above phi", 1000, 100500 * time.Microsecond, 4, false, 1000, 500},
		// Q = 1, 200 µs of queueing: fast mode.
		{"fast", 1000, 100200 * time.Microsecond, 1, true, 1000, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			y := &Yeah{}
			s := fakeSock(ProfileLinux)
			s.SndNxt = 1
			y.Init(s)
			s.Cwnd, s.SSThresh = tc.cwnd, 2
			y.PktsAcked(s, AckSample{PktsAcked: 1, RTT: 100 * time.Millisecond})
			y.minRTT, y.cntRTT = vegasNoRTT, 0
			yeahRTT(y, s, tc.rtt)
			dst := make([]float64, len(y.Vars()))
			y.ReadVars(s, dst)
			if y.lastQ != tc.wantQ || (dst[0] == 1) != tc.wantFast || s.Cwnd != tc.wantCwnd || y.renoCount != tc.wantRenoCount {
				t.Errorf("Q=%d fast=%v cwnd=%d reno_count=%d, want %d %v %d %d",
					y.lastQ, dst[0] == 1, s.Cwnd, y.renoCount, tc.wantQ, tc.wantFast, tc.wantCwnd, tc.wantRenoCount)
			}
		})
	}
}

func TestYeahSSThresh(t *testing.T) {
	tests := []struct {
		name      string
		cwnd      uint32
		lastQ     uint32
		doingReno uint32
		want      uint32
	}{
		{"remove the queue", 400, 60, 0, 340},
		{"at least cwnd/8", 400, 30, 0, 350},
		{"at most cwnd/2", 400, 300, 0, 200},
		{"competing with Reno: halve", 400, 30, yeahRho, 200},
		{"tiny window", 1, 5, 0, 2},
	}
	for _, tc := range tests {
		y := &Yeah{}
		s := fakeSock(ProfileLinux)
		y.Init(s)
		s.Cwnd, y.lastQ, y.doingReno = tc.cwnd, tc.lastQ, tc.doingReno
		if got := y.SSThresh(s); got != tc.want {
			t.Errorf("%s: ssthresh = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestYeahFastGrowth: fast mode is Scalable TCP, one packet per 100 acked.
func TestYeahFastGrowth(t *testing.T) {
	for _, tc := range []struct {
		p        Profile
		acks     int
		wantCwnd uint32
	}{
		{ProfileLinux, 99, 1000},
		{ProfileLinux, 100, 1001},
		{ProfileLinux310, 100, 1000}, // 3.10 needs the count to exceed 100
		{ProfileLinux310, 101, 1001},
	} {
		y := &Yeah{}
		s := fakeSock(tc.p)
		s.SndNxt = 1 << 40 // no per-RTT update
		y.Init(s)
		s.Cwnd, s.SSThresh = 1000, 2
		for i := 0; i < tc.acks; i++ {
			ack(y, s, 1, -1)
		}
		if s.Cwnd != tc.wantCwnd {
			t.Errorf("%v after %d ACKs: cwnd = %d, want %d", tc.p, tc.acks, s.Cwnd, tc.wantCwnd)
		}
	}
}

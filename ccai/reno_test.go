package ccai

import (
	"testing"
	"time"
)

// TestRenoWindowGrowth: slow start grows cwnd by the packets each ACK
// covers, up to ssthresh (RFC 5681 §3.1 with RFC 3465's byte counting, L = ∞
// as in Linux), and congestion avoidance by about one packet per RTT, i.e.
// per window of acknowledged packets (RFC 5681 §3.1, eq. 3). Each round
// acknowledges one window, ackSize packets per ACK.
func TestRenoWindowGrowth(t *testing.T) {
	tests := []struct {
		name            string
		cwnd, ssthresh  uint32
		ackSize, rounds uint32
		want            uint32
	}{
		{"slow start: doubles per RTT", 10, InfiniteSSThresh, 1, 3, 80},
		{"slow start: stretch ACKs count packets", 10, InfiniteSSThresh, 2, 2, 40},
		{"slow start stops at ssthresh, then +1 per RTT", 10, 16, 1, 2, 17},
		{"congestion avoidance: +1 per RTT", 20, 10, 1, 5, 25},
		{"congestion avoidance: stretch ACKs, +1 per RTT", 20, 10, 4, 8, 28},
		{"congestion avoidance: large window", 1000, 500, 2, 10, 1010},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := New("reno")
			if err != nil {
				t.Fatal(err)
			}
			s := fakeSock(ProfileLinux)
			a.Init(s)
			s.Cwnd, s.SSThresh = tc.cwnd, tc.ssthresh
			for r := uint32(0); r < tc.rounds; r++ {
				w := s.Cwnd
				for acked := uint32(0); acked < w; acked += tc.ackSize {
					s.Now += time.Millisecond
					ack(a, s, min(tc.ackSize, w-acked), 100*time.Millisecond)
				}
			}
			if s.Cwnd != tc.want {
				t.Errorf("cwnd after %d rounds = %d, want %d", tc.rounds, s.Cwnd, tc.want)
			}
		})
	}
}

// TestRenoNotCwndLimited: the window does not grow while the sender does
// not use it (RFC 7661 §4.1; Linux's tcp_is_cwnd_limited).
func TestRenoNotCwndLimited(t *testing.T) {
	a, _ := New("reno")
	s := fakeSock(ProfileLinux)
	a.Init(s)
	s.Cwnd, s.SSThresh = 20, 10
	s.CwndLimited, s.MaxPacketsOut, s.PriorInFlight = false, 5, 5
	for i := 0; i < 100; i++ {
		a.CongAvoid(s, 1)
	}
	if s.Cwnd != 20 {
		t.Errorf("application-limited: cwnd = %d, want 20", s.Cwnd)
	}
}

// TestRenoSSThresh: on a loss, ssthresh = max(FlightSize/2, 2·SMSS) (RFC
// 5681 §3.1, eq. 4). Linux halves cwnd (tcp_reno_ssthresh), which is the
// flight of a cwnd-limited sender, the case here.
func TestRenoSSThresh(t *testing.T) {
	tests := []struct {
		flight, want uint32
	}{
		{100, 50},
		{21, 10},
		{4, 2},
		{3, 2},
		{2, 2},
		{1, 2},
	}
	for _, p := range profiles() {
		for _, tc := range tests {
			a, _ := New("reno")
			s := fakeSock(p)
			a.Init(s)
			s.Cwnd = tc.flight
			ack(a, s, 0, 100*time.Millisecond) // cwnd-limited: flight = cwnd
			s.Cwnd = tc.flight
			enterRecovery(a, s)
			if s.SSThresh != tc.want || s.Cwnd != tc.want {
				t.Errorf("%v: flight %d: ssthresh = %d, cwnd = %d, want %d", p, tc.flight, s.SSThresh, s.Cwnd, tc.want)
			}
		}
	}
}

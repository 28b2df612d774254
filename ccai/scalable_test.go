package ccai

import "testing"

// TestScalableConstants checks Kelly's a = 0.01 (one packet per 100
// acknowledged, Linux's TCP_SCALABLE_AI_CNT) and b = 1/8
// (TCP_SCALABLE_MD_SCALE = 3), and 3.10's 50 ACKs per increment.
func TestScalableConstants(t *testing.T) {
	tests := []struct {
		name     string
		p        Profile
		cwnd     uint32
		acks     int    // ACKs sent
		perAck   uint32 // packets per ACK
		wantCwnd uint32
	}{
		{"a=0.01: 99 packets", ProfileLinux, 1000, 99, 1, 1000},
		{"a=0.01: 100 packets", ProfileLinux, 1000, 100, 1, 1001},
		{"a=0.01: one RTT of 1000 packets", ProfileLinux, 1000, 1000, 1, 1010},
		{"stretch ACKs count packets", ProfileLinux, 1000, 50, 2, 1001},
		{"below 100 packets: Reno", ProfileLinux, 60, 60, 1, 61},
		{"3.10: 50 ACKs are not enough", ProfileLinux310, 1000, 50, 1, 1000},
		{"3.10: 51 ACKs", ProfileLinux310, 1000, 51, 1, 1001},
		{"3.10: stretch ACKs count once", ProfileLinux310, 1000, 51, 2, 1001},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := &Scalable{}
			s := fakeSock(tc.p)
			a.Init(s)
			s.Cwnd, s.SSThresh = tc.cwnd, 2
			for i := 0; i < tc.acks; i++ {
				ack(a, s, tc.perAck, -1)
			}
			if s.Cwnd != tc.wantCwnd {
				t.Errorf("cwnd = %d, want %d", s.Cwnd, tc.wantCwnd)
			}
		})
	}
}

func TestScalableSSThreshAndUndo(t *testing.T) {
	tests := []struct {
		cwnd, want uint32
	}{
		{800, 700}, // 800 − 800/8
		{1000, 875},
		{8, 7},
		{3, 3},
		{2, 2},
		{1, 2},
	}
	for _, tc := range tests {
		s := fakeSock(ProfileLinux)
		s.Cwnd = tc.cwnd
		if got := (&Scalable{}).SSThresh(s); got != tc.want {
			t.Errorf("ssthresh(%d) = %d, want %d", tc.cwnd, got, tc.want)
		}
	}
	// Undo after a 1/8 reduction: 3.10's fallback nearly doubles cwnd.
	for _, tc := range []struct {
		p    Profile
		want uint32
	}{{ProfileLinux, 800}, {ProfileLinux310, 1400}} {
		a := &Scalable{}
		s := fakeSock(tc.p)
		s.Cwnd = 800
		enterRecovery(a, s)
		if got := a.UndoCwnd(s); got != tc.want {
			t.Errorf("%v: undo = %d, want %d", tc.p, got, tc.want)
		}
	}
}

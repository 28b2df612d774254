package ccai

import (
	"testing"
	"time"
)

// TestBicCnt checks the binary-search increase of BIC (paper §3): cnt is the
// number of ACKs per one-packet increase, divided by the initial delayed-ACK
// ratio of 2.
func TestBicCnt(t *testing.T) {
	tests := []struct {
		name       string
		wMax, cwnd uint32
		wantCnt    uint32
	}{
		{"low window: Reno", 1000, 10, 10},
		{"far below W_max: S_max = 16", 1000, 900, 900 / 16 / 2},
		{"binary search: dist 2", 1000, 990, 990 / 2 / 2},
		{"close to W_max: smooth", 1000, 998, 998 * 20 / 4 / 2},
		{"just above W_max: smooth", 1000, 1002, 1002 * 20 / 4 / 2},
		{"max probing: slow start", 1000, 1020, 1020 * 3 / 20 / 2},
		{"max probing: S_max", 1000, 1100, 1100 / 16 / 2},
		{"no loss yet: at least 5% per RTT", 0, 500, 20 / 2},
	}
	for _, tc := range tests {
		b := &Bic{}
		s := fakeSock(ProfileLinux)
		b.Init(s)
		b.lastMaxCwnd = tc.wMax
		s.Cwnd, s.Now = tc.cwnd, time.Second
		b.update(s)
		if b.cnt != tc.wantCnt {
			t.Errorf("%s: cnt = %d, want %d", tc.name, b.cnt, tc.wantCnt)
		}
	}
}

// TestBicSSThresh checks β = 819/1024, halving below 14 packets, and fast
// convergence of W_max.
func TestBicSSThresh(t *testing.T) {
	b := &Bic{}
	s := fakeSock(ProfileLinux)
	b.Init(s)
	steps := []struct {
		cwnd, wantSSThr, wantWMax uint32
	}{
		{100, 79, 100}, // 100·819/1024 = 79.98
		{90, 71, 80},   // below W_max: W_max = 90·(1024+819)/2048 = 80.99
		{10, 5, 8},     // low window; W_max = 10·1843/2048
	}
	for _, st := range steps {
		s.Cwnd = st.cwnd
		if got := b.SSThresh(s); got != st.wantSSThr || b.lastMaxCwnd != st.wantWMax {
			t.Errorf("cwnd %d: ssthresh=%d W_max=%d, want %d %d", st.cwnd, got, b.lastMaxCwnd, st.wantSSThr, st.wantWMax)
		}
	}
}

func TestBicUndo(t *testing.T) {
	for _, tc := range []struct {
		p    Profile
		want uint32
	}{{ProfileLinux, 100}, {ProfileLinux310, 100}} {
		b := &Bic{}
		s := fakeSock(tc.p)
		b.Init(s)
		s.Cwnd = 100
		enterRecovery(b, s)
		if got := b.UndoCwnd(s); got != tc.want {
			t.Errorf("%v: undo = %d, want %d", tc.p, got, tc.want)
		}
		// A timeout resets BIC's state but keeps the cwnd at the loss, so
		// an undone RTO restores it in both profiles.
		s.Cwnd = 1
		b.SetState(s, StateLoss)
		if b.lastMaxCwnd != 0 || b.lossCwnd != 100 {
			t.Errorf("%v: after RTO W_max=%d loss_cwnd=%d, want 0 100", tc.p, b.lastMaxCwnd, b.lossCwnd)
		}
		want := uint32(100)
		if got := b.UndoCwnd(s); got != want {
			t.Errorf("%v: undo after RTO = %d, want %d", tc.p, got, want)
		}
	}
}

// TestBicGrowth checks that cnt drives growth, counting packets today and
// ACKs in 3.10.
func TestBicGrowth(t *testing.T) {
	for _, tc := range []struct {
		p        Profile
		perAck   uint32
		acks     int
		wantCwnd uint32
	}{
		// cwnd 160, W_max 1000: cnt = 160/16/2 = 5.
		{ProfileLinux, 1, 6, 161},
		{ProfileLinux, 5, 1, 161}, // stretch ACK of 5 packets
		{ProfileLinux310, 5, 1, 160},
		{ProfileLinux310, 5, 6, 161},
	} {
		b := &Bic{}
		s := fakeSock(tc.p)
		b.Init(s)
		b.lastMaxCwnd = 1000
		s.Cwnd, s.SSThresh, s.Now = 160, 2, time.Second
		for i := 0; i < tc.acks; i++ {
			ack(b, s, tc.perAck, -1)
		}
		if s.Cwnd != tc.wantCwnd {
			t.Errorf("%v %d×%d: cwnd = %d, want %d", tc.p, tc.acks, tc.perAck, s.Cwnd, tc.wantCwnd)
		}
	}
}

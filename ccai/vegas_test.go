package ccai

import (
	"testing"
	"time"
)

// vegasRTT runs one Vegas RTT: three RTT samples of rtt, then the ACK that
// passes the measured window's right edge.
func vegasRTT(v *Vegas, s *Sock, rtt time.Duration) {
	for i := 0; i < 3; i++ {
		v.PktsAcked(s, AckSample{PktsAcked: 1, RTT: rtt})
	}
	s.SndUna = v.begSndNxt + 1
	s.SndNxt = s.SndUna + uint64(s.Cwnd)*uint64(s.MSS)
	v.CongAvoid(s, 1)
}

// TestVegasDiff checks the per-RTT decision on diff = cwnd·(RTT −
// BaseRTT)/BaseRTT (RTTs in µs+1): below α = 2 grow, above β = 4 shrink,
// in slow start leave as soon as diff > γ = 1.
func TestVegasDiff(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name         string
		cwnd, ssthr  uint32
		rtt          time.Duration
		wantDiff     uint32
		wantCwnd     uint32
		wantSSThresh uint32
	}{
		// ssthresh ends at max(ssthresh, cwnd/2 + cwnd/4) outside Recovery.
		{"diff 0 < alpha: grow", 10, 2, 110 * ms, 0, 11, 7},   // 10·10000/100001 = 0.99 → 0
		{"diff 1 < alpha: grow", 20, 2, 110 * ms, 1, 21, 15},  // 20·10000/100001 = 1
		{"diff 3: hold", 20, 2, 120 * ms, 3, 20, 15},          // 20·20000/100001 = 3
		{"diff 4 = beta: hold", 25, 2, 120 * ms, 4, 25, 18},   // 25·20000/100001 = 4
		{"diff 5 > beta: shrink", 30, 2, 120 * ms, 5, 29, 21}, // ssthresh min(2,28)=2, then 3/4·29
		{"slow start, diff 1: double", 20, 1000, 105 * ms, 0, 21, 1000},
		// Slow start, diff = 20·10000/100001 = 1 ≤ γ: keep doubling.
		{"slow start, diff = gamma", 20, 1000, 110 * ms, 1, 21, 1000},
		// Slow start, diff = 3 > γ: cwnd = target+1 = 20·100001/120001+1 = 17,
		// ssthresh = cwnd−1 = 16.
		{"slow start, diff > gamma: leave", 20, 1000, 120 * ms, 3, 17, 16},
	}
	for _, tc := range tests {
		for _, p := range profiles() {
			t.Run(tc.name+"/"+p.String(), func(t *testing.T) {
				v := &Vegas{}
				s := fakeSock(p)
				s.SndNxt = 100 * 1448
				v.Init(s)
				s.Cwnd, s.SSThresh = tc.cwnd, tc.ssthr
				// BaseRTT 100 ms from an earlier window.
				v.PktsAcked(s, AckSample{PktsAcked: 1, RTT: 100 * ms})
				v.minRTT, v.cntRTT = vegasNoRTT, 0
				vegasRTT(v, s, tc.rtt)
				if v.diff != tc.wantDiff || s.Cwnd != tc.wantCwnd || s.SSThresh != tc.wantSSThresh {
					t.Errorf("diff=%d cwnd=%d ssthresh=%d, want %d %d %d",
						v.diff, s.Cwnd, s.SSThresh, tc.wantDiff, tc.wantCwnd, tc.wantSSThresh)
				}
			})
		}
	}
}

// TestVegasKeepsQueue drives Vegas through a fluid bottleneck of 1 packet
// per ms and a 50 ms base RTT: queue = cwnd − 50 packets adds queue ms of
// delay. The first packet saw the empty path (BaseRTT = 50 ms). Vegas must
// settle with 2 to 4 packets queued from below and from above.
func TestVegasKeepsQueue(t *testing.T) {
	const bdp = 50
	for _, start := range []uint32{10, 49, 80, 200} {
		v := &Vegas{}
		s := fakeSock(ProfileLinux)
		s.SndNxt = 1
		v.Init(s)
		s.Cwnd, s.SSThresh = start, 2
		v.PktsAcked(s, AckSample{PktsAcked: 1, RTT: bdp * time.Millisecond})
		for r := 0; r < 400; r++ {
			queue := max(int(s.Cwnd)-bdp, 0)
			vegasRTT(v, s, time.Duration(bdp+queue)*time.Millisecond)
		}
		if q := int(s.Cwnd) - bdp; q < 2 || q > 4 {
			t.Errorf("start %d: settled with %d packets queued (cwnd %d), want 2..4", start, q, s.Cwnd)
		}
	}
}

func TestVegasRenoOutsideOpen(t *testing.T) {
	v := &Vegas{}
	s := fakeSock(ProfileLinux)
	v.Init(s)
	v.SetState(s, StateRecovery)
	if v.doing {
		t.Fatal("Vegas still active in Recovery")
	}
	s.Cwnd, s.SSThresh = 10, 2
	for i := 0; i < 11; i++ {
		ack(v, s, 1, 300*time.Millisecond) // a huge queue Vegas would react to
	}
	if s.Cwnd != 11 {
		t.Errorf("cwnd = %d, want Reno's 11", s.Cwnd)
	}
	v.SetState(s, StateOpen)
	if !v.doing || v.cntRTT != 0 {
		t.Errorf("Vegas not re-enabled in Open")
	}
}

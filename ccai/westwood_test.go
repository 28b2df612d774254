package ccai

import (
	"testing"
	"time"
)

// TestWestwoodBandwidthFilter feeds ACKs of 10 segments every 10 ms with a
// 100 ms RTT and checks the two-stage filter x ← (7x + b)/8 against values
// computed by hand.
func TestWestwoodBandwidthFilter(t *testing.T) {
	const seg = 10 * 1448 // bytes per ACK
	w := &Westwood{}
	s := fakeSock(ProfileLinux)
	w.Init(s)
	w.PktsAcked(s, AckSample{PktsAcked: 10, RTT: 100 * time.Millisecond})
	type step struct {
		at         time.Duration // ACK time
		wantNs     uint64
		wantEst    uint64
		wantWindow uint32 // BWE·RTT_min/MSS
	}
	// The first ACK only anchors snd_una. A sampling interval closes at
	// the first ACK more than max(RTT, 50 ms) = 100 ms after it opened:
	//  t=110 ms: 9 ACKs in 110 ms → 9·14480 B / 0.11 s = 1184727 B/s, which
	//            initialises both stages;
	//  t=220 ms: 11 ACKs in 110 ms → 1448000 B/s; ns = (7·1184727 +
	//            1448000)/8 = 1217636; est = (7·1184727 + 1217636)/8 =
	//            1188840.
	steps := []step{
		{at: 100 * time.Millisecond, wantNs: 0, wantEst: 0, wantWindow: 2},
		{at: 110 * time.Millisecond, wantNs: 1184727, wantEst: 1184727, wantWindow: 81},
		{at: 210 * time.Millisecond, wantNs: 1184727, wantEst: 1184727, wantWindow: 81},
		{at: 220 * time.Millisecond, wantNs: 1217636, wantEst: 1188840, wantWindow: 82},
	}
	now := time.Duration(0)
	for _, st := range steps {
		for now < st.at {
			now += 10 * time.Millisecond
			s.Now = now
			s.SndUna += seg
			w.InAckEvent(s, 0, seg)
		}
		if w.bwNsEst != st.wantNs || w.bwEst != st.wantEst {
			t.Errorf("t=%v: ns=%d est=%d, want %d %d", st.at, w.bwNsEst, w.bwEst, st.wantNs, st.wantEst)
		}
		if got := w.bwRTTMin(s); got != st.wantWindow {
			t.Errorf("t=%v: BWE·RTT_min = %d packets, want %d", st.at, got, st.wantWindow)
		}
	}

	// Reno halving on entry to Recovery, the estimate when it completes.
	s.Cwnd = 200
	enterRecovery(w, s)
	if s.SSThresh != 100 {
		t.Errorf("ssthresh on Recovery = %d, want 100", s.SSThresh)
	}
	w.CwndEvent(s, EventCompleteCWR)
	if s.Cwnd != 82 || s.SSThresh != 82 {
		t.Errorf("after CWR: cwnd=%d ssthresh=%d, want 82 82", s.Cwnd, s.SSThresh)
	}
	// A timeout sets ssthresh from the estimate and retakes RTT_min.
	s.Cwnd = 200
	w.CwndEvent(s, EventLoss)
	if s.SSThresh != 82 || !w.resetRTTMin {
		t.Errorf("after RTO: ssthresh=%d resetRTTMin=%v", s.SSThresh, w.resetRTTMin)
	}
	w.PktsAcked(s, AckSample{PktsAcked: 1, RTT: 300 * time.Millisecond})
	w.InAckEvent(s, 0, 0)
	if w.rttMin != 300*time.Millisecond {
		t.Errorf("RTT_min after reset = %v, want 300ms", w.rttMin)
	}
}

// TestWestwoodDupAcks: a duplicate ACK is credited with one MSS, and the
// cumulative ACK that follows only with what was not credited already.
func TestWestwoodDupAcks(t *testing.T) {
	w := &Westwood{}
	s := fakeSock(ProfileLinux)
	w.Init(s)
	w.InAckEvent(s, 0, 0) // anchor
	for i := 0; i < 3; i++ {
		w.InAckEvent(s, AckSlowPath|AckDupAck, 0)
	}
	if w.bk != 3*1448 || w.accounted != 3*1448 {
		t.Fatalf("after 3 dupACKs: bk=%d accounted=%d", w.bk, w.accounted)
	}
	s.SndUna += 5 * 1448 // the retransmission fills the hole
	w.InAckEvent(s, AckSlowPath, 0)
	if w.bk != 5*1448 || w.accounted != 0 {
		t.Errorf("after the cumulative ACK: bk=%d accounted=%d, want %d 0", w.bk, w.accounted, 5*1448)
	}
}

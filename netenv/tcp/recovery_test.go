package tcp

import (
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv/sim"
)

// recoveryHarness drives one Reno sender by hand: the test is the network
// and the receiver, deciding which ACK arrives when.
type recoveryHarness struct {
	t    *testing.T
	sim  *sim.Sim
	snd  *Sender
	sent []sentSeg // every data segment sent, in order
}

type sentSeg struct {
	seg   int // segment number: seq / MSS
	at    time.Duration
	tsval time.Duration
	retx  bool
}

func newRecoveryHarness(t *testing.T, sack bool) *recoveryHarness {
	t.Helper()
	h := &recoveryHarness{t: t, sim: sim.New(nil, sim.Limits{MaxEvents: 1_000_000})}
	a, err := ccai.New("reno")
	if err != nil {
		t.Fatal(err)
	}
	h.snd = NewSender(h.sim, SenderConfig{Flow: 1, Node: 1, Peer: 2, Bytes: 1000 * DefaultMSS, SACK: sack,
		Algorithm: a, Out: h})
	h.snd.Start()
	return h
}

// Send implements Output.
func (h *recoveryHarness) Send(p *sim.Packet) {
	if !p.IsAck && p.Len > 0 {
		h.sent = append(h.sent, sentSeg{seg: int(p.Seq / DefaultMSS), at: h.sim.Now(), tsval: p.TSVal, retx: p.Retx})
	}
	h.sim.FreePacket(p)
}

// lastTSVal is the timestamp of segment seg's last transmission.
func (h *recoveryHarness) lastTSVal(seg int) time.Duration {
	for i := len(h.sent) - 1; i >= 0; i-- {
		if h.sent[i].seg == seg {
			return h.sent[i].tsval
		}
	}
	h.t.Fatalf("segment %d never sent", seg)
	return 0
}

// ack delivers at time at an ACK of every segment below cum, SACKing the
// segments in sacked (each a block of one segment), echoing the timestamp
// of segment echo's last transmission (RFC 7323 §4.3).
func (h *recoveryHarness) ack(at time.Duration, cum, echo int, sacked ...int) {
	h.t.Helper()
	h.sim.RunUntil(at)
	p := h.sim.NewPacket()
	p.Flow, p.Src, p.Dst, p.IsAck = 1, 2, 1, true
	p.Ack = uint64(cum) * DefaultMSS
	p.SentAt = at
	p.TSEcr = h.lastTSVal(echo)
	// RFC 2018 §4: the most recent blocks first, at most three with
	// timestamps.
	for i := len(sacked) - 1; i >= 0 && int(p.NSACK) < 3; i-- {
		p.SACK[p.NSACK] = sim.SACKBlock{Start: uint64(sacked[i]) * DefaultMSS, End: uint64(sacked[i]+1) * DefaultMSS}
		p.NSACK++
	}
	p.Arrival.Handler = h.snd
	p.Arrival.Node = 1
	h.sim.ScheduleAt(&p.Arrival, at)
	h.sim.RunUntil(at)
}

// retransmissions lists the segments retransmitted so far.
func (h *recoveryHarness) retransmissions() []int {
	var out []int
	for _, s := range h.sent {
		if s.retx {
			out = append(out, s.seg)
		}
	}
	return out
}

// TestFastRetransmit: the third duplicate ACK (RFC 5681 §3.2), or with
// SACK the third segment SACKed above a hole (RFC 6675 §5, DupThresh),
// retransmits the hole at once and enters fast recovery with ssthresh =
// max(FlightSize/2, 2); fewer leave the sender in Disorder without a
// retransmission (RFC 5681 §3.2 steps 1–2).
func TestFastRetransmit(t *testing.T) {
	tests := []struct {
		name      string
		sack      bool
		dupacks   int
		wantState ccai.CAState
	}{
		{"one dupack", false, 1, ccai.StateDisorder},
		{"two dupacks", false, 2, ccai.StateDisorder},
		{"three dupacks", false, 3, ccai.StateRecovery},
		{"SACK: two above the hole", true, 2, ccai.StateDisorder},
		{"SACK: three above the hole", true, 3, ccai.StateRecovery},
	}
	const rtt = 100 * time.Millisecond
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newRecoveryHarness(t, tc.sack)
			h.ack(rtt, 1, 0) // segment 0 arrives; segment 1 is lost
			flight := h.snd.Sock().InFlight()
			var sacked []int
			for i := 0; i < tc.dupacks; i++ {
				sacked = append(sacked, 2+i)
				var blocks []int
				if tc.sack {
					blocks = sacked
				}
				h.ack(rtt+time.Duration(i+1)*time.Millisecond, 1, 2+i, blocks...)
			}
			sk := h.snd.Sock()
			if sk.CAState != tc.wantState {
				t.Fatalf("ca_state %v, want %v", sk.CAState, tc.wantState)
			}
			retx := h.retransmissions()
			if tc.wantState != ccai.StateRecovery {
				if len(retx) != 0 {
					t.Fatalf("retransmitted %v before DupThresh", retx)
				}
				return
			}
			if len(retx) != 1 || retx[0] != 1 {
				t.Fatalf("retransmitted %v, want the hole, segment 1, once", retx)
			}
			if want := max(flight/2, 2); sk.SSThresh != want {
				t.Errorf("ssthresh %d, want max(FlightSize %d / 2, 2) = %d (RFC 5681 eq. 4)", sk.SSThresh, flight, want)
			}
			if got := h.snd.Stats().Recoveries; got != 1 {
				t.Errorf("%d recoveries, want 1", got)
			}
		})
	}
}

// TestPRR: during fast recovery, while the pipe is above ssthresh, the
// sender sends prr_out = ⌈prr_delivered·ssthresh/RecoverFS⌉ segments in
// all (RFC 6937 §3.1, proportional part; Linux's RecoverFS is the cwnd at
// the loss, prior_cwnd), the fast retransmit counting as the first; and
// when recovery ends, cwnd is set to ssthresh (§3.1, on exiting recovery),
// from which the same ACK's congestion avoidance may grow it by at most
// one packet per ssthresh newly delivered (RFC 5681 §3.1).
func TestPRR(t *testing.T) {
	const rtt = 100 * time.Millisecond
	for _, sackedAfter := range []int{1, 3, 5} {
		h := newRecoveryHarness(t, true)
		h.ack(rtt, 1, 0) // segment 0 arrives; segment 1 is lost
		sacked := []int{2, 3}
		h.ack(rtt+1*time.Millisecond, 1, 2, sacked...)
		h.ack(rtt+2*time.Millisecond, 1, 3, sacked...)
		sentBefore := len(h.sent)
		sacked = append(sacked, 4)
		h.ack(rtt+3*time.Millisecond, 1, 4, sacked...) // DupThresh: recovery
		sk := h.snd.Sock()
		if sk.CAState != ccai.StateRecovery {
			t.Fatalf("ca_state %v, want recovery", sk.CAState)
		}
		ssthresh, recoverFS := uint64(sk.SSThresh), uint64(sk.PriorCwnd)
		delivered := uint64(1)
		for i := 0; i < sackedAfter; i++ {
			next := sacked[len(sacked)-1] + 1
			sacked = append(sacked, next)
			h.ack(rtt+time.Duration(4+i)*time.Millisecond, 1, next, sacked...)
			delivered++
			if uint64(sk.InFlight()) <= ssthresh {
				t.Fatalf("%d SACKs: pipe %d reached ssthresh %d: the proportional part is over", i+1, sk.InFlight(), ssthresh)
			}
		}
		want := max((delivered*ssthresh+recoverFS-1)/recoverFS, 1)
		if got := uint64(len(h.sent) - sentBefore); got != want {
			t.Errorf("%d segments delivered in recovery (ssthresh %d, RecoverFS %d): prr_out %d, want %d",
				delivered, ssthresh, recoverFS, got, want)
		}
		// The retransmission arrives: everything sent is acknowledged.
		highest := 0
		for _, s := range h.sent {
			highest = max(highest, s.seg)
		}
		newly := uint64(highest + 1 - 1 - len(sacked))
		h.ack(2*rtt, highest+1, 1)
		if limit := ssthresh + newly/ssthresh + 1; sk.CAState != ccai.StateOpen || uint64(sk.Cwnd) < ssthresh || uint64(sk.Cwnd) > limit {
			t.Errorf("after recovery: ca_state %v cwnd %d, want open and cwnd in [ssthresh %d, %d]", sk.CAState, sk.Cwnd, ssthresh, limit)
		}
	}
}

// TestRTOBackoff: with no ACK, the retransmission timer fires after the
// initial RTO and then after twice the previous timeout each time (RFC
// 6298 §5.5), up to MaxRTO; each timeout retransmits the first
// unacknowledged segment, sets cwnd to one segment (RFC 5681 §3.1, eq. 5)
// and ca_state to Loss, and an ACK of new data clears the backoff (Linux;
// RFC 6298 §5.7 lets the RTO be recomputed from the new sample).
func TestRTOBackoff(t *testing.T) {
	h := newRecoveryHarness(t, true)
	var fired []time.Duration
	end := time.Duration(0)
	for timeouts := 1; timeouts <= 9; timeouts++ {
		end += min(InitialRTO<<(timeouts-1), MaxRTO)
	}
	h.sim.RunUntil(end)
	for _, s := range h.sent {
		if s.retx {
			if s.seg != 0 {
				t.Fatalf("timeout retransmitted segment %d, want the first unacknowledged, 0", s.seg)
			}
			fired = append(fired, s.at)
		}
	}
	if len(fired) != 9 {
		t.Fatalf("%d timeouts by %v, want 9 (at %v)", len(fired), end, fired)
	}
	prev := time.Duration(0)
	for i, at := range fired {
		want := min(InitialRTO<<i, MaxRTO)
		if got := at - prev; got != want {
			t.Errorf("timeout %d came %v after the previous, want %v", i+1, got, want)
		}
		prev = at
	}
	sk := h.snd.Sock()
	if sk.Cwnd != 1 || sk.CAState != ccai.StateLoss || h.snd.Backoff() != 9 {
		t.Errorf("after 9 timeouts: cwnd %d ca_state %v backoff %d, want 1 loss 9", sk.Cwnd, sk.CAState, h.snd.Backoff())
	}
	if got := h.snd.Stats().Timeouts; got != 9 {
		t.Errorf("%d timeouts counted, want 9", got)
	}
	h.ack(end+time.Millisecond, 1, 0)
	if h.snd.Backoff() != 0 {
		t.Errorf("backoff %d after an ACK of new data, want 0", h.snd.Backoff())
	}
}

// TestUndoRecovery: a fast retransmit found spurious by timestamps (the
// ACK ending recovery echoes the original transmission, older than the
// retransmission: RFC 3522 §2, Linux's tcp_packet_delayed) is undone, cwnd
// and ssthresh restored (Linux's tcp_undo_cwnd_reduction); one that echoes
// the retransmission is not.
func TestUndoRecovery(t *testing.T) {
	const rtt = 100 * time.Millisecond
	tests := []struct {
		name       string
		echoRetx   bool
		wantUndone bool
	}{
		{"the original arrived: spurious, undone", false, true},
		{"the retransmission arrived: kept", true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newRecoveryHarness(t, true)
			h.ack(rtt, 1, 0)
			originalTS := h.lastTSVal(1)
			sacked := []int{}
			for i := 0; i < 3; i++ {
				sacked = append(sacked, 2+i)
				h.ack(rtt+time.Duration(i+1)*time.Millisecond, 1, 2+i, sacked...)
			}
			sk := h.snd.Sock()
			priorCwnd, ssthresh := sk.PriorCwnd, sk.SSThresh
			if sk.CAState != ccai.StateRecovery {
				t.Fatalf("ca_state %v, want recovery", sk.CAState)
			}
			highest := 0
			for _, s := range h.sent {
				highest = max(highest, s.seg)
			}
			at := rtt + 10*time.Millisecond
			h.sim.RunUntil(at)
			p := h.sim.NewPacket()
			p.Flow, p.Src, p.Dst, p.IsAck = 1, 2, 1, true
			p.Ack = uint64(highest+1) * DefaultMSS
			p.TSEcr = originalTS
			if tc.echoRetx {
				p.TSEcr = h.lastTSVal(1)
			}
			p.Arrival.Handler, p.Arrival.Node = h.snd, 1
			h.sim.ScheduleAt(&p.Arrival, at)
			h.sim.RunUntil(at)
			undone := h.snd.Stats().Undos == 1
			if undone != tc.wantUndone {
				t.Fatalf("undos %d, want undone %v", h.snd.Stats().Undos, tc.wantUndone)
			}
			if tc.wantUndone && sk.Cwnd < priorCwnd {
				t.Errorf("undone: cwnd %d, want at least the cwnd before recovery, %d (tcp_reno_undo_cwnd)", sk.Cwnd, priorCwnd)
			}
			if !tc.wantUndone && (sk.SSThresh != ssthresh || sk.Cwnd >= priorCwnd) {
				t.Errorf("kept: ssthresh %d cwnd %d, want the reduction's ssthresh %d and cwnd below %d", sk.SSThresh, sk.Cwnd, ssthresh, priorCwnd)
			}
			if sk.CAState != ccai.StateOpen {
				t.Errorf("ca_state %v after recovery, want open", sk.CAState)
			}
		})
	}
}

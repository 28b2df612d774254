package gvisor

// records.go holds the state records: what an ACK, a sender timer or a
// write changed, read from the probe's snapshot or TCP_INFO, and emitted.

import (
	"gvisor.dev/gvisor/pkg/tcpip"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

// afterSenderTimer records what a sender timer changed: an RTO (the
// stack's timeout counter moved) or another change of ca_state, cwnd or
// ssthresh.
func (h *harness) afterSenderTimer() {
	t := h.snd.st.Stats().TCP.Timeouts.Value()
	fired := t > h.timeouts
	h.timeouts = t
	for _, f := range h.flows {
		if !f.established || f.done || f.aborted {
			continue
		}
		info := f.info()
		f.peek(&info)
		f.lastCC = caState(info.CcState)
		st := effectiveState(f.lastCC, &f.last)
		rto := fired && (len(h.flows) == 1 || info.RTO > f.rec.RTO)
		// One record per change: the state record of a new ca_state
		// (and an rto record after it), or one for cwnd or ssthresh
		// alone. (moved is taken before emitInfo moves the record:
		// testing f.rec.CAState after it emitted every timer-entered
		// recovery twice.)
		moved := st != f.rec.CAState
		changed := moved || clampWindow(int(info.SndCwnd)) != f.rec.Cwnd ||
			clampWindow(int(info.SndSsthresh)) != f.rec.SSThresh
		if moved {
			f.emitInfo(observe.ReasonState, &info)
		}
		if rto {
			f.stRTO++
			f.emitInfo(observe.ReasonRTO, &info)
		} else if changed && !moved {
			f.emitInfo(observe.ReasonState, &info)
		}
	}
}

// afterWrite records what a write of a rate-limited application changed:
// gVisor's sendData, run by the write, restarts an idle connection's cwnd
// at the initial window (RFC 5681 §4.1, snd.go sendData: no segment sent
// for an RTO). No probe runs then, and without a record the next ACK's
// record showed the window grow from the old one (an unlimited
// application writes on every ACK and never idles).
func (f *flow) afterWrite() {
	info := f.info()
	if effectiveState(caState(info.CcState), &f.last) == f.rec.CAState && clampWindow(int(info.SndCwnd)) == f.rec.Cwnd &&
		clampWindow(int(info.SndSsthresh)) == f.rec.SSThresh {
		return
	}
	f.peek(&info)
	f.emitInfo(observe.ReasonState, &info)
}

// onAck records the state after gVisor processed one ACK: the probe's
// snapshot, with ca_state from TCP_INFO (the probe does not carry it).
func (f *flow) onAck(s *snapshot) {
	if f.h.hooks.afterAck != nil {
		f.h.hooks.afterAck(f, s)
	}
	info := f.info()
	prev, hadSnap := f.last, f.hasSnap
	f.last, f.hasSnap = *s, true
	if f.lastUna.LessThan(s.una) {
		f.acked += uint64(uint32(s.una - f.lastUna))
		f.lastUna = s.una
	}
	cc := caState(info.CcState)
	st := effectiveState(cc, s)
	// A TLP episode on this ACK: gVisor's CcState turned to a recovery
	// that is not active, or, in one, ssthresh was reduced again.
	tlp := cc == ccai.StateRecovery && !s.recovering &&
		(f.lastCC != ccai.StateRecovery || hadSnap && s.ssthresh != prev.ssthresh)
	f.lastCC = cc
	r := &f.rec
	switch {
	case r.CAState == ccai.StateRecovery && (st == ccai.StateOpen || st == ccai.StateDisorder),
		hadSnap && st == ccai.StateRecovery && (r.CAState == ccai.StateRecovery || r.CAState == ccai.StateLoss) &&
			prev.recLast.LessThan(s.una):
		f.passOpen(s)
	}
	if tlp {
		f.tlpEpisode(s)
	}
	reason := observe.ReasonAck
	if f.hasRec && st != r.CAState {
		reason = observe.ReasonState
	}
	f.transition(st)
	r.Cwnd = clampWindow(s.cwnd)
	r.SSThresh = clampWindow(s.ssthresh)
	r.SRTT, r.RTTVar, r.RTO = s.srtt, s.rttvar, s.rto
	r.InFlight = f.inFlight(s, st)
	f.emit(reason)
	if f.acked >= f.bytes {
		f.done = true
		f.doneAt = f.h.sim.Now()
		f.h.sim.Cancel(f.appEv)
		f.h.flowDone()
	}
}

// peek refreshes the flow's latest snapshot from the sender's state
// (peekSender), so that records a timer causes carry in-flight and the
// CCA's variables as they are now, not as of the last ACK.
func (f *flow) peek(info *tcpip.TCPInfoOption) {
	snd, cubic, isCubic, ok := peekSender(f.ep)
	if !ok {
		return
	}
	s := snapshot{
		port: f.port, una: snd.SndUna, nxt: snd.SndNxt, recovering: snd.FastRecovery.Active, recLast: snd.FastRecovery.Last,
		cwnd: snd.SndCwnd, ssthresh: snd.Ssthresh,
		srtt: info.RTT, rttvar: info.RTTVar, rto: snd.RTO,
		outstanding: snd.Outstanding, sackedOut: snd.SackedOut, mss: snd.MaxPayloadSize,
	}
	if isCubic {
		s.cubic = cubicVars{
			wMax: cubic.WMax, wLastMax: cubic.WLastMax, k: cubic.K, c: cubic.C,
			wc: cubic.WC, wEst: cubic.WEst,
			sinceEpoch: f.h.snd.clk.NowMonotonic().Sub(cubic.T),
		}
	}
	f.last, f.hasSnap = s, true
	f.rec.InFlight = f.inFlight(&s, effectiveState(caState(info.CcState), &s))
}

// inFlight is the packets in flight as Linux counts them
// (tcp_packets_in_flight: packets_out − sacked_out − lost_out +
// retrans_out), from gVisor's state in state st.
//
// In gVisor's fast or SACK recovery and in RTO recovery it is gVisor's own
// Outstanding: RFC 6675's pipe, which SetPipe recomputes on every ACK of
// a recovery (pkg/tcpip/transport/tcp/snd.go SetPipe), and after a
// timeout the segments sent since (retransmitTimerExpired sets it to 0:
// everything outstanding is taken as lost, as Linux's tcp_enter_loss marks
// it). Elsewhere gVisor marks nothing lost, and in_flight is the segments
// sent and not cumulatively acknowledged less those SACKed, from the
// sequence numbers and the harness's own SACK scoreboard (ackBoard):
// gVisor's Outstanding there still holds SACKed segments, and segments
// SACKed outside a recovery stay in it after their cumulative ACK
// (handleRcvdSegment takes a SACKed segment off SackedOut, not off
// Outstanding; only SetPipe, in a recovery, and an ACK of everything
// recompute it), and SackedOut is no count of SACKed segments (see
// ackBoard): Outstanding − SackedOut, used before, double-counted SACKs in
// recovery and could exceed what was sent.
func (f *flow) inFlight(s *snapshot, st ccai.CAState) uint32 {
	if s.recovering || st == ccai.StateLoss {
		return uint32(max(s.outstanding, 0))
	}
	mss := uint64(max(s.mss, 1))
	out := uint64(s.una.Size(s.nxt))
	if s.una.LessThan(s.nxt) && f.board.sbytes < out {
		return uint32((out - f.board.sbytes + mss - 1) / mss)
	}
	return 0
}

// emitInfo records the state read from TCP_INFO, with in-flight and the
// CCA's variables from the latest snapshot.
func (f *flow) emitInfo(reason observe.Reason, info *tcpip.TCPInfoOption) {
	r := &f.rec
	f.transition(effectiveState(caState(info.CcState), &f.last))
	r.Cwnd = clampWindow(int(info.SndCwnd))
	r.SSThresh = clampWindow(int(info.SndSsthresh))
	r.SRTT, r.RTTVar, r.RTO = info.RTT, info.RTTVar, info.RTO
	f.emit(reason)
}

// transition moves the record to ca_state st (observe.Record's
// ObserveTransition), counting recoveries. Where ObserveTransition sets
// prior_cwnd (entering recovery, or loss from open or disorder), a CUBIC
// flow's is the cwnd gVisor reduced from: WLastMax, which
// HandleLossDetected and HandleRTOExpired set to SndCwnd (cubic.go
// fastConvergence). The last recorded cwnd may be lower: gVisor grows
// cwnd on a cumulative ACK (cc.Update) before RACK detects a loss on the
// same ACK (snd.go handleRcvdSegment), and CUBIC's growth on one ACK can
// be several segments.
func (f *flow) transition(st ccai.CAState) {
	from := f.rec.CAState
	if !f.rec.ObserveTransition(st, !f.hasRec) {
		return
	}
	if st == ccai.StateRecovery {
		f.stRecover++
	}
	sets := st == ccai.StateRecovery || st == ccai.StateLoss && (from == ccai.StateOpen || from == ccai.StateDisorder)
	if sets && f.vars != nil && f.hasSnap && f.last.cubic.wLastMax >= 1 {
		f.rec.PriorCwnd = clampFloatWindow(f.last.cubic.wLastMax)
	}
}

func (f *flow) emit(reason observe.Reason) { f.emitRecord(reason, true) }

// emitKeepVars emits a record whose CCA variables stay as last recorded.
func (f *flow) emitKeepVars(reason observe.Reason) { f.emitRecord(reason, false) }

func (f *flow) emitRecord(reason observe.Reason, vars bool) {
	r := &f.rec
	r.Time = f.h.sim.Now()
	r.Reason = reason
	if f.hasSnap {
		r.Delivered = f.board.delivered
		if f.vars != nil && vars {
			f.last.cubic.fill(f.vars, r.SRTT, f.last.cubic.grows(&f.last, r))
		}
	}
	f.hasRec = true
	if f.h.obs != nil {
		f.h.obs.Observe(r)
	}
}

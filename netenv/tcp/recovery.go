package tcp

import (
	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv/sim"
)

// setState changes ca_state, telling the algorithm first (Linux's
// tcp_set_ca_state) and recording the change with the values of that
// moment: a condition on the transition (prev.ca_state, the window an undo
// restored) sees it before the ACK's window growth, which endAck records
// next.
func (s *Sender) setState(st ccai.CAState) {
	if st == s.sock.CAState {
		return
	}
	s.ca.SetState(&s.sock, st)
	s.rec.PrevCAState = s.sock.CAState
	s.sock.CAState = st
	if s.inRTO {
		return // onRTO's one record shows the transition
	}
	s.emit(ReasonState)
}

// recoveryOnAck is the loss-recovery state machine run on every ACK
// (Linux's tcp_fastretrans_alert, reduced to what RFC 5681, 6582, 6675,
// 6937, 2883 and 3522 specify plus Linux's documented undo behaviour).
func (s *Sender) recoveryOnAck(p *sim.Packet, a *ackInfo, ackedSacked, priorInFlight uint32) {
	st := s.sock.CAState
	if s.sock.PacketsOut == 0 && !s.cfg.SACK {
		s.sock.SackedOut = 0
	}
	// D-SACKs proved every retransmission of the episode spurious: undo
	// and reopen (Linux's tcp_try_undo_dsack then tcp_try_to_open), so
	// that PRR does not keep running against the restored ssthresh.
	if a.dsack && s.undoValid && s.undoRetrans == 0 && st != ccai.StateOpen {
		s.undo(st == ccai.StateLoss)
		if st != ccai.StateCWR {
			s.setState(s.openOrDisorder())
		}
		return
	}
	fastRexmit := false
	switch st {
	case ccai.StateRecovery:
		if s.sndUna >= s.highSeq && a.unaAdvanced {
			if s.renoLimbo && s.sndUna > s.highSeq || !s.renoLimbo {
				if s.tryUndoRecovery(p) {
					return
				}
				s.endReduction()
				s.setState(ccai.StateOpen)
				return
			}
		}
		if a.unaAdvanced && s.sndUna < s.highSeq {
			// Partial ACK (RFC 6582 §3.2 step 3): with timestamps,
			// a delayed original undoes; otherwise NewReno
			// retransmits the next hole.
			if s.packetDelayed(p) && s.sock.RetransOut == 0 {
				s.undo(true)
				s.setState(s.openOrDisorder())
				return
			}
			if !s.cfg.SACK {
				s.markHeadLost()
			}
		}
	case ccai.StateLoss:
		if s.processLoss(p, a) {
			return
		}
	case ccai.StateCWR:
		// CWR is held until something above high_seq is acked, so that
		// the CWR flag reached the receiver (Linux's
		// tcp_fastretrans_alert).
		switch {
		case s.sndUna > s.highSeq:
			s.endReduction()
			s.setState(ccai.StateOpen)
		case !s.timeToRecover():
			if s.cc == nil && !a.old {
				s.prrReduce(ackedSacked, false, s.prrSSExtra(a))
			}
			return
		default:
			// Losses during CWR: fast recovery takes over.
			s.enterRecovery()
			fastRexmit = true
		}
	default: // Open, Disorder
		if !s.timeToRecover() {
			if a.ece {
				// RFC 3168 §6.1.2: reduce once per window on ECE
				// (Linux's tcp_try_to_open → tcp_enter_cwr).
				s.enterCWR()
				if s.cc == nil {
					s.prrReduce(ackedSacked, false, s.prrSSExtra(a))
				}
				return
			}
			s.setState(s.openOrDisorder())
			return
		}
		s.enterRecovery()
		fastRexmit = true
	}
	if s.sock.CAState == ccai.StateRecovery {
		s.markLost(fastRexmit)
		if s.cc == nil && !a.old {
			s.prrReduce(ackedSacked, fastRexmit, s.prrSSExtra(a))
		}
	} else if s.sock.CAState == ccai.StateLoss && s.cfg.SACK {
		s.markLost(false)
	}
}

func (s *Sender) openOrDisorder() ccai.CAState {
	if s.sock.SackedOut+s.sock.LostOut > 0 || s.sock.RetransOut > 0 {
		return ccai.StateDisorder
	}
	return ccai.StateOpen
}

// timeToRecover: DupThresh duplicate ACKs or SACKed packets (RFC 5681 §3.2,
// RFC 6675 §5), or segments already marked lost.
func (s *Sender) timeToRecover() bool {
	return s.sock.LostOut > 0 || s.sock.SackedOut >= dupThresh
}

// initUndo starts an undo episode (Linux's tcp_init_undo).
//
// ProfileLinux starts undo_retrans at −1 so that an episode in which no
// retransmission went out cannot look "all retransmissions were spurious"
// (commit 6e08d5e3c823 "tcp: fix false undo corner cases", 3.16).
// ProfileLinux310 starts it at retrans_out, as 3.10 did.
func (s *Sender) initUndo() {
	s.undoValid = true
	s.undoMarker = s.sndUna
	if s.cfg.Profile == ccai.ProfileLinux310 {
		s.undoRetrans = int32(s.sock.RetransOut)
	} else {
		s.undoRetrans = -1
	}
	s.retransStamp = 0
}

// enterRecovery starts fast recovery (RFC 5681 §3.2 step 4, RFC 6937).
func (s *Sender) enterRecovery() {
	s.stats.Recoveries++
	s.initUndo()
	s.sock.PriorSSThresh = s.currentSSThresh()
	s.sock.SSThresh = s.ca.SSThresh(&s.sock)
	s.sock.PriorCwnd = s.sock.Cwnd
	s.prrDelivered = 0
	s.prrOut = 0
	s.highSeq = s.sndNxt
	s.renoLimbo = false
	s.setState(ccai.StateRecovery)
}

// markLost marks segments lost. With SACK, a hole is lost once DupThresh
// segments above it are SACKed (RFC 6675 §4 IsLost). Without SACK only the
// head is presumed lost (RFC 6582).
func (s *Sender) markLost(fastRexmit bool) {
	if !s.cfg.SACK {
		if fastRexmit {
			s.markHeadLost()
		}
		return
	}
	// Every hole below the DupThresh-th highest SACKed segment is lost.
	// Holes below the high-water mark were judged by an earlier ACK and
	// nothing since can have made them markable again (only undo and RTO
	// clear the lost flag, and they reset the mark), so marking resumes
	// where it stopped, like Linux's lost_skb_hint: O(newly lost) per ACK.
	limit := s.q.lossLimit()
	if limit < 0 {
		if fastRexmit {
			s.markHeadLost()
		}
		return
	}
	from := 0
	if s.lostMark > s.q.first {
		from = int(s.lostMark - s.q.first)
	}
	for i := from; i < limit; i++ {
		seg := s.q.at(i)
		if seg.flags&(segSacked|segLost|segRetrans) == 0 {
			seg.flags |= segLost
			s.sock.LostOut++
			s.lost++
			s.lostHint = min(s.lostHint, i)
		}
	}
	s.lostMark = max(s.lostMark, s.q.first+uint64(limit))
	if fastRexmit && s.sock.LostOut == 0 {
		s.markHeadLost()
	}
}

func (s *Sender) markHeadLost() {
	if s.q.len() == 0 {
		return
	}
	seg := s.q.at(0)
	if seg.flags&(segSacked|segLost) == 0 {
		if seg.flags&segRetrans != 0 {
			// Its retransmission was lost too.
			seg.flags &^= segRetrans
			s.sock.RetransOut--
		}
		seg.flags |= segLost
		s.sock.LostOut++
		s.lost++
		s.lostHint = 0
	}
}

// prrReduce sets cwnd by Proportional Rate Reduction (RFC 6937 §3, with
// PRR-SSRB below ssthresh). The window is in-flight plus the send quota,
// in uint32 as in Linux.
//
// ssExtra: PRR-SSRB's one segment above what was delivered (prrSSExtra).
func (s *Sender) prrReduce(newlyAckedSacked uint32, fastRexmit, ssExtra bool) {
	if newlyAckedSacked == 0 && !fastRexmit {
		return
	}
	s.prrDelivered += newlyAckedSacked
	inFlight := s.sock.InFlight()
	var sndcnt int64
	ssthresh := int64(s.sock.SSThresh)
	if delta := ssthresh - int64(inFlight); delta < 0 {
		if s.sock.PriorCwnd == 0 {
			return
		}
		dividend := int64(s.sock.SSThresh)*int64(s.prrDelivered) + int64(s.sock.PriorCwnd) - 1
		sndcnt = dividend/int64(s.sock.PriorCwnd) - int64(s.prrOut)
	} else {
		sndcnt = max(int64(s.prrDelivered)-int64(s.prrOut), int64(newlyAckedSacked))
		if ssExtra {
			sndcnt++
		}
		sndcnt = min(delta, sndcnt)
	}
	if sndcnt < 0 {
		sndcnt = 0
	}
	if fastRexmit && sndcnt < 1 {
		sndcnt = 1
	}
	s.sock.Cwnd = inFlight + uint32(sndcnt)
}

// endReduction completes a reduction: cwnd falls to ssthresh (RFC 6937
// §3, Linux's tcp_end_cwnd_reduction).
//
// A reduction that was undone keeps the undone window: the reset applies
// only in CWR or while the undo marker is still set (Linux's
// tcp_end_cwnd_reduction, and 3.10's tcp_complete_cwr).
func (s *Sender) endReduction() {
	if s.sock.SSThresh < ccai.InfiniteSSThresh && s.cc == nil && (s.undoValid || s.sock.CAState == ccai.StateCWR) {
		s.sock.Cwnd = s.sock.SSThresh
	}
	s.ca.CwndEvent(&s.sock, ccai.EventCompleteCWR)
}

// packetDelayed: the ACK echoes a timestamp older than the episode's first
// retransmission, so an original transmission arrived (RFC 3522 §3.2).
func (s *Sender) packetDelayed(p *sim.Packet) bool {
	return s.undoValid && s.retransStamp != 0 && p.TSEcr != 0 && p.TSEcr < s.retransStamp
}

func (s *Sender) mayUndo(p *sim.Packet) bool {
	return s.undoValid && (s.undoRetrans == 0 || s.packetDelayed(p))
}

// processLoss handles an ACK in Loss (Linux's tcp_process_loss): F-RTO
// (RFC 5682 §3, SACK-enhanced, Linux's default tcp_frto=2) first, then
// the end of loss recovery, then undo. It reports whether the ACK is done.
func (s *Sender) processLoss(p *sim.Packet, a *ackInfo) bool {
	recovered := s.sndUna >= s.highSeq
	// Since Linux 5.1 (commit da34ac7626b5, "tcp: only undo on partial
	// ACKs in CA_Loss") D-SACK or timestamp evidence undoes a timeout
	// only on an ACK that advances snd_una, and before F-RTO: a
	// duplicate ACK echoing an original's timestamp no longer does, so a
	// path that keeps delivering old duplicates cannot undo every RTO
	// and stall the flow with its backoff reset each time. 3.10 tried
	// the undo on every ACK, after F-RTO (below).
	modern := s.cfg.Profile != ccai.ProfileLinux310
	if modern && a.unaAdvanced && s.tryUndoLoss(p, false) {
		return true
	}
	if s.frto {
		if a.origAcked {
			// Step 3.b: never-retransmitted data was delivered, so not
			// everything was lost: the timeout was spurious.
			s.tryUndoLoss(p, true)
			return true
		}
		switch {
		case s.sndNxt > s.highSeq && (a.newlySacked > 0 || a.dupAck):
			s.frto = false // step 3.a: the loss was real
		case a.unaAdvanced && !recovered:
			// Step 2.b: send new data instead of retransmitting, and
			// judge the timeout by the next ACK.
			s.highSeq = s.sndNxt
			s.frtoNewData = true
			s.output()
			s.frtoNewData = false
			if s.sndNxt > s.highSeq {
				return true
			}
			s.frto = false
		}
	}
	if recovered {
		s.backoff = 0
		if !s.tryUndoRecovery(p) {
			s.setState(s.openOrDisorder())
		}
		return true
	}
	if !modern && s.tryUndoLoss(p, false) {
		return true
	}
	if !s.cfg.SACK && a.unaAdvanced {
		s.markHeadLost()
	}
	return false
}

// tryUndoLoss undoes a timeout found spurious, by F-RTO or by D-SACKs or
// timestamps (Linux's tcp_try_undo_loss). An F-RTO undo does not need the
// undo marker: in ProfileLinux310, where a cumulative ACK without SACK
// counts as F-RTO evidence, this is what lets a second undo run after a
// first one restored ssthresh to infinity (ACT paper §4.3).
func (s *Sender) tryUndoLoss(p *sim.Packet, frtoUndo bool) bool {
	if !frtoUndo && !s.mayUndo(p) {
		return false
	}
	s.undo(true)
	s.backoff = 0
	if frtoUndo || s.cfg.SACK {
		s.setState(s.openOrDisorder())
	}
	return true
}

// tryUndoRecovery runs at the end of fast recovery. Without SACK, a
// sender whose recovery ends exactly at the recovery point holds Recovery
// until something above it is acknowledged, to avoid a false fast
// retransmit (RFC 6582 §3.2 step 5 and §4.1).
func (s *Sender) tryUndoRecovery(p *sim.Packet) bool {
	if s.mayUndo(p) {
		s.undo(false)
		if !s.cfg.SACK && s.sndUna == s.highSeq {
			s.renoLimbo = true
			if s.cfg.Profile == ccai.ProfileLinux310 {
				// 3.10 moderated cwnd on this path (tcp_moderate_cwnd).
				s.sock.Cwnd = min(s.sock.Cwnd, s.sock.InFlight()+dupThresh)
			}
			return true
		}
		s.setState(ccai.StateOpen)
		return true
	}
	if !s.cfg.SACK && s.sndUna == s.highSeq && !s.renoLimbo {
		s.renoLimbo = true
		return true
	}
	return false
}

// undo reverts a reduction found spurious (Linux's
// tcp_undo_cwnd_reduction): the algorithm's undo_cwnd restores cwnd and a
// saved larger ssthresh comes back.
func (s *Sender) undo(unmarkLoss bool) {
	s.stats.Undos++
	if unmarkLoss {
		for i := 0; i < s.q.len(); i++ {
			s.q.at(i).flags &^= segLost
		}
		s.sock.LostOut = 0
		s.lostMark = 0 // every hole is to be judged again
	}
	// prior_ssthresh is not cleared by an undo, in either kernel.
	if s.sock.PriorSSThresh > 0 {
		s.sock.Cwnd = s.ca.UndoCwnd(&s.sock)
		if s.sock.PriorSSThresh > s.sock.SSThresh {
			s.sock.SSThresh = s.sock.PriorSSThresh
		}
	} else {
		s.sock.Cwnd = max(s.sock.Cwnd, s.sock.SSThresh)
	}
	s.undoValid = false
}

// onRTO handles a retransmission timeout (RFC 6298 §5.4–5.7, RFC 5681
// eq. 4, Linux's tcp_enter_loss).
func (s *Sender) onRTO() {
	if s.sock.PacketsOut == 0 || s.stats.Done {
		return
	}
	s.stats.Timeouts++
	st := s.sock.CAState
	// F-RTO runs on a timeout that starts a new recovery, or a repeated
	// one (Linux's tcp_enter_loss).
	s.frto = st < ccai.StateRecovery || s.backoff > 0
	if st <= ccai.StateDisorder || s.highSeq <= s.sndUna || (st == ccai.StateLoss && s.backoff == 0) {
		s.sock.PriorSSThresh = s.currentSSThresh()
		s.sock.PriorCwnd = s.sock.Cwnd
		s.sock.SSThresh = s.ca.SSThresh(&s.sock)
		s.ca.CwndEvent(&s.sock, ccai.EventLoss)
		s.initUndo()
	}
	// Everything not SACKed is presumed lost; retransmissions in flight
	// are forgotten.
	s.sock.LostOut, s.sock.RetransOut = 0, 0
	if !s.cfg.SACK {
		s.sock.SackedOut = 0
	}
	for i := 0; i < s.q.len(); i++ {
		seg := s.q.at(i)
		seg.flags &^= segRetrans
		if !s.cfg.SACK {
			seg.flags &^= segSacked
		}
		if seg.flags&segSacked == 0 {
			seg.flags |= segLost
			s.sock.LostOut++
			s.lost++
		}
	}
	s.lostHint = 0
	s.lostMark = 0
	s.sock.Cwnd = 1
	s.sock.CwndCnt = 0
	s.highSeq = s.sndNxt
	s.renoLimbo = false
	s.backoff++
	// One record for the timeout and its transition to Loss: both
	// happen at once, and two records would show the same state twice.
	s.inRTO = true
	s.setState(ccai.StateLoss)
	s.inRTO = false
	s.emit(ReasonRTO)
	s.resetPace()
	s.output()
	s.armRTO()
}

// emit sends a state record to the observer.
func (s *Sender) emit(r Reason) {
	o := s.cfg.Observer
	if o == nil {
		return
	}
	s.records++
	rec := &s.rec
	rec.Time = s.sim.Now()
	rec.Reason = r
	rec.Cwnd = s.sock.Cwnd
	rec.SSThresh = s.sock.SSThresh
	rec.SRTT = s.rtt.srtt
	rec.RTTVar = s.rtt.rttvar()
	rec.RTO = s.RTO()
	rec.CAState = s.sock.CAState
	rec.PriorCwnd = s.sock.PriorCwnd
	rec.InFlight = s.sock.InFlight()
	rec.Delivered = s.sock.Delivered
	rec.PacingRate = s.sock.PacingRate
	if s.vexp != nil {
		s.vexp.ReadVars(&s.sock, s.vars)
	}
	o.Observe(rec)
}

// prrSSExtra reports whether PRR's slow-start reduction bound may send one
// segment more than was delivered. ProfileLinux allows it only on an ACK
// that advanced snd_una and marked nothing newly lost (tcp_cwnd_reduction
// since "tcp: PRR uses CRB mode by default and SS mode
// conditionally", 5.11: flag & FLAG_SND_UNA_ADVANCED && !newly_lost), so
// entering recovery on SACKs retransmits one segment, not two
// (fast_recovery/prr-ss-30pkt-lost-1_4-11_16.pkt). ProfileLinux310 always
// adds it, as RFC 6937's PRR-SSRB and 3.10's tcp_cwnd_reduction did.
func (s *Sender) prrSSExtra(a *ackInfo) bool {
	if s.cfg.Profile == ccai.ProfileLinux310 {
		return true
	}
	return a.unaAdvanced && s.lost == a.priorLost
}

package tcp

import (
	"time"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv/sim"
)

// ackInfo collects what one ACK did (Linux's FLAG_* bits and counters).
type ackInfo struct {
	ece          bool // ECN-Echo on a connection that negotiated ECN
	unaAdvanced  bool
	dupAck       bool
	dsack        bool
	newlyAcked   uint32 // cumulatively acknowledged packets
	newlySacked  uint32 // newly SACKed packets
	newlyLost    uint32
	priorLost    uint64 // Sender.lost when the ACK arrived
	old          bool   // below snd_una (onOldAck)
	retransAcked bool
	origAcked    bool          // never-retransmitted data was newly (S)ACKed (Linux's FLAG_ORIG_SACK_ACKED)
	seqRTT       time.Duration // RTT from the oldest never-retransmitted acked segment
	sackRTT      time.Duration // RTT from the oldest never-retransmitted newly SACKed segment
	caRTT        time.Duration // RTT from the newest such segment
	ackedBytes   uint32
	rs           ccai.RateSample
	rsPriorTime  time.Duration
	rsSendElapse time.Duration
	// rsSent, rsFirstSent: the instants rsSendElapse is the difference
	// of, for a RateTracker (abstime.go).
	rsSent, rsFirstSent time.Duration
}

// stampRate records the delivery state at transmission
// (draft-cheng-iccrg-delivery-rate-estimation §3.2).
func (s *Sender) stampRate(seg *segment) {
	seg.delivered = s.sock.Delivered
	seg.deliveredTime = s.sock.DeliveredTime
	seg.firstSentTime = s.firstSent
	if s.sock.AppLimited {
		seg.flags |= segAppLimited
	} else {
		seg.flags &^= segAppLimited
	}
}

// deliver accounts one newly delivered segment for rate sampling; the most
// recently sent delivered segment defines the sample.
func (s *Sender) deliver(seg *segment, a *ackInfo) {
	s.sock.Delivered++
	s.sock.DeliveredTime = s.sim.Now()
	if seg.delivered >= a.rs.PriorDelivered {
		a.rs.PriorDelivered = seg.delivered
		a.rsPriorTime = seg.deliveredTime
		a.rs.IsAppLimited = seg.flags&segAppLimited != 0
		a.rs.IsRetrans = seg.flags&segEverRetx != 0
		a.rsSendElapse = seg.sentAt - seg.firstSentTime
		a.rsSent, a.rsFirstSent = seg.sentAt, seg.firstSentTime
		a.rs.Delivered = 0
		s.firstSent = seg.sentAt
	}
}

func (s *Sender) onAck(p *sim.Packet) {
	now := s.sim.Now()
	if p.Ack < s.sndUna && p.NSACK > 0 && s.cfg.SACK && !s.stats.Done && s.cfg.Profile != ccai.ProfileLinux310 {
		s.onOldAck(p)
		return
	}
	if p.Ack < s.sndUna || p.Ack > s.sndNxt || s.stats.Done {
		return // old or impossible ACK
	}
	// The ACK's scratch state lives in the sender so that passing it to
	// the algorithm does not allocate.
	a := &s.ack
	*a = ackInfo{seqRTT: -1, sackRTT: -1, caRTT: -1}
	a.rs = ccai.RateSample{Delivered: -1, Interval: -1, RTT: -1}
	priorInFlight := s.sock.InFlight()
	priorDelivered := s.sock.Delivered
	a.priorLost = s.lost
	s.sock.PriorInFlight = priorInFlight
	// Records emitted so far: a transition during this ACK emits its own
	// (setState), and the ACK's record follows it when the ACK changed
	// more after it (see endAck).
	records := s.records

	if s.cfg.SACK && p.NSACK > 0 {
		s.processSACK(p, a)
	}
	if p.Ack > s.sndUna {
		a.unaAdvanced = true
		s.cleanAcked(p.Ack, a)
	} else if s.sock.PacketsOut > 0 {
		// Linux's is_dupack: the ACK neither advanced snd_una nor
		// carried data or a window update.
		a.dupAck = true
	}
	if !s.cfg.SACK {
		if a.dupAck {
			s.addRenoSack()
		} else if a.unaAdvanced {
			s.removeRenoSacks(a.newlyAcked)
		}
	}

	// RTT: prefer the sequence sample (Karn's rule, RFC 6298 §3); fall
	// back to the echoed timestamp (RFC 7323 §4) when every acked segment
	// was retransmitted.
	// Linux's tcp_ack_update_rtt: a cumulative sample, else one from the
	// oldest newly SACKed segment, else the timestamp echo.
	rttSample := a.seqRTT
	if a.retransAcked {
		// Karn's rule for the whole ACK: when it also acknowledges
		// retransmitted data, the never-retransmitted segments above a
		// repaired hole waited for the repair, and their send times
		// would time that wait, not the path (Linux's
		// tcp_clean_rtx_queue takes no sequence sample with
		// FLAG_RETRANS_DATA_ACKED).
		rttSample = -1
	}
	if rttSample < 0 {
		rttSample = a.sackRTT
	}
	// With only retransmitted data acked, the echoed timestamp still
	// times the transmission that advanced the receiver (RFC 7323 §4).
	if rttSample < 0 && a.unaAdvanced && p.TSEcr > 0 {
		rttSample = now - (p.TSEcr - 1)
	}
	if a.caRTT < 0 {
		a.caRTT = a.sackRTT
	}
	// One-way delay of the echoed segment: the receiver's timestamp of
	// this ACK minus the sender's of the segment it echoes (TCP-LP,
	// Kuzmanovic & Knightly 2003, §3.1). Both ends share the simulated
	// clock, so the offset is zero.
	if p.TSEcr > 0 && p.TSVal > 0 {
		s.sock.OneWayDelay = (p.TSVal - 1) - (p.TSEcr - 1)
	}
	if rttSample >= 0 {
		s.sampleRTT(rttSample)
		s.backoff = 0
		s.sock.SRTT = s.rtt.srtt
		s.sock.RTTVar = s.rtt.rttvar()
		s.sock.MinRTT = s.rtt.minRTT
	}
	if a.unaAdvanced {
		if s.sock.PacketsOut > 0 {
			s.armRTO()
		} else {
			s.sim.Cancel(s.rtoEv)
		}
	}
	if s.pa != nil && (a.newlyAcked > 0 || a.newlySacked > 0) {
		s.pa.PktsAcked(&s.sock, ccai.AckSample{PktsAcked: a.newlyAcked + a.newlySacked, RTT: a.caRTT, InFlight: priorInFlight})
	}
	if s.iae != nil {
		var fl ccai.AckFlags
		if a.dupAck {
			fl |= ccai.AckDupAck
		}
		if !a.unaAdvanced || p.NSACK > 0 {
			fl |= ccai.AckSlowPath
		}
		if a.retransAcked {
			fl |= ccai.AckRetransAck
		}
		if s.cfg.ECN && p.ECE {
			fl |= ccai.AckECE
		}
		s.iae.InAckEvent(&s.sock, fl, a.ackedBytes)
	}

	ackedSacked := uint32(s.sock.Delivered - priorDelivered)
	a.ece = s.cfg.ECN && p.ECE
	s.recoveryOnAck(p, a, ackedSacked, priorInFlight)

	s.rateSample(a, ackedSacked, priorInFlight)

	switch {
	case s.cc != nil:
		s.cc.CongControl(&s.sock, &a.rs)
	case s.sock.CAState == ccai.StateRecovery || s.sock.CAState == ccai.StateCWR:
		// cwnd is set by PRR in recoveryOnAck.
	case a.newlyAcked > 0:
		s.ca.CongAvoid(&s.sock, ackedSacked)
	}
	s.endAck(records)
	if s.sock.Cwnd == 0 {
		// Never let a zero window deadlock the run; a CCAI that asks
		// for it was recorded by endAck first.
		s.sock.Cwnd = 1
	}
	if s.sndUna >= s.cfg.Bytes {
		s.finish()
		return
	}
	s.output()
}

// rateSample completes the ACK's rate sample (delivery-rate draft §3.3;
// Linux's tcp_rate_gen), after loss recovery marked what the ACK revealed.
func (s *Sender) rateSample(a *ackInfo, ackedSacked, priorInFlight uint32) {
	if s.sock.AppLimited && s.sock.Delivered > s.appLimitedTil {
		s.sock.AppLimited = false
	}
	if a.rs.Delivered == 0 {
		a.rs.Delivered = int64(s.sock.Delivered - a.rs.PriorDelivered)
		ackElapsed := s.sock.DeliveredTime - a.rsPriorTime
		a.rs.Interval = max(a.rsSendElapse, ackElapsed)
		if a.rs.Interval < s.rtt.minRTT {
			a.rs.Interval = -1
			a.rs.Delivered = -1
		}
		// Only a CongController is given the sample (below).
		if s.rate != nil && s.cc != nil {
			s.rate.RateSample(s.cfg.Flow, a.rsPriorTime, a.rsFirstSent, a.rsSent)
		}
	}
	a.rs.RTT = a.caRTT
	// Linux's tcp_ack: lost = tp->lost - prior lost, taken after
	// tcp_fastretrans_alert marked what this ACK revealed, and passed
	// to tcp_rate_gen as rs->losses.
	a.newlyLost = uint32(s.lost - a.priorLost)
	a.rs.Losses = a.newlyLost
	a.rs.AckedSacked = ackedSacked
	a.rs.PriorInFlight = priorInFlight
}

// onOldAck takes the SACK blocks of an ACK below snd_una (reordered by the
// path): Linux's tcp_ack at old_ack tags them (tcp_sacktag_write_queue),
// runs tcp_fastretrans_alert and sends what recovery allows
// (tcp_xmit_recovery), but takes no RTT sample and leaves cwnd to the next
// ACK (tcp_cong_control, where PRR runs, is not reached).
// fast_recovery/prr-ss-ack-below-snd_una-cubic.pkt sends one. ProfileLinux310
// drops them whole, as the model did: 3.10 tagged them but ran no recovery.
func (s *Sender) onOldAck(p *sim.Packet) {
	a := &s.ack
	*a = ackInfo{seqRTT: -1, sackRTT: -1, caRTT: -1, old: true}
	a.rs = ccai.RateSample{Delivered: -1, Interval: -1, RTT: -1}
	priorInFlight := s.sock.InFlight()
	priorDelivered := s.sock.Delivered
	a.priorLost = s.lost
	records := s.records
	s.processSACK(p, a)
	s.recoveryOnAck(p, a, uint32(s.sock.Delivered-priorDelivered), priorInFlight)
	s.endAck(records)
	s.output()
}

func (s *Sender) finish() {
	s.stats.Done = true
	s.stats.DoneAt = s.sim.Now()
	s.stats.DeliveredBytes = s.sndUna
	s.sim.Cancel(s.rtoEv)
	s.sim.Cancel(s.sendEv)
	if s.cfg.OnDone != nil {
		s.cfg.OnDone()
	}
}

// cleanAcked removes cumulatively acknowledged segments (Linux's
// tcp_clean_rtx_queue).
func (s *Sender) cleanAcked(ack uint64, a *ackInfo) {
	now := s.sim.Now()
	var firstSent time.Duration = -1
	var lastSent time.Duration = -1
	popped := 0
	for s.q.len() > 0 {
		seg := s.q.at(0)
		if seg.end() > ack {
			break
		}
		f := seg.flags
		if f&segRetrans != 0 {
			s.sock.RetransOut--
		}
		if f&segEverRetx != 0 {
			a.retransAcked = true
		} else if f&segSacked == 0 {
			// A segment SACKed earlier gave its RTT sample then; its
			// send time says nothing about this ACK.
			// Without SACK a cumulative ACK cannot tell whether
			// this segment arrived or only the retransmission
			// before it; ProfileLinux ignores it (commit
			// 1236f22fbae1 "tcp: prevent bogus FRTO undos with
			// non-SACK flows", 4.18), ProfileLinux310 counts it.
			if s.cfg.SACK || s.cfg.Profile == ccai.ProfileLinux310 {
				a.origAcked = true
			}
			if firstSent < 0 {
				firstSent = seg.sentAt
			}
			lastSent = seg.sentAt
		}
		if f&segLost != 0 {
			s.sock.LostOut--
		}
		if f&segSacked != 0 {
			s.sock.SackedOut--
		} else {
			s.deliver(seg, a)
			a.newlyAcked++
		}
		a.ackedBytes += seg.len
		s.sock.PacketsOut--
		s.q.popFront()
		popped++
	}
	s.lostHint = max(s.lostHint-popped, 0)
	if firstSent >= 0 {
		a.seqRTT = now - firstSent
		a.caRTT = now - lastSent
	}
	s.sndUna = ack
	s.sock.SndUna = ack
	s.appWake(now)
}

// processSACK applies the SACK blocks of an ACK to the scoreboard and
// detects a D-SACK (RFC 2883 §4: the first block is at or below the
// cumulative ACK, or inside the second block).
func (s *Sender) processSACK(p *sim.Packet, a *ackInfo) {
	blocks := p.SACK[:p.NSACK]
	if p.DSACK && len(blocks) > 0 {
		d := blocks[0]
		a.dsack = true
		blocks = blocks[1:]
		// A D-SACK for a retransmitted segment proves one
		// retransmission unnecessary (Linux's undo_retrans counting).
		if s.undoValid && d.End > s.undoMarker {
			i := s.q.find(d.Start)
			covered := false
			for ; i < s.q.len(); i++ {
				seg := s.q.at(i)
				if seg.seq >= d.End {
					break
				}
				if seg.flags&segEverRetx != 0 {
					covered = true
				}
			}
			if covered || d.End <= p.Ack {
				if s.undoRetrans > 0 {
					s.undoRetrans--
				}
			}
		}
	}
	for _, b := range blocks {
		if b.End <= p.Ack || b.End <= s.sndUna {
			continue
		}
		// Only segments not SACKed before can change: jump over the
		// runs SACKed by earlier ACKs (the first block of each ACK
		// repeats and extends the most recent range, RFC 2018 §4), so
		// an ACK costs O(log n) plus what it newly SACKs.
		for i := s.q.nextUnsacked(s.q.find(b.Start)); i < s.q.len(); i = s.q.nextUnsacked(i + 1) {
			seg := s.q.at(i)
			if seg.seq < b.Start {
				continue
			}
			if seg.end() > b.End {
				break
			}
			if seg.flags&segRetrans != 0 {
				seg.flags &^= segRetrans
				s.sock.RetransOut--
			}
			if seg.flags&segLost != 0 {
				seg.flags &^= segLost
				s.sock.LostOut--
			}
			if seg.flags&segEverRetx == 0 {
				a.origAcked = true
				if rtt := s.sim.Now() - seg.sentAt; rtt > a.sackRTT {
					a.sackRTT = rtt
				}
			}
			s.q.markSacked(i)
			s.sock.SackedOut++
			a.newlySacked++
			s.deliver(seg, a)
		}
	}
}

// addRenoSack counts a duplicate ACK as one SACKed packet when SACK is off
// (Linux's tcp_add_reno_sack), never letting the count exceed what can be
// outstanding (tcp_limit_reno_sacked).
func (s *Sender) addRenoSack() {
	s.sock.SackedOut++
	s.sock.Delivered++
	s.limitRenoSacked()
}

// removeRenoSacks: one cumulative ACK fills the hole, the rest of the acked
// packets had been counted as dupACKs (Linux's tcp_remove_reno_sacks).
//
// ProfileLinux counts max(acked − sacked_out, 1) of them delivered, the
// others having been counted by their duplicate ACKs (tcp_remove_reno_sacks
// since commit ddf1af6fa00e "tcp: new delivery accounting", 4.6);
// cleanAcked counted every acked packet, so the excess is taken back here.
// Without it each packet acked after duplicate ACKs counted twice, and slow
// start grew cwnd by both (limited_transmit/limited-transmit-no-sack.pkt:
// 10→11 in Linux, 10→13 before). ProfileLinux310 keeps the count the model
// had: 3.10 had no tp->delivered.
func (s *Sender) removeRenoSacks(acked uint32) {
	if acked > 0 && s.cfg.Profile != ccai.ProfileLinux310 {
		if d := max(int64(acked)-int64(s.sock.SackedOut), 1); d < int64(acked) {
			s.sock.Delivered -= uint64(int64(acked) - d)
		}
	}
	if acked > 0 {
		if acked-1 >= s.sock.SackedOut {
			s.sock.SackedOut = 0
		} else {
			s.sock.SackedOut -= acked - 1
		}
	}
	s.limitRenoSacked()
}

func (s *Sender) limitRenoSacked() {
	holes := min(max(s.sock.LostOut, 1), s.sock.PacketsOut)
	if s.sock.SackedOut+holes > s.sock.PacketsOut {
		s.sock.SackedOut = s.sock.PacketsOut - holes
	}
}

// endAck emits the ACK's record, taken after the algorithm has reacted to
// the ACK (CongAvoid, CongControl, PRR): Linux's congestion-control hooks
// run after tcp_fastretrans_alert has moved ca_state (tcp_ack →
// tcp_cong_control), so the window an ACK leaves behind is only known
// here. An ACK that changed ca_state has already emitted the transition's
// record (setState) with the values of that moment, which is what a
// condition on the transition (prev.ca_state, the undo's restored cwnd)
// must see; the ACK's record then follows only if something changed after
// the transition, so that every change is observed once, in order, and a
// change on the transfer's last ACK is observed at all (issue 21).
func (s *Sender) endAck(records uint64) {
	if s.cfg.Observer == nil {
		return
	}
	if s.records == records || s.changedSinceRecord() {
		s.emit(ReasonAck)
	}
}

// changedSinceRecord reports whether any variable of the last record has
// changed since it was emitted.
func (s *Sender) changedSinceRecord() bool {
	r := &s.rec
	if r.Cwnd != s.sock.Cwnd || r.SSThresh != s.sock.SSThresh || r.SRTT != s.rtt.srtt || r.RTTVar != s.rtt.rttvar() ||
		r.RTO != s.RTO() || r.CAState != s.sock.CAState || r.PriorCwnd != s.sock.PriorCwnd ||
		r.InFlight != s.sock.InFlight() || r.Delivered != s.sock.Delivered || r.PacingRate != s.sock.PacingRate {
		return true
	}
	if s.vexp == nil {
		return false
	}
	// r.Vars aliases s.vars (see emit): read the current values apart.
	s.vexp.ReadVars(&s.sock, s.varsNow)
	for i, v := range s.varsNow {
		if v != s.vars[i] && !(v != v && s.vars[i] != s.vars[i]) {
			return true
		}
	}
	return false
}

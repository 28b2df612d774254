package tcp

import "github.com/actfuzz/actfuzz/netenv/sim"

// The three-way handshake (RFC 9293 §3.5), when SenderConfig.Handshake and
// ReceiverConfig.Handshake ask for it. Without it a transfer starts as if
// the connection were already open, which is what the ACT paper's runs and
// every campaign do; with it the first RTT sample comes from the SYN-ACK
// and a lost SYN or SYN-ACK shrinks the initial window, as in Linux.
//
// The SYN and SYN-ACK carry no sequence space here (data starts at byte
// 0 either way), and the sender's first data segment completes the
// handshake for the receiver instead of a separate pure ACK.

// Handshake constants, Linux's defaults.
const (
	// SynRetries is Linux's tcp_syn_retries: after the 6th retransmission
	// of a SYN times out (1+2+…+64 = 127 s) the connection attempt fails.
	SynRetries = 6
	// SynAckRetries is Linux's tcp_synack_retries.
	SynAckRetries = 5
)

// Timer tag of the receiver's SYN-ACK retransmission timer (its delayed-ACK
// timer has tag 0).
const timerSynAck uint8 = 1

func (s *Sender) sendSYN() {
	now := s.sim.Now()
	p := s.sim.NewPacket()
	p.Flow = s.cfg.Flow
	p.Src, p.Dst = s.cfg.Node, s.cfg.Peer
	p.SYN = true
	p.TSVal = now + 1
	p.Retx = s.synRetries > 0
	p.SentAt = now
	if s.synRetries == 0 {
		s.synSentAt = now
	}
	// RFC 6298 §2.1 and §5.5: 1 s, doubled on every timeout.
	s.sim.Schedule(s.rtoEv, min(InitialRTO<<s.synRetries, MaxRTO))
	s.cfg.Out.Send(p)
}

// onSynTimeout retransmits the SYN, or gives up after SynRetries.
func (s *Sender) onSynTimeout() {
	s.stats.Timeouts++
	if s.synRetries >= SynRetries {
		s.connecting = false
		s.stats.ConnectFailed = true
		if s.cfg.OnDone != nil {
			s.cfg.OnDone() // finished, unsuccessfully
		}
		return
	}
	s.synRetries++
	s.stats.SynRetransmits++
	s.sendSYN()
}

// onSynAck opens the connection: the RTT sample of the handshake, the
// initial window, then the algorithm and the first flight.
func (s *Sender) onSynAck(p *sim.Packet) {
	if !p.SYN || !p.IsAck {
		return
	}
	now := s.sim.Now()
	s.connecting = false
	s.sim.Cancel(s.rtoEv)
	// Karn's algorithm (RFC 6298 §3): a retransmitted SYN gives no sample
	// from its send time; the timestamp echo (RFC 7323 §4) still does.
	// The receiver always echoes, so RFC 6298 §5.7's 3 s fallback for a
	// handshake without a sample never applies here.
	if s.synRetries == 0 {
		s.sampleRTT(now - s.synSentAt)
	} else {
		s.sampleRTT(now - (p.TSEcr - 1))
	}
	s.sock.SRTT = s.rtt.srtt
	s.sock.RTTVar = s.rtt.rttvar()
	s.sock.MinRTT = s.rtt.minRTT
	// RFC 5681 §3.1: after a lost SYN or SYN-ACK the initial window is one
	// segment, unless the echo shows the first SYN arrived (the
	// retransmission was spurious, as Linux's undo of it).
	lost := s.synRetries > 0 && p.TSEcr != s.synSentAt+1 || p.Retx
	if lost {
		s.sock.Cwnd = 1
	}
	s.establish()
}

// establish starts the transfer: Start without a handshake, or the SYN-ACK.
func (s *Sender) establish() {
	s.setAppSince(s.sim.Now())
	s.sock.Now = s.sim.Now()
	s.ca.Init(&s.sock)
	s.output()
	s.emit(ReasonState)
}

// onSyn answers a SYN (a first one or a retransmission) with a SYN-ACK.
func (r *Receiver) onSyn(p *sim.Packet) {
	if r.established {
		return // a stale SYN after the first data: ignore it
	}
	r.tsRecent = p.TSVal
	if !r.synReceived {
		r.synReceived = true
		r.sendSynAck(false)
		return
	}
	// A retransmitted SYN: our SYN-ACK (or the SYN) was lost; answer
	// again, as Linux does, without touching the timer.
	r.sendSynAck(true)
}

func (r *Receiver) sendSynAck(retx bool) {
	p := r.sim.NewPacket()
	p.Flow = r.cfg.Flow
	p.Src, p.Dst = r.cfg.Node, r.cfg.Peer
	p.SYN, p.IsAck = true, true
	p.TSEcr = r.tsRecent
	p.TSVal = r.sim.Now() + 1
	p.Retx = retx
	p.SentAt = r.sim.Now()
	if !retx || !r.synAckEv.Queued() {
		r.sim.Schedule(r.synAckEv, min(InitialRTO<<r.synAckRetries, MaxRTO))
	}
	r.cfg.Out.Send(p)
}

// onSynAckTimeout retransmits the SYN-ACK, or gives up.
func (r *Receiver) onSynAckTimeout() {
	if r.established || r.synAckRetries >= SynAckRetries {
		return
	}
	r.synAckRetries++
	r.sendSynAck(true)
}

package tcp

import (
	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv/sim"
)

// ECN (RFC 3168). The sender marks new data ECT (never retransmissions,
// §6.1.5), reduces once per window when an ACK carries ECE (§6.1.2:
// Linux's tcp_enter_cwr, the CWR state with a PRR reduction to the
// algorithm's ssthresh) and sets CWR on the next new segment. The
// receiver echoes CE either as RFC 3168 says (ECE on every ACK from a CE
// until a CWR) or, for DCTCP, exactly (RFC 8257 §3.2: each ACK's ECE is
// the CE of the data it acknowledges, an immediate ACK when that
// changes).

// ECNEcho is how a receiver echoes CE.
type ECNEcho uint8

const (
	// EchoNone: ECN was not negotiated.
	EchoNone ECNEcho = iota
	// EchoClassic latches ECE from a CE until a CWR (RFC 3168 §6.1.3).
	EchoClassic
	// EchoAccurate echoes each segment's CE (RFC 8257 §3.2, DCTCP).
	EchoAccurate
)

// EchoFor is the receiver's echo for a connection running cca with ECN
// negotiated or not: accurate for DCTCP, which needs the fraction of
// marked bytes, classic otherwise.
func EchoFor(cca string, ecn bool) ECNEcho {
	switch {
	case !ecn:
		return EchoNone
	case cca == "dctcp":
		return EchoAccurate
	}
	return EchoClassic
}

// ecnMark sets a data segment's ECN codepoint and CWR flag.
func (s *Sender) ecnMark(p *sim.Packet, retx bool) {
	if !s.cfg.ECN || retx {
		return
	}
	p.ECT = true
	if s.cwrPending {
		p.CWR = true
		s.cwrPending = false
	}
}

// enterCWR starts a congestion window reduction on ECE (Linux's
// tcp_enter_cwr and tcp_init_cwnd_reduction): no undo for it, ssthresh
// from the algorithm, PRR from the current window down to it, CWR on the
// next new segment.
func (s *Sender) enterCWR() {
	s.sock.PriorSSThresh = 0
	s.undoValid = false
	s.highSeq = s.sndNxt
	s.sock.CwndCnt = 0
	s.sock.PriorCwnd = s.sock.Cwnd
	s.prrDelivered, s.prrOut = 0, 0
	s.sock.SSThresh = s.ca.SSThresh(&s.sock)
	s.cwrPending = true
	s.stats.ECNReductions++
	s.setState(ccai.StateCWR)
}

// ecnOnData updates the echo state on a data segment: CWR first, then
// CE (Linux's tcp_ecn_accept_cwr, then __tcp_ecn_check_ce), so a CE in
// the segment that carries CWR is echoed again.
func (r *Receiver) ecnOnData(p *sim.Packet) {
	switch r.cfg.ECN {
	case EchoClassic:
		if p.CWR {
			r.ece = false
		}
		if p.CE {
			if !r.ece {
				// "Better not delay acks, sender can have a very low
				// cwnd": Linux enters quick-ACK mode for two ACKs on
				// the first CE of an episode (__tcp_ecn_check_ce).
				r.quick = max(r.quick, 2)
			}
			r.ece = true
		}
	case EchoAccurate:
		if p.CE != r.ece {
			// The CE state changes: ACK what came before with the old
			// state at once (RFC 8257 §3.2's two-state machine).
			if r.pending > 0 {
				r.sendAck()
			}
			r.ece = p.CE
		}
	}
}

// ecnEcho is the ECE flag of the next ACK.
func (r *Receiver) ecnEcho() bool { return r.cfg.ECN != EchoNone && r.ece }

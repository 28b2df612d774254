package tcp

import "time"

// The seam a packetdrill-script interpreter (netenv/pkt) drives the sender
// through: the script's application writes in steps instead of one
// transfer size, the connection is opened by the interpreter's handshake
// (a passive open, which the sender does not model), and TCP_INFO reads
// the backoff. None of these is used by a campaign run.

// Write appends n bytes to the transfer, as a write(2) the send buffer
// takes whole (Linux's tcp_sendmsg), and sends what the window allows. A
// sender whose transfer was fully acknowledged (Done) goes on: the next
// write reopens it.
func (s *Sender) Write(n uint64) {
	if n == 0 {
		return
	}
	s.cfg.Bytes += n
	s.stats.Done = false
	s.sock.Now = s.sim.Now()
	s.output()
}

// Established starts a sender whose handshake was done by its caller:
// rtt is the handshake's RTT sample (Linux's tcp_synack_rtt_meas on a
// passive open, the SYN-ACK's sample on an active one), 0 for none.
func (s *Sender) Established(rtt time.Duration) {
	if rtt > 0 {
		s.sampleRTT(rtt)
		s.sock.SRTT = s.rtt.srtt
		s.sock.RTTVar = s.rtt.rttvar()
		s.sock.MinRTT = s.rtt.minRTT
	}
	s.establish()
}

// Backoff is the exponent of the retransmission timer's backoff (Linux's
// icsk_backoff).
func (s *Sender) Backoff() uint32 { return s.backoff }

// Bytes is the transfer size: what the application has written so far.
func (s *Sender) Bytes() uint64 { return s.cfg.Bytes }

// SndNxt is the next byte to send.
func (s *Sender) SndNxt() uint64 { return s.sndNxt }

package sim

import "time"

// Header and option sizes used for serialization (RFC 791, RFC 9293,
// RFC 7323 timestamps, RFC 2018 SACK).
const (
	IPTCPHeaderBytes = 20 + 20 + 12 // IPv4 + TCP + timestamp option (padded)
	SACKBlockBytes   = 8
	SACKOptionBytes  = 2
	MaxSACKBlocks    = 3 // with timestamps, 3 blocks fit in 40 option bytes
)

// SACKBlock is one SACK block [Start, End) in bytes.
type SACKBlock struct{ Start, End uint64 }

// Packet is a simulated IP packet carrying a TCP segment or a UDP datagram.
// Packets are pooled by the [Sim]; handlers must Free them when done.
type Packet struct {
	ID   uint64 // unique per run, in creation order
	Flow int32
	Src  NodeID
	Dst  NodeID

	Seq uint64 // first payload byte
	Len uint32 // payload bytes
	Ack uint64 // cumulative ACK (for ACKs)
	FIN bool   // last segment of the transfer
	SYN bool   // handshake: a SYN, or with IsAck a SYN-ACK
	UDP bool
	Hop uint8 // index of the link on the packet's path it is crossing

	IsAck  bool
	NSACK  uint8 // SACK blocks used; block 0 is a D-SACK when DSACK is set
	DSACK  bool
	SACK   [MaxSACKBlocks + 1]SACKBlock
	TSVal  time.Duration // RFC 7323 timestamp value (sender clock)
	TSEcr  time.Duration // echoed timestamp
	Retx   bool          // the segment is a retransmission
	SentAt time.Duration // when the packet left its sender

	// ECN (RFC 3168): ECT and CE are the IP header's codepoints (the
	// sender marks ECT, a queue marks CE), ECE and CWR the TCP flags.
	ECT, CE  bool
	ECE, CWR bool

	// Arrival is the packet's own arrival event, so that a packet in
	// flight costs no allocation.
	Arrival Event

	next *Packet
}

// ECNCapable reports an ECN-capable transport (ECT): a queue may mark it
// instead of dropping it.
func (p *Packet) ECNCapable() bool { return p.ECT }

// MarkCE marks congestion experienced.
func (p *Packet) MarkCE() { p.CE = true }

// WireBytes is the size of the packet on the link.
func (p *Packet) WireBytes() uint32 {
	n := uint32(IPTCPHeaderBytes) + p.Len
	if p.NSACK > 0 {
		n += SACKOptionBytes + SACKBlockBytes*uint32(p.NSACK)
	}
	return n
}

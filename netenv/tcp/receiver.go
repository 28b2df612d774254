package tcp

import (
	"time"

	"github.com/actfuzz/actfuzz/netenv/sim"
)

// Receiver constants modelled on Linux.
const (
	// DelayedAckTimeout is Linux's TCP_DELACK_MIN (40 ms); RFC 1122 §4.2.3.2
	// allows up to 500 ms.
	DelayedAckTimeout = 40 * time.Millisecond
	// quickAcks is how many segments are ACKed at once at the start of a
	// connection (Linux's TCP_MAX_QUICKACKS).
	quickAcks = 16
)

// ReceiverConfig configures a receiver.
type ReceiverConfig struct {
	Flow  int32
	Node  sim.NodeID
	Peer  sim.NodeID
	SACK  bool
	Bytes uint64 // transfer size, to know when it is complete
	Out   Output
	// Handshake: the connection opens with SYN and SYN-ACK (handshake.go).
	Handshake bool
	// ECN is how the receiver echoes CE (ecn.go): EchoNone without ECN.
	ECN ECNEcho
}

// oooBlock is received out-of-order data; stamp orders blocks by most
// recent change, for SACK reporting (RFC 2018 §4).
type oooBlock struct{ start, end, stamp uint64 }

// Receiver acknowledges data: cumulatively, with SACK and D-SACK (RFC 2018,
// RFC 2883), delaying ACKs for in-order data (RFC 1122, RFC 5681 §4.2).
type Receiver struct {
	cfg       ReceiverConfig
	sim       *sim.Sim
	rcvNxt    uint64
	ooo       []oooBlock // out-of-order data, sorted by start
	stamp     uint64
	pending   int  // full segments received and not yet ACKed
	quick     int  // quick ACKs left
	ece       bool // ECN: the next ACK carries ECE (ecn.go)
	delackEv  *sim.Event
	tsRecent  time.Duration
	lastAcked uint64 // rcv_nxt carried by the last ACK sent
	dsack     sim.SACKBlock
	hasDSACK  bool

	// Handshake (handshake.go).
	synAckEv      *sim.Event
	synReceived   bool
	established   bool
	synAckRetries uint32
}

// NewReceiver creates a receiver.
func NewReceiver(s *sim.Sim, cfg ReceiverConfig) *Receiver {
	r := &Receiver{cfg: cfg, sim: s, quick: quickAcks}
	r.delackEv = sim.NewEvent(cfg.Node, sim.KindTimer, 0, r)
	if cfg.Handshake {
		r.synAckEv = sim.NewEvent(cfg.Node, sim.KindTimer, timerSynAck, r)
	}
	return r
}

// Received is the number of in-order bytes received.
func (r *Receiver) Received() uint64 { return r.rcvNxt }

// Handle receives data segments and runs the delayed-ACK timer (and, with
// the handshake, SYNs and the SYN-ACK timer).
func (r *Receiver) Handle(e *sim.Event) {
	if e.Kind != sim.KindPacket {
		if e.Tag == timerSynAck {
			r.onSynAckTimeout()
			return
		}
		r.sendAck()
		return
	}
	p := e.Pkt
	switch {
	case p.SYN:
		r.onSyn(p)
	default:
		if r.cfg.Handshake && !r.established {
			// The first data segment acknowledges our SYN-ACK.
			r.established = true
			r.sim.Cancel(r.synAckEv)
		}
		r.onData(p)
	}
	r.sim.FreePacket(p)
}

func (r *Receiver) onData(p *sim.Packet) {
	r.ecnOnData(p)
	start, end := p.Seq, p.Seq+uint64(p.Len)
	// RFC 7323 §4.3: remember the timestamp of a segment that covers the
	// last ACK we sent, so an ACK echoes the earliest unacknowledged one.
	if start <= r.lastAcked {
		r.tsRecent = p.TSVal
	}
	switch {
	case end <= r.rcvNxt:
		// Duplicate: report it with a D-SACK and ACK at once (RFC 2883).
		r.dsack = sim.SACKBlock{Start: start, End: end}
		r.hasDSACK = true
		r.sendAck()
	case start <= r.rcvNxt:
		r.rcvNxt = end
		filled := len(r.ooo) > 0
		r.absorbOOO()
		if end > r.rcvNxt {
			r.rcvNxt = end
		}
		r.pending++
		switch {
		case filled || r.rcvNxt >= r.cfg.Bytes:
			r.sendAck()
		case r.quick > 0:
			r.quick--
			r.sendAck()
		case r.pending >= 2:
			// RFC 5681 §4.2: ACK at least every second full segment.
			r.sendAck()
		default:
			if !r.delackEv.Queued() {
				r.sim.Schedule(r.delackEv, DelayedAckTimeout)
			}
		}
	default:
		if r.inOOO(start, end) {
			r.dsack = sim.SACKBlock{Start: start, End: end}
			r.hasDSACK = true
		} else {
			r.addOOO(start, end)
		}
		r.sendAck() // out of order: ACK immediately (RFC 5681 §4.2)
	}
}

func (r *Receiver) inOOO(start, end uint64) bool {
	for _, b := range r.ooo {
		if start >= b.start && end <= b.end {
			return true
		}
	}
	return false
}

// addOOO inserts [start,end) and merges neighbours; the changed block
// becomes the most recent for SACK reporting.
func (r *Receiver) addOOO(start, end uint64) {
	i := 0
	for i < len(r.ooo) && r.ooo[i].end < start {
		i++
	}
	j := i
	for j < len(r.ooo) && r.ooo[j].start <= end {
		start = min(start, r.ooo[j].start)
		end = max(end, r.ooo[j].end)
		j++
	}
	if i == j {
		r.ooo = append(r.ooo, oooBlock{})
		copy(r.ooo[i+1:], r.ooo[i:])
	} else if j > i+1 {
		r.ooo = append(r.ooo[:i+1], r.ooo[j:]...)
	}
	r.stamp++
	r.ooo[i] = oooBlock{start, end, r.stamp}
}

// absorbOOO moves out-of-order data that is now in order.
func (r *Receiver) absorbOOO() {
	n := 0
	for n < len(r.ooo) && r.ooo[n].start <= r.rcvNxt {
		r.rcvNxt = max(r.rcvNxt, r.ooo[n].end)
		n++
	}
	if n > 0 {
		r.ooo = append(r.ooo[:0], r.ooo[n:]...)
	}
}

// mostRecent returns the index of the most recently changed block with a
// stamp below limit, or -1.
func (r *Receiver) mostRecent(limit uint64) int {
	best := -1
	for i := range r.ooo {
		if st := r.ooo[i].stamp; st < limit && (best < 0 || st > r.ooo[best].stamp) {
			best = i
		}
	}
	return best
}

func (r *Receiver) sendAck() {
	r.sim.Cancel(r.delackEv)
	r.pending = 0
	p := r.sim.NewPacket()
	p.Flow = r.cfg.Flow
	p.Src, p.Dst = r.cfg.Node, r.cfg.Peer
	p.IsAck = true
	p.Ack = r.rcvNxt
	p.TSEcr = r.tsRecent
	p.TSVal = r.sim.Now() + 1 // the receiver's clock (the same simulated clock)
	p.ECE = r.ecnEcho()
	p.SentAt = r.sim.Now()
	if r.cfg.SACK {
		n := 0
		if r.hasDSACK {
			p.SACK[0] = r.dsack
			p.DSACK = true
			n = 1
		}
		limit := ^uint64(0)
		for n < sim.MaxSACKBlocks {
			k := r.mostRecent(limit)
			if k < 0 {
				break
			}
			b := r.ooo[k]
			p.SACK[n] = sim.SACKBlock{Start: b.start, End: b.end}
			limit = b.stamp
			n++
		}
		p.NSACK = uint8(n)
	}
	r.hasDSACK = false
	r.lastAcked = r.rcvNxt
	r.cfg.Out.Send(p)
}

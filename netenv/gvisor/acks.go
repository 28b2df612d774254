package gvisor

import (
	"encoding/binary"
	"slices"

	"gvisor.dev/gvisor/pkg/buffer"
	"gvisor.dev/gvisor/pkg/tcpip/seqnum"
)

// delivered is counted by the harness from the ACKs that reach the
// sender, not read from gVisor: gVisor's SackedOut is not a count of the
// segments SACKed. enterRecovery sets it to 0 while the scoreboard and
// the segments' acked marks stay (pkg/tcpip/transport/tcp/snd.go
// enterRecovery), so that segments SACKed before the recovery are never
// counted again (walkSACK counts a segment once, when it sets seg.acked)
// and cumulative ACKs of them later take them off SackedOut a second
// time (handleRcvdSegment); an RTO clears the scoreboard and leaves
// SackedOut as it was (retransmitTimerExpired). The records' delivered,
// once the cumulatively ACKed bytes / MSS plus SackedOut, went backwards on
// every entry into recovery, and with it since_progress, the timeouts
// count and every oracle reading delivered (stall fired on 22 of 300
// CUBIC campaigns' simulations for it).
//
// ackBoard is what the receiver has reported holding: the cumulative
// acknowledgment and the SACKed ranges above it (RFC 2018 §3), kept once
// reported (a receiver's later ACKs carry only its newest blocks;
// gVisor's receiver does not renege). delivered counts packets as Linux's
// tp->delivered does (net/ipv4/tcp_input.c tcp_clean_rtx_queue and
// tcp_sacktag_one count each packet once, when first cumulatively ACKed
// or SACKed): each stretch of sequence space an ACK newly covers counts
// its size in MSS, rounded up, so that any progress counts (a hole of
// less than an MSS, a runt the application wrote, is a packet too). It
// only grows.
type ackBoard struct {
	una       seqnum.Value // the highest cumulative ACK seen
	sacked    []seqRange   // disjoint, sorted, above una
	sbytes    uint64       // bytes in sacked
	delivered uint64       // packets
}

// seqRange is [start, end) in sequence space.
type seqRange struct{ start, end seqnum.Value }

// start sets the board's origin: the first data byte (ISS + 1).
func (b *ackBoard) start(first seqnum.Value) { *b = ackBoard{una: first} }

// pkts is n bytes in packets of mss, rounded up.
func pkts(n seqnum.Size, mss uint64) uint64 { return (uint64(n) + mss - 1) / mss }

// ack applies one ACK: its cumulative acknowledgment (ignored unless it
// advances una and acknowledges only data sent, as gVisor's
// handleRcvdSegment requires) and its SACK blocks (those that lie above
// the ACK and una and end at or before what was sent, as gVisor inserts
// them in its scoreboard; a D-SACK below the ACK adds nothing).
func (b *ackBoard) ack(ack seqnum.Value, blocks []seqRange, sent seqnum.Value, mss uint64) {
	mss = max(mss, 1)
	if b.una.LessThan(ack) && ack.LessThanEq(sent) {
		// The holes below ack are newly delivered; the SACKed ranges
		// there were counted when SACKed.
		at, i := b.una, 0
		for ; i < len(b.sacked) && b.sacked[i].start.LessThan(ack); i++ {
			r := &b.sacked[i]
			if at.LessThan(r.start) {
				b.delivered += pkts(at.Size(r.start), mss)
			}
			if r.end.LessThanEq(ack) {
				b.sbytes -= uint64(r.start.Size(r.end))
				at = r.end
				continue
			}
			b.sbytes -= uint64(r.start.Size(ack))
			r.start, at = ack, ack
			break
		}
		if at.LessThan(ack) {
			b.delivered += pkts(at.Size(ack), mss)
		}
		b.sacked = slices.Delete(b.sacked, 0, i)
		b.una = ack
	}
	for _, blk := range blocks {
		if !ack.LessThan(blk.start) || !b.una.LessThan(blk.start) || !blk.start.LessThan(blk.end) || sent.LessThan(blk.end) {
			continue
		}
		b.insert(blk, mss)
	}
}

// insert adds r to the SACKed ranges, merging it with those it overlaps
// or touches, and counts the stretches of it not SACKed before.
func (b *ackBoard) insert(r seqRange, mss uint64) {
	i := 0
	for i < len(b.sacked) && b.sacked[i].end.LessThan(r.start) {
		i++
	}
	j := i
	merged := r
	at := r.start // the part of r below at is accounted for
	for j < len(b.sacked) && b.sacked[j].start.LessThanEq(r.end) {
		o := b.sacked[j]
		if at.LessThan(o.start) {
			b.delivered += pkts(at.Size(o.start), mss)
		}
		if at.LessThan(o.end) {
			at = o.end
		}
		if o.start.LessThan(merged.start) {
			merged.start = o.start
		}
		if merged.end.LessThan(o.end) {
			merged.end = o.end
		}
		b.sbytes -= uint64(o.start.Size(o.end))
		j++
	}
	if at.LessThan(r.end) {
		b.delivered += pkts(at.Size(r.end), mss)
	}
	b.sacked = slices.Replace(b.sacked, i, j, merged)
	b.sbytes += uint64(merged.start.Size(merged.end))
}

// TCP option kinds (RFC 9293 §3.1, RFC 2018 §3).
const (
	optEnd  = 0
	optNOP  = 1
	optSACK = 5
)

// onSenderInbound reads a packet arriving at the sender before gVisor
// processes it: an ACK of a known flow updates the flow's ackBoard.
func (h *harness) onSenderInbound(buf *buffer.Buffer) {
	th, _ := tcpHeader(buf, h.inHdr[:])
	if th == nil {
		return
	}
	f := h.byPort[binary.BigEndian.Uint16(th[2:4])]
	const ackFlag, synFlag, rstFlag = 0x10, 0x02, 0x04
	if f == nil || !f.issKnown || th[13]&ackFlag == 0 || th[13]&(synFlag|rstFlag) != 0 {
		return
	}
	doff := int(th[12]>>4) * 4
	if doff > len(th) {
		doff = len(th)
	}
	h.sackBuf = h.sackBuf[:0]
	for opts := th[min(20, doff):doff]; len(opts) > 0; {
		kind := opts[0]
		if kind == optEnd {
			break
		}
		if kind == optNOP {
			opts = opts[1:]
			continue
		}
		if len(opts) < 2 || int(opts[1]) < 2 || int(opts[1]) > len(opts) {
			break
		}
		body := opts[2:opts[1]]
		if kind == optSACK {
			for ; len(body) >= 8; body = body[8:] {
				h.sackBuf = append(h.sackBuf, seqRange{
					start: seqnum.Value(binary.BigEndian.Uint32(body[0:4])),
					end:   seqnum.Value(binary.BigEndian.Uint32(body[4:8])),
				})
			}
		}
		opts = opts[opts[1]:]
	}
	mss := uint64(appMSS)
	if f.hasSnap {
		mss = uint64(max(f.last.mss, 1))
	}
	f.board.ack(seqnum.Value(binary.BigEndian.Uint32(th[8:12])), h.sackBuf, f.maxSent, mss)
}

package gvisor

// packets.go holds the packets the hosts write: handing them to the links,
// reading the sender's headers for the per-flow counters, and recycling them.

import (
	"encoding/binary"

	"gvisor.dev/gvisor/pkg/buffer"
	"gvisor.dev/gvisor/pkg/tcpip/seqnum"

	"github.com/actfuzz/actfuzz/netenv/sim"
)

// flush hands the packets ho wrote to its link, in write order.
func (h *harness) flush(ho *host) {
	bufs := ho.takePending(h.pendBuf[:0])
	for _, b := range bufs {
		if h.hooks.packet != nil {
			h.hooks.packet(h.sim.Now(), ho.name, &b)
		}
		if ho == h.snd {
			h.inspect(&b)
		}
		h.route(ho, h.newPkt(b))
	}
	clear(bufs)
	h.pendBuf = bufs[:0]
}

// inspect reads the headers of a packet the sender wrote: the initial
// sequence number from the SYN, and data segments and retransmissions for
// the per-flow counters.
func (h *harness) inspect(b *buffer.Buffer) {
	th, ihl := tcpHeader(b, h.hdr[:])
	if th == nil {
		return
	}
	f := h.byPort[binary.BigEndian.Uint16(th[0:2])]
	if f == nil {
		return
	}
	seq := seqnum.Value(binary.BigEndian.Uint32(th[4:8]))
	flags := th[13]
	const syn, ack = 0x02, 0x10
	if flags&syn != 0 && flags&ack == 0 {
		if !f.issKnown {
			f.issKnown = true
			f.lastUna = seq + 1
			f.maxSent = seq + 1
			f.board.start(seq + 1)
		}
		return
	}
	payload := int(b.Size()) - ihl - int(th[12]>>4)*4
	if payload <= 0 || !f.issKnown {
		return
	}
	f.stSegs++
	end := seq.Add(seqnum.Size(payload))
	if seq.LessThan(f.maxSent) {
		f.stRetx++
	}
	if f.maxSent.LessThan(end) {
		f.maxSent = end
	}
}

func (h *harness) newPkt(b buffer.Buffer) *wirePkt {
	p := h.freePkts
	if p != nil {
		h.freePkts = p.next
		p.next = nil
	} else {
		p = &wirePkt{}
		p.arr = sim.NewEvent(0, sim.KindPacket, 0, p)
	}
	p.buf = b
	p.size = uint32(b.Size())
	return p
}

func (h *harness) freePkt(p *wirePkt) {
	p.dst, p.path = nil, nil
	p.next = h.freePkts
	h.freePkts = p
}

func (h *harness) dropPkt(p *wirePkt) {
	p.buf.Release()
	p.buf = buffer.Buffer{}
	h.freePkt(p)
}

// tcpHeader reads a packet's IPv4 and TCP headers into scratch and returns
// the TCP header (what of it scratch holds) and the IPv4 header's length,
// or nil when the packet is shorter than an IPv4 header and a minimal TCP
// header.
func tcpHeader(b *buffer.Buffer, scratch []byte) ([]byte, int) {
	n, _ := b.ReadAt(scratch, 0)
	hd := scratch[:n]
	if len(hd) < 20 {
		return nil, 0
	}
	ihl := int(hd[0]&0xf) * 4
	if len(hd) < ihl+20 {
		return nil, 0
	}
	return hd[ihl:], ihl
}

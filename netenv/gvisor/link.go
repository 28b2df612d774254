package gvisor

import (
	"encoding/binary"
	"math"
	"slices"
	"time"

	"gvisor.dev/gvisor/pkg/buffer"

	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/sim"
)

// The links between the stacks are netenv's link model (netenv/link.go)
// carrying gVisor's packets, built from the same topology plan as the
// native subject's (netenv.PlanTopology): the same links in the same
// order, so the same random streams. The two hosts are shared by all
// flows; a packet takes the path of its flow, found from its TCP ports.

// glink is a link carrying gVisor's packets.
type glink = netenv.Link[*wirePkt]

// wirePkt is one IP packet between the stacks. It is its own arrival
// handler, so a packet in flight costs no allocation beyond gVisor's.
type wirePkt struct {
	buf  buffer.Buffer
	size uint32   // bytes on the wire (the whole IP packet)
	path []*glink // the links the packet crosses
	hop  int      // index in path of the link it is crossing
	dst  *host
	arr  *sim.Event
	next *wirePkt // free list
}

// WireBytes implements netenv.LinkPacket.
func (p *wirePkt) WireBytes() uint32 { return p.size }

// Handle passes the packet to the next link of its path, or delivers it to
// its host.
func (p *wirePkt) Handle(*sim.Event) {
	if p.hop+1 < len(p.path) {
		p.hop++
		p.path[p.hop].Send(p)
		return
	}
	dst := p.dst
	dst.h.tick()
	buf := p.buf
	p.buf = buffer.Buffer{}
	dst.h.freePkt(p)
	dst.deliver(buf)
}

func bps(mbps float64) uint64 { return uint64(math.Round(mbps * 1e6)) }

// buildLinks creates the links of the configuration's topology and every
// flow's paths. Nodes: the sender is 0, the receiver 1, links follow.
func (h *harness) buildLinks(env *netenv.Env) {
	n := len(h.cfg.Flows)
	plan := netenv.PlanTopology(h.cfg.Topology, n)
	h.nodeOf = make(map[*glink]sim.NodeID, len(plan.Links))
	for i, spec := range plan.Links {
		node := sim.NodeID(2 + i)
		l := netenv.NewLink(h.sim, netenv.LinkConfig[*wirePkt]{
			Kind: spec.Kind, Node: node, Seed: h.cfg.Seed, Index: uint64(i),
			Drop: h.dropPkt, UserTraces: h.cfg.LinkTraces,
			Deliver: func(p *wirePkt, delay time.Duration, _ int16) {
				if p.hop+1 < len(p.path) {
					p.arr.Node = h.nodeOf[p.path[p.hop+1]]
				} else {
					p.arr.Node = p.dst.node
				}
				h.sim.Schedule(p.arr, delay)
			},
		})
		l.Apply(env)
		h.links = append(h.links, l)
		h.nodeOf[l] = node
	}
	h.fwdPath, h.revPath = netenv.Paths(plan, h.links)
	for i := range n {
		h.multiPath = h.multiPath || !slices.Equal(plan.Fwd[i], plan.Fwd[0]) || !slices.Equal(plan.Rev[i], plan.Rev[0])
	}
}

// route puts a packet host ho wrote on the first link of its flow's path.
// A packet of no known flow (a reset to a closed port) takes flow 1's.
func (h *harness) route(ho *host, p *wirePkt) {
	paths, dst := h.fwdPath, h.rcv
	if ho != h.snd {
		paths, dst = h.revPath, h.snd
	}
	i := 0
	if h.multiPath {
		if f := h.flowOfPacket(&p.buf, ho == h.snd); f != nil {
			i = f.idx
		}
	}
	p.path, p.hop, p.dst = paths[i], 0, dst
	p.path[0].Send(p)
}

// flowOfPacket finds the flow of a packet by the sender's port: the source
// port of the sender's packets, the destination port of the receiver's.
func (h *harness) flowOfPacket(b *buffer.Buffer, fromSender bool) *flow {
	n, _ := b.ReadAt(h.hdr[:], 0)
	hd := h.hdr[:n]
	if len(hd) < 20 {
		return nil
	}
	ihl := int(hd[0]&0xf) * 4
	if len(hd) < ihl+4 {
		return nil
	}
	off := ihl
	if !fromSender {
		off += 2
	}
	return h.byPort[binary.BigEndian.Uint16(hd[off:off+2])]
}

package gvisor

import (
	"math"
	"math/rand/v2"
	"time"

	"gvisor.dev/gvisor/pkg/buffer"

	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/sim"
)

// wirePkt is one IP packet between the stacks. It is its own arrival
// handler, so a packet in flight costs no allocation beyond gVisor's.
type wirePkt struct {
	buf  buffer.Buffer
	size uint32 // bytes on the wire (the whole IP packet)
	dst  *host
	arr  *sim.Event
	next *wirePkt // free list
}

// Handle delivers the packet to its host.
func (p *wirePkt) Handle(*sim.Event) {
	dst := p.dst
	dst.h.tick()
	buf := p.buf
	p.buf = buffer.Buffer{}
	dst.h.freePkt(p)
	dst.deliver(buf)
}

// link is one direction of netenv's link model (netenv/link.go), carrying
// gVisor's packets instead of simulated ones: a serializer at the
// bottleneck rate with a drop-tail buffer of Buffer packets, random loss
// decided after serialization, then the one-way propagation delay plus a
// per-packet Gamma(QShape, QScale ms) queuing delay. Loss and queuing delay
// apply to the forward (data) direction only; the reverse direction has a
// buffer of at least 1000 packets. It draws from the same PRNG streams as
// the native subject's link (sim.StreamLoss and sim.StreamQueueDelay, index
// 0 forward and 1 reverse), in the same order: one loss draw per packet
// after serialization when loss > 0, then one Gamma draw per surviving
// packet when the queuing delay is on.
type link struct {
	h       *harness
	node    sim.NodeID
	forward bool

	rate   uint64 // bit/s
	prop   time.Duration
	loss   float64
	qshape float64
	qscale float64 // ms
	buffer int

	q     []*wirePkt // ring of queued packets
	qHead int
	qLen  int
	tx    *wirePkt
	txEv  *sim.Event

	lossRng *rand.Rand
	qRng    *rand.Rand
	dst     *host

	drops, losses uint64
}

func newLink(h *harness, node sim.NodeID, forward bool, seed, index uint64) *link {
	l := &link{h: h, node: node, forward: forward}
	l.txEv = sim.NewEvent(node, sim.KindTimer, 0, l)
	l.lossRng = sim.NewRand(seed, sim.StreamLoss, index)
	l.qRng = sim.NewRand(seed, sim.StreamQueueDelay, index)
	return l
}

func bps(mbps float64) uint64       { return uint64(math.Round(mbps * 1e6)) }
func msDur(v float64) time.Duration { return time.Duration(math.Round(v * 1e6)) }

// apply sets the link's parameters from an environment.
func (l *link) apply(e *netenv.Env) {
	l.rate = bps(e.BW)
	l.prop = msDur(e.Delay)
	if l.forward {
		l.loss = e.Loss
		l.qshape, l.qscale = e.QShape, e.QScale
		l.buffer = e.Buffer
	} else {
		l.buffer = max(e.Buffer, 1000)
	}
	if len(l.q) < l.buffer && len(l.q) < 1<<16 {
		l.grow(min(l.buffer, 1<<16))
	}
}

func (l *link) grow(n int) {
	nq := make([]*wirePkt, max(n, 16))
	for i := 0; i < l.qLen; i++ {
		nq[i] = l.q[(l.qHead+i)%len(l.q)]
	}
	l.q, l.qHead = nq, 0
}

// send enqueues a packet, dropping it if the buffer is full.
func (l *link) send(p *wirePkt) {
	if l.tx == nil {
		l.startTx(p)
		return
	}
	if l.qLen >= l.buffer {
		l.drops++
		l.h.dropPkt(p)
		return
	}
	if l.qLen == len(l.q) {
		l.grow(2 * len(l.q))
	}
	l.q[(l.qHead+l.qLen)%len(l.q)] = p
	l.qLen++
}

func (l *link) startTx(p *wirePkt) {
	l.tx = p
	bits := uint64(p.size) * 8
	d := time.Duration(bits * uint64(time.Second) / l.rate)
	l.h.sim.Schedule(l.txEv, d)
}

// Handle completes a transmission.
func (l *link) Handle(*sim.Event) {
	p := l.tx
	l.tx = nil
	if l.qLen > 0 {
		next := l.q[l.qHead]
		l.q[l.qHead] = nil
		l.qHead = (l.qHead + 1) % len(l.q)
		l.qLen--
		l.startTx(next)
	}
	if l.forward && l.loss > 0 && l.lossRng.Float64() < l.loss {
		l.losses++
		l.h.dropPkt(p)
		return
	}
	delay := l.prop
	if l.forward && l.qshape > 0 && l.qscale > 0 {
		q := sim.Gamma(l.qRng, l.qshape, l.qscale) * 1e6
		if q > float64(netenv.MaxQMean)*1e6 {
			q = float64(netenv.MaxQMean) * 1e6
		}
		delay += time.Duration(q)
	}
	p.dst = l.dst
	p.arr.Node = l.dst.node
	l.h.sim.Schedule(p.arr, delay)
}

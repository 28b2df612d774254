package netenv

import (
	"math/rand/v2"
	"time"

	"github.com/actfuzz/actfuzz/netenv/sim"
)

// DelayHook lets the symbolic back-end choose the extra delay of chosen
// packets instead of the random queuing delay: it returns the delay, the
// 1-based index of the uncertain variable it stands for, and ok.
type DelayHook func(p *sim.Packet) (delay time.Duration, uncertain int16, ok bool)

// link is one direction of a link: a serializer with a drop-tail queue,
// then loss, propagation and random queuing delay.
type link struct {
	sim     *sim.Sim
	node    sim.NodeID
	lane    int32 // the scheduler lane of the link's deliveries (sim.Event.Lane)
	forward bool  // data direction: random loss and queuing delay apply

	rate   uint64 // bit/s
	prop   time.Duration
	loss   float64
	qshape float64
	qscale float64 // ms
	buffer int

	q     []*sim.Packet // ring of queued packets
	qHead int
	qLen  int
	tx    *sim.Packet // being serialized
	txEv  *sim.Event
	// txTime is the serialization time of a packet of txBytes on the
	// wire at the current rate (0 bytes: not computed yet).
	txBytes uint32
	txTime  time.Duration

	lossRng *rand.Rand
	qRng    *rand.Rand
	hook    DelayHook
	deliver func(p *sim.Packet) (sim.Handler, sim.NodeID) // next hop or receiving endpoint
	in      linkIn                                        // packet arrivals from a previous hop
	access  bool                                          // an access link: no loss, no random delay, fast

	drops, losses uint64
}

func newLink(s *sim.Sim, node sim.NodeID, forward bool, seed uint64, index uint64) *link {
	// Deliveries leave in transmission order, after the same propagation
	// delay unless a random queuing delay is added: they form a FIFO lane.
	l := &link{sim: s, node: node, lane: int32(index) + 1, forward: forward}
	l.txEv = sim.NewEvent(node, sim.KindTimer, 0, l)
	l.in = linkIn{l}
	l.lossRng = sim.NewRand(seed, sim.StreamLoss, index)
	l.qRng = sim.NewRand(seed, sim.StreamQueueDelay, index)
	return l
}

// linkIn receives packets arriving at a link from a previous hop.
type linkIn struct{ l *link }

func (i linkIn) Handle(e *sim.Event) { i.l.Send(e.Pkt) }

// accessSpeedup is how much faster than the bottleneck an access link of a
// dumbbell is: fast enough never to be the bottleneck, slow enough that
// packets from one sender are spaced as on a real access link.
const accessSpeedup = 10

// apply sets the link's parameters from an environment.
func (l *link) apply(e *Env) {
	l.rate = bps(e.BW)
	l.prop = ms(e.Delay)
	if l.access {
		l.rate *= accessSpeedup
		l.prop = 0
		l.buffer = max(e.Buffer, 1000)
	} else if l.forward {
		l.loss = e.Loss
		l.qshape, l.qscale = e.QShape, e.QScale
		l.buffer = e.Buffer
	} else {
		l.buffer = max(e.Buffer, 1000)
	}
	// The ring starts small and doubles in Send: a reverse link's
	// 1,000-packet buffer rarely holds more than a few ACKs.
	if len(l.q) == 0 {
		l.grow(min(l.buffer, 64))
	}
	l.txBytes = 0 // the rate may have changed
}

func (l *link) grow(n int) {
	nq := make([]*sim.Packet, max(n, 16))
	for i := 0; i < l.qLen; i++ {
		nq[i] = l.q[(l.qHead+i)%len(l.q)]
	}
	l.q, l.qHead = nq, 0
}

// Send enqueues a packet, dropping it if the buffer is full.
func (l *link) Send(p *sim.Packet) {
	if l.tx == nil {
		l.startTx(p)
		return
	}
	if l.qLen >= l.buffer {
		l.drops++
		l.sim.FreePacket(p)
		return
	}
	if l.qLen == len(l.q) {
		l.grow(2 * len(l.q))
	}
	l.q[(l.qHead+l.qLen)%len(l.q)] = p
	l.qLen++
}

func (l *link) startTx(p *sim.Packet) {
	l.tx = p
	// Most packets have the size of the one before (full data segments,
	// or ACKs): reuse its serialization time rather than divide again.
	if w := p.WireBytes(); w != l.txBytes {
		l.txBytes = w
		l.txTime = time.Duration(uint64(w) * 8 * uint64(time.Second) / l.rate)
	}
	l.sim.Schedule(l.txEv, l.txTime)
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
	if l.forward && !l.access && l.loss > 0 && l.lossRng.Float64() < l.loss {
		l.losses++
		l.sim.FreePacket(p)
		return
	}
	delay := l.prop
	p.Arrival.Uncertain = 0
	hooked := false
	if l.hook != nil {
		if d, u, ok := l.hook(p); ok {
			delay += d
			p.Arrival.Uncertain = u
			hooked = true
		}
	}
	if !hooked && l.forward && !l.access && l.qshape > 0 && l.qscale > 0 {
		q := sim.Gamma(l.qRng, l.qshape, l.qscale) * 1e6
		if q > float64(MaxQMean)*1e6 {
			q = float64(MaxQMean) * 1e6
		}
		delay += time.Duration(q)
	}
	h, node := l.deliver(p)
	p.Arrival.Handler = h
	p.Arrival.Node = node
	p.Arrival.Lane = l.lane
	l.sim.Schedule(&p.Arrival, delay)
}

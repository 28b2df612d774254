package netenv

import (
	"math/rand/v2"
	"time"

	"github.com/actfuzz/actfuzz/netenv/sim"
)

// This file is the one link model of every Go subject: the native
// simulator, the gVisor subject and the UDP topologies of the symbolic
// back-end all put their packets on a [Link]. A link is one direction of a
// point-to-point link: a serializer at the link rate behind a drop-tail
// queue (ns-3's PointToPointNetDevice with a DropTailQueue, Linux's
// pfifo_fast under a rate limiter), then random loss, propagation and a
// random queuing delay (ACT §4.1's virtual link). Every random draw comes
// from the link's own streams (sim.StreamLoss and sim.StreamQueueDelay at
// the link's index), so two subjects that build the same topology draw the
// same numbers in the same order by construction.

// LinkPacket is what the link model needs of a packet: its size on the
// wire, which sets its serialization time.
type LinkPacket interface {
	WireBytes() uint32
}

// LinkKind says which part of the environment a link plays.
type LinkKind uint8

const (
	// LinkData is the data direction of a bottleneck: Env.Buffer packets
	// of drop-tail buffer, random loss (decided after serialization) and a
	// per-packet Gamma(QShape, QScale ms) queuing delay.
	LinkData LinkKind = iota
	// LinkAck is the ACK direction of a bottleneck: the same rate and
	// propagation delay, a buffer of at least 1000 packets, no loss and
	// no random delay.
	LinkAck
	// LinkAccessData and LinkAccessAck are a dumbbell's access links:
	// accessSpeedup × the bottleneck rate, no delay, loss or random
	// queuing, a buffer of at least 1000 packets.
	LinkAccessData
	LinkAccessAck
	// LinkFixed is a link whose rate, delay and buffer are set once with
	// SetFixed (the UDP topologies); it has no random streams.
	LinkFixed
)

// Forward reports whether the link carries data (away from the sender).
func (k LinkKind) Forward() bool { return k == LinkData || k == LinkAccessData }

// accessSpeedup is how much faster than the bottleneck an access link of a
// dumbbell is: fast enough never to be the bottleneck, slow enough that
// packets from one sender are spaced as on a real access link.
const accessSpeedup = 10

// ackBuffer is the least buffer of an ACK or access link (packets): the
// bottleneck's buffer is the environment's, the others should not drop.
const ackBuffer = 1000

// DelayHook lets the symbolic back-end choose the extra delay of chosen
// packets instead of the random queuing delay: it returns the delay, the
// 1-based index of the uncertain variable it stands for, and ok.
type DelayHook func(p *sim.Packet) (delay time.Duration, uncertain int16, ok bool)

// LinkConfig creates a [Link].
type LinkConfig[P LinkPacket] struct {
	Kind LinkKind
	// Node and Tag are those of the link's transmission-complete timer.
	Node sim.NodeID
	Tag  uint8
	// Seed and Index select the link's random streams (ignored by
	// LinkFixed): Index is the link's position in the topology's creation
	// order (LinkPlan).
	Seed, Index uint64
	// Size, if set, replaces P's WireBytes (the UDP topologies' own
	// per-packet overhead).
	//
	// The functions of a link are shared by snapshots (netenv/snapshot):
	// they capture the run's objects, which a snapshot of the run saves
	// through the run itself, or (Hook) state that its owner saves.
	Size func(p P) uint32 `snapshot:"shared"`
	// Hook, if set, may replace the random queuing delay of a packet (and
	// adds a delay on any kind of link).
	Hook func(p P) (delay time.Duration, uncertain int16, ok bool) `snapshot:"shared"`
	// HookAdds makes the hook's delay an extra delay on top of the random
	// queuing delay, which is then drawn for hooked packets too: every
	// other packet keeps the draw it has without the hook.
	HookAdds bool
	// Drop takes back a packet the link dropped (buffer overflow or
	// random loss).
	Drop func(p P) `snapshot:"shared"`
	// Deliver takes a packet that left the link: it reaches the far end
	// after delay; uncertain is the hook's variable (0: none).
	Deliver func(p P, delay time.Duration, uncertain int16) `snapshot:"shared"`
	// UserTraces are the loaded trace files link_trace user1 … user4 name
	// (Config.LinkTraces): immutable once loaded, and they hold a
	// sync.Once.
	UserTraces []*LinkTraceFile `snapshot:"shared"`
}

// Link is one direction of a link carrying packets of type P.
type Link[P LinkPacket] struct {
	sim  *sim.Sim
	cfg  LinkConfig[P]
	txEv *sim.Event

	rate   uint64 // bit/s
	prop   time.Duration
	loss   float64
	qshape float64
	qscale float64 // ms
	buffer int

	q     []P             // ring of queued packets
	qAt   []time.Duration // their enqueue times (CoDel's sojourn)
	qHead int
	qLen  int
	tx    P // being serialized
	busy  bool
	// txTime is the serialization time of a packet of txBytes on the
	// wire at the current rate (0 bytes: not computed yet).
	txBytes uint32
	txTime  time.Duration

	lossRng *rand.Rand
	qRng    *rand.Rand

	// Queue discipline, policer and ACK aggregation (aqm.go, shaping.go).
	aqm    AQM
	red    red
	codel  codel
	pie    pie
	police policer
	ecn    bool // marks instead of dropping (RFC 3168 §5)
	ecnK   int  // step marking threshold, packets (0: none)
	agg    *ackAggregator[P]
	trace  *traceLink

	drops, losses, aqmDrops, policed, marks uint64
}

// NewLink returns an idle link; set its parameters with Apply or SetFixed
// before the first Send.
func NewLink[P LinkPacket](s *sim.Sim, cfg LinkConfig[P]) *Link[P] {
	l := &Link[P]{sim: s, cfg: cfg}
	l.txEv = sim.NewEvent(cfg.Node, sim.KindTimer, cfg.Tag, l)
	if cfg.Kind != LinkFixed {
		l.lossRng = sim.NewRand(cfg.Seed, sim.StreamLoss, cfg.Index)
		l.qRng = sim.NewRand(cfg.Seed, sim.StreamQueueDelay, cfg.Index)
	}
	if cfg.Kind == LinkData {
		// Its own stream: a RED link draws without shifting the loss
		// and queuing-delay draws of any link.
		l.red.rng = sim.NewRand(cfg.Seed, sim.StreamAQM, cfg.Index)
	}
	return l
}

// Kind is the link's kind.
func (l *Link[P]) Kind() LinkKind { return l.cfg.Kind }

// TxEvent is the link's transmission-complete timer; a caller may replace
// its Handler by a wrapper that calls the link's Handle.
func (l *Link[P]) TxEvent() *sim.Event { return l.txEv }

// Apply sets the link's parameters from an environment (every kind but
// LinkFixed). A packet being serialized keeps its transmission time.
func (l *Link[P]) Apply(e *Env) {
	l.rate = bps(e.BW)
	l.prop = ms(e.Delay)
	switch l.cfg.Kind {
	case LinkData:
		l.loss = e.Loss
		l.qshape, l.qscale = e.QShape, e.QScale
		l.buffer = e.Buffer
		l.applyAQM(e)
		l.police.apply(e, l.sim.Now())
		l.ecn, l.ecnK = e.ECN == ECNOn, e.ECNK
		l.applyTrace(e)
	case LinkAck:
		l.buffer = max(e.Buffer, ackBuffer)
		l.applyAggregation(e)
	case LinkAccessData, LinkAccessAck:
		l.rate *= accessSpeedup
		l.prop = 0
		l.buffer = max(e.Buffer, ackBuffer)
	case LinkFixed:
		panic("netenv: Apply on a LinkFixed link")
	}
	l.reset()
}

// SetFixed sets the rate (Mbit/s), propagation delay (ms) and buffer
// (packets) of a link.
func (l *Link[P]) SetFixed(bw, delay float64, buffer int) {
	l.rate, l.prop, l.buffer = bps(bw), ms(delay), buffer
	l.reset()
}

func (l *Link[P]) reset() {
	// The ring starts small and doubles in Send: an ACK link's
	// 1,000-packet buffer rarely holds more than a few ACKs.
	if len(l.q) == 0 {
		l.grow(min(l.buffer, 64))
	}
	l.txBytes = 0 // the rate may have changed
}

func (l *Link[P]) grow(n int) {
	nq := make([]P, max(n, 16))
	nat := make([]time.Duration, len(nq))
	for i := 0; i < l.qLen; i++ {
		nq[i] = l.q[(l.qHead+i)%len(l.q)]
		nat[i] = l.qAt[(l.qHead+i)%len(l.q)]
	}
	l.q, l.qAt, l.qHead = nq, nat, 0
}

// Send puts a packet on the link: through the policer and the ACK
// aggregator, if any, into the queue.
func (l *Link[P]) Send(p P) {
	if l.police.on() && !l.police.admit(l.sim.Now(), l.wire(p)) {
		l.policed++
		l.cfg.Drop(p)
		return
	}
	if l.agg != nil {
		l.agg.hold(p)
		return
	}
	l.enqueue(p)
}

// enqueue starts a packet's transmission or queues it; a full buffer
// drops it (drop-tail), and RED may drop it early.
func (l *Link[P]) enqueue(p P) {
	if l.aqm == AQMPIE {
		l.pieCatchUp()
		if l.pie.dropEarly(l.qLen) {
			// ECN marks while the probability is low; above, PIE
			// drops even an ECN-capable packet (RFC 8033 §5.1).
			if l.pie.prob > pieMarkECN {
				l.aqmDrop(p)
				return
			}
			if !l.congest(p) {
				return
			}
		}
	}
	if l.aqm == AQMRED {
		switch l.red.arrive(l.sim.Now(), l.qLen, l.typicalTx()) {
		case redEarly:
			if !l.congest(p) {
				return
			}
		case redForced:
			l.aqmDrop(p)
			return
		}
	}
	if l.ecn && l.ecnK > 0 && l.qLen >= l.ecnK {
		// Step marking (RFC 8257 §3.1): every packet that arrives to a
		// queue of K or more; a packet that cannot be marked passes.
		if e, ok := markable(p); ok {
			e.MarkCE()
			l.marks++
		}
	}
	if !l.busy {
		l.startTx(p)
		return
	}
	if l.qLen >= l.buffer {
		l.drops++
		l.cfg.Drop(p)
		return
	}
	if l.qLen == len(l.q) {
		l.grow(2 * len(l.q))
	}
	i := (l.qHead + l.qLen) % len(l.q)
	l.q[i], l.qAt[i] = p, l.sim.Now()
	l.qLen++
}

// pop takes the packet at the head of the queue with its enqueue time.
func (l *Link[P]) pop() (P, time.Duration, bool) {
	var zero P
	if l.qLen == 0 {
		return zero, 0, false
	}
	p, at := l.q[l.qHead], l.qAt[l.qHead]
	l.q[l.qHead] = zero
	l.qHead = (l.qHead + 1) % len(l.q)
	l.qLen--
	return p, at, true
}

// next is the packet to transmit after the current one, if any.
func (l *Link[P]) next() (P, bool) {
	if l.aqm == AQMCoDel {
		return dequeueCoDel(l)
	}
	if l.aqm == AQMPIE {
		l.pieCatchUp()
	}
	p, _, ok := l.pop()
	return p, ok
}

// congest signals congestion with p: with ECN on and p ECN-capable it is
// marked CE and kept (true), otherwise dropped (false).
func (l *Link[P]) congest(p P) bool {
	if l.ecn {
		if e, ok := markable(p); ok {
			e.MarkCE()
			l.marks++
			return true
		}
	}
	l.aqmDrop(p)
	return false
}

// aqmDrop drops a packet by the queue discipline's decision.
func (l *Link[P]) aqmDrop(p P) {
	l.aqmDrops++
	l.cfg.Drop(p)
}

// applyAQM sets the queue discipline of a data link.
func (l *Link[P]) applyAQM(e *Env) {
	if e.AQM != l.aqm {
		// A new discipline starts from a clean state; the queue stays.
		l.red = red{rng: l.red.rng, idle: l.qLen == 0 && !l.busy, idleSince: l.sim.Now()}
		l.codel = codel{}
		// PIE draws from RED's stream: only one of them runs at a time.
		l.pie.reset(l.sim.Now(), l.red.rng)
	}
	l.aqm = e.AQM
	l.codel.target, l.codel.interval = codelTarget, codelInterval
	if e.CoDelTarget > 0 {
		l.codel.target = ms(e.CoDelTarget)
	}
	if e.CoDelInterval > 0 {
		l.codel.interval = ms(e.CoDelInterval)
	}
}

// wire is a packet's size on the wire.
func (l *Link[P]) wire(p P) uint32 {
	if l.cfg.Size != nil {
		return l.cfg.Size(p)
	}
	return p.WireBytes()
}

// typicalTx is the transmission time of a full-sized packet (RED's idle
// decay unit).
func (l *Link[P]) typicalTx() time.Duration {
	return time.Duration(uint64(1500) * 8 * uint64(time.Second) / max(l.rate, 1))
}

func (l *Link[P]) startTx(p P) {
	l.tx, l.busy = p, true
	// Most packets have the size of the one before (full data segments,
	// or ACKs): reuse its serialization time rather than divide again.
	if l.trace != nil {
		now := l.sim.Now()
		l.sim.Schedule(l.txEv, l.trace.next(now)-now)
		return
	}
	w := l.wire(p)
	if w != l.txBytes {
		l.txBytes = w
		l.txTime = time.Duration(uint64(w) * 8 * uint64(time.Second) / l.rate)
	}
	l.sim.Schedule(l.txEv, l.txTime)
}

// Handle completes a transmission: the next queued packet starts, and this
// one is lost or propagates to the far end.
func (l *Link[P]) Handle(*sim.Event) {
	p := l.tx
	var zero P
	l.tx, l.busy = zero, false
	if next, ok := l.next(); ok {
		l.startTx(next)
	} else if l.aqm == AQMRED {
		l.red.empty(l.sim.Now())
	}
	// One loss draw per serialized data packet when loss > 0 …
	if l.loss > 0 && l.lossRng.Float64() < l.loss {
		l.losses++
		l.cfg.Drop(p)
		return
	}
	delay := l.prop
	var u int16
	hooked := false
	if l.cfg.Hook != nil {
		if d, v, ok := l.cfg.Hook(p); ok {
			delay += d
			u = v
			hooked = true
		}
	}
	// … then one Gamma draw per surviving packet when the queuing delay
	// is on (only LinkData links have loss or a queuing delay).
	if (!hooked || l.cfg.HookAdds) && l.qshape > 0 && l.qscale > 0 {
		q := sim.Gamma(l.qRng, l.qshape, l.qscale) * 1e6
		if q > float64(MaxQMean)*1e6 {
			q = float64(MaxQMean) * 1e6
		}
		delay += time.Duration(q)
	}
	l.cfg.Deliver(p, delay, u)
}

// Drops is the number of packets dropped at the full buffer.
func (l *Link[P]) Drops() uint64 { return l.drops }

// AQMDrops is the number of packets the queue discipline dropped (RED
// early drops, CoDel head drops).
func (l *Link[P]) AQMDrops() uint64 { return l.aqmDrops }

// Policed is the number of packets the policer dropped.
func (l *Link[P]) Policed() uint64 { return l.policed }

// Marks is the number of packets marked CE.
func (l *Link[P]) Marks() uint64 { return l.marks }

// Losses is the number of packets lost at random.
func (l *Link[P]) Losses() uint64 { return l.losses }

// Queued is the number of packets waiting behind the one in transmission.
func (l *Link[P]) Queued() int { return l.qLen }

// QueuedAt is the i-th waiting packet, the next to be sent first.
func (l *Link[P]) QueuedAt(i int) P { return l.q[(l.qHead+i)%len(l.q)] }

// Transmitting is the packet being serialized, if any.
func (l *Link[P]) Transmitting() (P, bool) { return l.tx, l.busy }

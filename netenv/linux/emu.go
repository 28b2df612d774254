package linux

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/sim"
)

// The emulator joins the two TUN devices through netenv's one link model
// (netenv.Link over netenv/sim), driven in real time: simulated time is
// CLOCK_MONOTONIC minus the run's start. A packet read from a TUN device
// enters its first link at the simulated time it was read; the simulator
// is advanced to "now" whenever the emulator wakes; a packet whose
// delivery event comes due is written to the other TUN device then. The
// links are built from the native subject's topology plan
// (netenv.PlanTopology) with the run's seed and each link's plan index, so
// the loss and queuing-delay draws are those of the native subject's links
// (sim.StreamLoss, sim.StreamQueueDelay), in the order the packets reach
// them. What differs from the native subject is which packets the kernel
// sends, and when.

// elink is a link carrying the kernel's packets.
type elink = netenv.Link[*packet]

// maxPacket bounds a packet read from a TUN device: the MTU (1500) and
// nothing more, since the device has no offloads; the slack catches a
// misconfiguration instead of truncating silently.
const maxPacket = 2048

// packet is one IP packet on the emulated wire. It is its own arrival
// handler, so a packet in flight costs no allocation once the free list
// has warmed up.
type packet struct {
	buf      []byte
	n        int
	toSender bool // an ACK-direction packet (receiver → sender)
	path     []*elink
	hop      int
	arr      *sim.Event
	e        *emulator
	read     time.Duration // simulated time it was read from its TUN
	injected time.Duration // simulated time it entered its first link
	next     *packet
}

// WireBytes implements netenv.LinkPacket: the whole IP packet.
func (p *packet) WireBytes() uint32 { return uint32(p.n) }

// Handle passes the packet to the next link of its path or writes it to
// the destination's TUN device.
func (p *packet) Handle(*sim.Event) {
	if p.hop+1 < len(p.path) {
		p.hop++
		p.path[p.hop].Send(p)
		return
	}
	p.e.deliver(p)
}

// wireFlow is what the emulator learns of a flow from its packets.
type wireFlow struct {
	port     uint16 // the sender's port
	bytes    uint64
	issKnown bool
	iss      uint32
	maxSent  uint32 // highest sequence number sent + 1
	segs     uint64 // data segments the sender wrote
	retx     uint64 // of which below maxSent (retransmissions)
	lastAck  uint32
	acked    uint64 // bytes cumulatively acknowledged, delivered to the sender
	done     bool
	doneAt   time.Duration
}

// emulator is one run's link emulator. Everything but the constructor runs
// on the emulator's locked OS thread.
type emulator struct {
	cfg      *netenv.Config
	sim      *sim.Sim
	t0       int64 // CLOCK_MONOTONIC at simulated time 0, ns
	sndTUN   int
	rcvTUN   int
	links    []*elink
	fwd, rev [][]*elink
	multi    bool
	flows    []*wireFlow
	byPort   map[uint16]int

	phase    int
	switchEv *sim.Event

	free      *packet
	remaining int

	// realtime runs the emulator's thread under SCHED_FIFO.
	realtime bool

	// Measurements of the emulator itself (Stats).
	stats Stats
}

// Stats measure the emulator: how late packets leave it, against the link
// model's delivery time, and what it saw.
type Stats struct {
	// Late are, for a sample of delivered packets, the wall-clock delay
	// of the write to the TUN device after the model's delivery time,
	// plus the delay from the read to the entry into the first link:
	// the one-way delay error of the emulated path.
	Late []time.Duration
	// Delivered counts packets written to a TUN device, DeliveredBytes
	// their bytes, per direction (0: data, 1: ACKs).
	Delivered      [2]uint64
	DeliveredBytes [2]uint64
	// Foreign counts packets that were not IPv4 TCP of a known flow
	// (dropped without a draw: the native link never sees them).
	Foreign uint64
	// WriteErrors counts failed writes to a TUN device.
	WriteErrors uint64
	// FirstData and LastData are when the first and last data-direction
	// packet was written to the receiver's TUN device (wall clock since
	// the start: what the kernel saw, not what the model said), and
	// DataBytesAfterFirst the bytes written after the first: their ratio
	// is the delivered rate.
	FirstData, LastData time.Duration
	DataBytesAfterFirst uint64
}

// maxLateSamples bounds Stats.Late.
const maxLateSamples = 1 << 16

func monoNow() int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

func newEmulator(cfg *netenv.Config, snd, rcv int, ports []uint16, capTime time.Duration) *emulator {
	e := &emulator{
		cfg: cfg, sndTUN: snd, rcvTUN: rcv,
		sim:       sim.New(nil, sim.Limits{MaxTime: capTime, MaxEvents: cfg.Limits.MaxEvents}),
		byPort:    map[uint16]int{},
		remaining: len(cfg.Flows),
	}
	for i, f := range cfg.Flows {
		e.flows = append(e.flows, &wireFlow{port: ports[i], bytes: f.Bytes})
		e.byPort[ports[i]] = i
	}
	env := &cfg.Schedule[0].Env
	plan := netenv.PlanTopology(cfg.Topology, len(cfg.Flows))
	for i, spec := range plan.Links {
		l := netenv.NewLink(e.sim, netenv.LinkConfig[*packet]{
			Kind: spec.Kind, Node: sim.NodeID(2 + i), Seed: cfg.Seed, Index: uint64(i),
			Drop: e.freePkt, UserTraces: cfg.LinkTraces,
			Deliver: func(p *packet, delay time.Duration, _ int16) {
				e.sim.Schedule(p.arr, delay)
			},
		})
		l.Apply(env)
		e.links = append(e.links, l)
	}
	e.fwd, e.rev = netenv.Paths(plan, e.links)
	for i := range plan.Fwd {
		e.multi = e.multi || !slices.Equal(plan.Fwd[i], plan.Fwd[0]) || !slices.Equal(plan.Rev[i], plan.Rev[0])
	}
	if len(cfg.Schedule) > 1 {
		e.switchEv = sim.NewEvent(sim.ControlNode, sim.KindControl, 0, e)
		e.sim.ScheduleAt(e.switchEv, cfg.Schedule[0].Until)
	}
	return e
}

// Handle switches the links to the next phase of the schedule (the
// application's rate follows the schedule on its own clock, appRateAt).
func (e *emulator) Handle(*sim.Event) {
	e.phase++
	env := &e.cfg.Schedule[e.phase].Env
	for _, l := range e.links {
		l.Apply(env)
	}
	if e.phase < len(e.cfg.Schedule)-1 {
		e.sim.ScheduleAt(e.switchEv, e.cfg.Schedule[e.phase].Until)
	}
}

// now is the current simulated time: wall time since the start.
func (e *emulator) now() time.Duration { return time.Duration(monoNow() - e.t0) }

// rtPriority is the emulator thread's SCHED_FIFO priority: low among
// real-time priorities (1–99), above every ordinary thread.
const rtPriority = 10

// pollSlice bounds a wait, so that a cancelled context is seen promptly.
const pollSlice = 20 * time.Millisecond

// run moves packets until every flow is done, the simulator stops (the
// time cap) or ctx is cancelled. It runs on a locked OS thread with a
// timer slack of 1 µs: ppoll(2) then wakes within tens of µs of the next
// delivery (Go's own timers have 1 ms granularity below 1 ms, measured in
// doc.go), which is what makes serialization at 100 Mbit/s (120 µs a
// packet) representable.
func (e *emulator) run(ctx context.Context) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if old, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0); err == nil {
		_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1000, 0, 0, 0)
		defer func() { _ = unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(old), 0, 0, 0) }()
	}
	if e.realtime {
		// SCHED_FIFO for this thread only (sched(7)): on a loaded
		// machine an ordinary thread waits tens of milliseconds for
		// a CPU (measured in doc.go), and every such wait is a
		// stall of the emulated wire. The kernel processes a packet
		// written to a TUN device within the write (netif_rx from
		// process context), so the stacks' receive paths run at
		// this priority too. The thread sleeps in ppoll between
		// packets, and the kernel's RT throttling
		// (kernel.sched_rt_runtime_us) bounds it anyway. The policy
		// is put back before the thread is unlocked.
		if old, err := unix.SchedGetAttr(0, 0); err == nil {
			rt := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: rtPriority}
			if err := unix.SchedSetAttr(0, &rt, 0); err == nil {
				defer func() { _ = unix.SchedSetAttr(0, old, 0) }()
			} else {
				slog.Debug("linux subject: SCHED_FIFO refused; the emulator runs at normal priority", "err", err)
			}
		}
	}
	fds := []unix.PollFd{{Fd: int32(e.sndTUN), Events: unix.POLLIN}, {Fd: int32(e.rcvTUN), Events: unix.POLLIN}}
	for {
		next, pending := e.sim.RunUntil(e.now())
		if e.remaining == 0 || e.sim.Stopped() {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		wait := pollSlice
		if pending {
			wait = min(wait, next-e.now())
		}
		ts := unix.NsecToTimespec(int64(max(wait, 0)))
		fds[0].Revents, fds[1].Revents = 0, 0
		n, err := unix.Ppoll(fds, &ts, nil)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return fmt.Errorf("emulator: ppoll: %w", err)
		}
		if n == 0 {
			continue
		}
		for i := range fds {
			if fds[i].Revents&(unix.POLLERR|unix.POLLNVAL) != 0 {
				return fmt.Errorf("emulator: TUN device %d failed (revents %#x)", i, fds[i].Revents)
			}
			if fds[i].Revents&unix.POLLIN != 0 {
				if err := e.drain(int(fds[i].Fd), i == 1); err != nil {
					return err
				}
			}
		}
	}
}

// drain reads what a TUN device holds (at most a batch, so that the other
// direction and due deliveries are not starved) and puts each packet on
// its path at the time it was read.
func (e *emulator) drain(fd int, fromReceiver bool) error {
	for range 64 {
		p := e.newPkt()
		n, err := unix.Read(fd, p.buf)
		if err != nil {
			e.freePkt(p)
			if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
				return nil
			}
			return fmt.Errorf("emulator: read TUN: %w", err)
		}
		t := e.now()
		e.sim.RunUntil(t)
		p.n, p.read = n, t
		e.inject(p, fromReceiver)
	}
	return nil
}

// inject puts a packet read from a TUN device on the first link of its
// flow's path.
func (e *emulator) inject(p *packet, fromReceiver bool) {
	b := p.buf[:p.n]
	f, ok := e.flowOf(b, fromReceiver)
	if !ok {
		e.stats.Foreign++
		e.freePkt(p)
		return
	}
	if !fromReceiver {
		e.inspectData(b, e.flows[f])
	}
	paths := e.fwd
	if fromReceiver {
		paths = e.rev
	}
	if !e.multi {
		f = 0
	}
	p.toSender = fromReceiver
	p.path, p.hop = paths[f], 0
	p.injected = e.sim.Now()
	p.path[0].Send(p)
}

// flowOf finds the flow of an IPv4 TCP packet by the sender's port: the
// source port of the sender's packets, the destination port of the
// receiver's.
func (e *emulator) flowOf(b []byte, fromReceiver bool) (int, bool) {
	if len(b) < 20 || b[0]>>4 != 4 || b[9] != unix.IPPROTO_TCP {
		return 0, false
	}
	ihl := int(b[0]&0xf) * 4
	if len(b) < ihl+20 {
		return 0, false
	}
	off := ihl
	if fromReceiver {
		off += 2
	}
	f, ok := e.byPort[binary.BigEndian.Uint16(b[off:])]
	return f, ok
}

// inspectData reads a sender packet's headers: the initial sequence
// number from the SYN, and data segments and retransmissions.
func (e *emulator) inspectData(b []byte, f *wireFlow) {
	ihl := int(b[0]&0xf) * 4
	th := b[ihl:]
	seq := binary.BigEndian.Uint32(th[4:])
	flags := th[13]
	const syn, ack = 0x02, 0x10
	if flags&syn != 0 && flags&ack == 0 {
		if !f.issKnown {
			f.issKnown, f.iss = true, seq
			f.maxSent, f.lastAck = seq+1, seq+1
		}
		return
	}
	payload := len(b) - ihl - int(th[12]>>4)*4
	if payload <= 0 || !f.issKnown {
		return
	}
	f.segs++
	end := seq + uint32(payload)
	if int32(seq-f.maxSent) < 0 {
		f.retx++
	}
	if int32(end-f.maxSent) > 0 {
		f.maxSent = end
	}
}

// deliver writes a packet to its destination's TUN device. An ACK that
// acknowledges the flow's last byte ends the flow: the native subject's
// "done" is the same event, the sender learning that everything arrived.
func (e *emulator) deliver(p *packet) {
	fd, dir := e.rcvTUN, 0
	if p.toSender {
		fd, dir = e.sndTUN, 1
	}
	b := p.buf[:p.n]
	if _, err := unix.Write(fd, b); err != nil {
		e.stats.WriteErrors++
	} else {
		e.stats.Delivered[dir]++
		e.stats.DeliveredBytes[dir] += uint64(p.n)
		wall := e.now()
		if dir == 0 {
			if e.stats.FirstData == 0 {
				e.stats.FirstData = wall
			} else {
				e.stats.DataBytesAfterFirst += uint64(p.n)
			}
			e.stats.LastData = wall
		}
		if len(e.stats.Late) < maxLateSamples {
			// The model delays the packet by (now − injected); the
			// wire by (wall now − read).
			e.stats.Late = append(e.stats.Late, (wall-p.read)-(e.sim.Now()-p.injected))
		}
	}
	if p.toSender {
		e.ackArrived(b)
	}
	e.freePkt(p)
}

// ackArrived accounts an ACK delivered to the sender.
func (e *emulator) ackArrived(b []byte) {
	f, ok := e.flowOf(b, true)
	if !ok {
		return
	}
	wf := e.flows[f]
	ihl := int(b[0]&0xf) * 4
	th := b[ihl:]
	if th[13]&0x10 == 0 || !wf.issKnown || wf.done {
		return
	}
	ack := binary.BigEndian.Uint32(th[8:])
	if d := int32(ack - wf.lastAck); d > 0 {
		wf.acked += uint64(d)
		wf.lastAck = ack
	}
	// acked counts from iss+1: the SYN's sequence number (RFC 9293
	// §3.4) is not data.
	if wf.acked >= wf.bytes {
		wf.done, wf.doneAt = true, e.sim.Now()
		e.remaining--
	}
}

func (e *emulator) newPkt() *packet {
	p := e.free
	if p != nil {
		e.free = p.next
		p.next = nil
		return p
	}
	p = &packet{buf: make([]byte, maxPacket), e: e}
	p.arr = sim.NewEvent(0, sim.KindPacket, 0, p)
	return p
}

func (e *emulator) freePkt(p *packet) {
	p.path = nil
	p.next = e.free
	e.free = p
}

package gvisor

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"runtime/debug"
	"sync/atomic"
	"time"

	"gvisor.dev/gvisor/pkg/buffer"
	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
	"gvisor.dev/gvisor/pkg/tcpip/seqnum"
	gtcp "gvisor.dev/gvisor/pkg/tcpip/transport/tcp"
	"gvisor.dev/gvisor/pkg/waiter"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/sim"
	"github.com/actfuzz/actfuzz/netenv/tcp"
)

// Socket buffers of the stacks. The application reads as soon as data is
// readable, so the receive buffer only bounds the advertised window; the
// send buffer bounds what is written but not yet acknowledged: 4 MB, as
// the native sender's (tcp.DefaultSndBuf, Linux's tcp_wmem[2]), so that a
// fast application cannot write the whole transfer at once and a slow
// phase makes the flow application-limited.
var (
	sndBufRange = tcpip.TCPSendBufferSizeRangeOption{Min: 4 << 10, Default: tcp.DefaultSndBuf, Max: tcp.DefaultSndBuf}
	rcvBufRange = tcpip.TCPReceiveBufferSizeRangeOption{Min: 4 << 10, Default: 64 << 20, Max: 64 << 20}
)

// writeChunk is the most the application writes per call.
const writeChunk = 256 << 10

// zeros is the application's data (read-only, shared by all runs).
var zeros = make([]byte, writeChunk)

// appMSS is the granularity of a rate-limited application's writes.
const appMSS = tcp.DefaultMSS

// harness runs one simulation configuration over two gVisor stacks.
//
// Determinism: the simulator executes one event at a time on the harness
// goroutine. An event that touches a stack (a packet arrival, a gVisor
// timer, an application write) is followed by settle, which waits until the
// stack's processor goroutines are idle with nothing queued (quiescence),
// then lets the applications act, moves armed timers into the event queue
// and hands the packets the stack wrote, in write order, to the link. So at
// most one goroutine works on gVisor at any time and everything it does is
// ordered by the event queue.
type harness struct {
	cfg *netenv.Config
	sim *sim.Sim
	now atomic.Int64 // simulated ns, read by the stacks' clocks

	snd, rcv  *host
	links     []*glink              // in plan order
	nodeOf    map[*glink]sim.NodeID // each link's node
	fwdPath   [][]*glink            // per flow: the links data crosses
	revPath   [][]*glink            // per flow: the links ACKs cross
	multiPath bool                  // flows take different paths (not a single link)
	flows     []*flow
	byPort    map[uint16]*flow // the sender's local port → flow

	listener   tcpip.Endpoint
	listenWQ   waiter.Queue
	acceptable atomic.Bool

	obs    tcp.Observer
	hasher *netenv.TraceHasher

	phase     int
	switchEv  *sim.Event
	remaining int

	timerHost *host  // the host whose timer the current event fired
	timeouts  uint64 // the sender stack's RTO counter at the last look
	fault     error

	progress atomic.Uint64 // settles so far, for the stall watchdog
	abandon  atomic.Bool   // Run has returned (cancelled or hung): stop
	hooks    hooks
	freePkts *wirePkt
	pendBuf  []buffer.Buffer
	probeBuf []snapshot
	hdr      [60]byte
	inHdr    [120]byte  // an arriving packet's IP and TCP headers
	sackBuf  []seqRange // its SACK blocks
}

// flow is one TCP connection from the sender host to the receiver host.
type flow struct {
	h     *harness
	idx   int
	cca   string
	bytes uint64

	ep       *gtcp.Endpoint
	wq       waiter.Queue
	port     uint16
	writable atomic.Bool
	written  uint64
	rd       bytes.Reader

	appRate  uint64 // bit/s, 0 = unlimited
	appBase  uint64
	appSince time.Duration
	blocked  bool // a rate-limited application waits for send buffer space
	appEv    *sim.Event

	established bool
	issKnown    bool
	lastUna     seqnum.Value
	acked       uint64
	maxSent     seqnum.Value
	board       ackBoard // what the receiver's ACKs report: delivered
	done        bool
	doneAt      time.Duration
	aborted     bool // gVisor reset the connection

	rep      tcpip.Endpoint
	rwq      *waiter.Queue
	readable atomic.Bool
	received uint64

	rec       tcp.StateRecord
	vars      []float64
	hasRec    bool
	last      snapshot // the latest probe snapshot
	hasSnap   bool
	stSegs    uint64
	stRetx    uint64
	stRTO     uint64
	stRecover uint64
	lastCC    ccai.CAState // caState of TCP_INFO's CcState at the last event
}

// hooks let tests watch a run.
type hooks struct {
	packet   func(now time.Duration, from string, b *buffer.Buffer) // every packet a host writes
	afterAck func(f *flow, s *snapshot)                             // every ACK's snapshot, at quiescence
}

func newHarness(cfg *netenv.Config, obs tcp.Observer, hk hooks) *harness {
	lim := cfg.Limits
	if lim.MaxTime == 0 {
		lim.MaxTime = netenv.DefaultMaxTime
	}
	if lim.MaxEvents == 0 {
		lim.MaxEvents = netenv.DefaultMaxEvents
	}
	h := &harness{cfg: cfg, sim: sim.New(cfg.Scheduler, lim), remaining: len(cfg.Flows), byPort: map[uint16]*flow{}, hooks: hk}
	h.obs = obs
	if cfg.HashTrace {
		h.hasher = netenv.NewTraceHasher(obs)
		h.obs = h.hasher
	}
	return h
}

// tick publishes the simulator's time to the stacks' clocks.
func (h *harness) tick() { h.now.Store(int64(h.sim.Now())) }

// run executes the configuration. A panic on the harness goroutine (in
// gVisor code called from it, or in the harness) becomes a *netenv.Fault.
func (h *harness) run(ctx context.Context) (res netenv.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &netenv.Fault{Kind: "panic", Detail: fmt.Sprint(r), Stack: string(debug.Stack())}
			// gVisor may be left holding locks: tear down on the side.
			go func() {
				defer func() { _ = recover() }()
				h.teardown()
			}()
		}
	}()
	if err := h.setup(); err != nil {
		h.teardown()
		return netenv.Result{}, err
	}
	if err := h.sim.Run(ctx); err != nil {
		h.teardown()
		return netenv.Result{}, err
	}
	if h.fault != nil {
		h.teardown()
		return netenv.Result{}, h.fault
	}
	res = h.result()
	h.teardown()
	return res, nil
}

func (h *harness) setup() error {
	cfg := h.cfg
	var err error
	h.snd, err = newHost(h, hostConfig{name: "sender", node: 0, addr: senderAddr, seed: cfg.Seed, index: 0,
		sack: cfg.SACK, probe: true, sndBuf: sndBufRange, rcvBuf: rcvBufRange})
	if err != nil {
		return err
	}
	h.rcv, err = newHost(h, hostConfig{name: "receiver", node: 1, addr: receiverAddr, seed: cfg.Seed, index: 1,
		sack: cfg.SACK, sndBuf: sndBufRange, rcvBuf: rcvBufRange})
	if err != nil {
		return err
	}
	env := &cfg.Schedule[0].Env
	h.buildLinks(env)

	// The receiving application: a listener that accepts every flow.
	ep, terr := h.rcv.st.NewEndpoint(gtcp.ProtocolNumber, ipv4.ProtocolNumber, &h.listenWQ)
	if terr != nil {
		return fmt.Errorf("receiver: new endpoint: %v", terr)
	}
	h.listener = ep
	le := waiter.NewFunctionEntry(waiter.ReadableEvents, func(waiter.EventMask) { h.acceptable.Store(true) })
	h.listenWQ.EventRegister(&le)
	if terr := ep.Bind(tcpip.FullAddress{Port: listenPort}); terr != nil {
		return fmt.Errorf("receiver: bind: %v", terr)
	}
	if terr := ep.Listen(len(cfg.Flows) + 8); terr != nil {
		return fmt.Errorf("receiver: listen: %v", terr)
	}

	// The sending applications.
	for i, fc := range cfg.Flows {
		f := &flow{h: h, idx: i, cca: fc.CCA, bytes: fc.Bytes, appRate: appRate(env)}
		f.rec.Flow = int32(i)
		if vd := Vars(fc.CCA); vd != nil {
			f.vars = make([]float64, len(vd))
			f.rec.Vars = f.vars
		}
		f.appEv = sim.NewEvent(h.snd.node, sim.KindTimer, 1, f)
		ep, terr := h.snd.st.NewEndpoint(gtcp.ProtocolNumber, ipv4.ProtocolNumber, &f.wq)
		if terr != nil {
			return fmt.Errorf("sender: new endpoint: %v", terr)
		}
		f.ep = ep.(*gtcp.Endpoint)
		cc := tcpip.CongestionControlOption(fc.CCA)
		if terr := ep.SetSockOpt(&cc); terr != nil {
			return fmt.Errorf("flow %d: congestion control %q: %v", i+1, fc.CCA, terr)
		}
		we := waiter.NewFunctionEntry(waiter.WritableEvents, func(waiter.EventMask) { f.writable.Store(true) })
		f.wq.EventRegister(&we)
		terr = ep.Connect(tcpip.FullAddress{Addr: receiverAddr, Port: listenPort})
		if _, ok := terr.(*tcpip.ErrConnectStarted); !ok && terr != nil {
			return fmt.Errorf("flow %d: connect: %v", i+1, terr)
		}
		la, terr := ep.GetLocalAddress()
		if terr != nil {
			return fmt.Errorf("flow %d: local address: %v", i+1, terr)
		}
		f.port = la.Port
		h.byPort[f.port] = f
		h.flows = append(h.flows, f)
	}
	h.settle(h.snd) // the SYNs enter the link at time 0
	if len(cfg.Schedule) > 1 {
		h.switchEv = sim.NewEvent(sim.ControlNode, sim.KindControl, 0, h)
		h.sim.ScheduleAt(h.switchEv, cfg.Schedule[0].Until)
	}
	return nil
}

// appRate is the application rate in bit/s; rates at or above the
// bottleneck's ×1000 are unlimited (as in the native subject).
func appRate(e *netenv.Env) uint64 {
	if e.App >= e.BW*1000 {
		return 0
	}
	return bps(e.App)
}

// Handle switches to the next phase of the schedule.
func (h *harness) Handle(*sim.Event) {
	h.tick()
	h.phase++
	env := &h.cfg.Schedule[h.phase].Env
	for _, l := range h.links {
		l.Apply(env)
	}
	now := h.sim.Now()
	for _, f := range h.flows {
		if f.appRate == 0 {
			// An unlimited application has written what the send
			// buffer took and waits on it for the rest.
			f.appBase = f.written
			f.blocked = f.written < f.bytes
		} else {
			f.appBase = f.appWritten(now)
		}
		f.appSince = now
		f.appRate = appRate(env)
	}
	if h.phase < len(h.cfg.Schedule)-1 {
		h.sim.ScheduleAt(h.switchEv, h.cfg.Schedule[h.phase].Until)
	}
	h.settle(h.snd)
}

// timerFired notes which host's timer the current event is.
func (h *harness) timerFired(ho *host) {
	h.timerHost = ho
}

// settle finishes an event that touched host ho: wait for quiescence, let
// the applications act, move armed timers into the event queue, and put
// the written packets on the link.
func (h *harness) settle(ho *host) {
	ho.quiesce()
	h.progress.Add(1)
	if h.abandon.Load() {
		h.sim.Stop()
	}
	if ho == h.snd {
		h.afterSender()
	} else {
		h.afterReceiver()
	}
	h.timerHost = nil
	ho.clk.sync()
	h.flush(ho)
}

func (h *harness) afterSender() {
	snaps := h.snd.takeProbes(h.probeBuf[:0])
	for i := range snaps {
		if f := h.byPort[snaps[i].port]; f != nil && f.established && !f.done {
			f.onAck(&snaps[i])
		}
	}
	h.probeBuf = snaps[:0]
	if h.timerHost == h.snd {
		h.afterSenderTimer()
	}
	for _, f := range h.flows {
		if f.done || f.aborted {
			continue
		}
		switch st := f.ep.EndpointState(); {
		case st == gtcp.StateError || st == gtcp.StateClose:
			// gVisor gave up on the connection (SYN or data
			// retransmissions exhausted): the flow ends, not done.
			f.aborted = true
			f.h.sim.Cancel(f.appEv)
			h.flowDone()
			continue
		case !f.established && st == gtcp.StateEstablished:
			f.established = true
			f.writable.Store(true)
			info := f.info()
			f.emitInfo(tcp.ReasonState, &info)
		}
		f.pump()
	}
}

// afterSenderTimer records what a sender timer changed: an RTO (the
// stack's timeout counter moved) or another change of ca_state, cwnd or
// ssthresh.
func (h *harness) afterSenderTimer() {
	t := h.snd.st.Stats().TCP.Timeouts.Value()
	fired := t > h.timeouts
	h.timeouts = t
	for _, f := range h.flows {
		if !f.established || f.done || f.aborted {
			continue
		}
		info := f.info()
		f.peek(&info)
		f.lastCC = caState(info.CcState)
		st := effectiveState(f.lastCC, &f.last)
		rto := fired && (len(h.flows) == 1 || info.RTO > f.rec.RTO)
		// One record per change: the state record of a new ca_state
		// (and an rto record after it), or one for cwnd or ssthresh
		// alone. (moved is taken before emitInfo moves the record:
		// testing f.rec.CAState after it emitted every timer-entered
		// recovery twice.)
		moved := st != f.rec.CAState
		changed := moved || clampWindow(int(info.SndCwnd)) != f.rec.Cwnd ||
			clampWindow(int(info.SndSsthresh)) != f.rec.SSThresh
		if moved {
			f.emitInfo(tcp.ReasonState, &info)
		}
		if rto {
			f.stRTO++
			f.emitInfo(tcp.ReasonRTO, &info)
		} else if changed && !moved {
			f.emitInfo(tcp.ReasonState, &info)
		}
	}
}

func (h *harness) afterReceiver() {
	if h.acceptable.Load() {
		h.acceptable.Store(false)
		for {
			var addr tcpip.FullAddress
			ep, wq, err := h.listener.Accept(&addr)
			if err != nil {
				break
			}
			f := h.byPort[addr.Port]
			if f == nil || f.rep != nil {
				ep.Abort()
				continue
			}
			f.rep, f.rwq = ep, wq
			re := waiter.NewFunctionEntry(waiter.ReadableEvents, func(waiter.EventMask) { f.readable.Store(true) })
			wq.EventRegister(&re)
			f.readable.Store(true)
		}
	}
	for _, f := range h.flows {
		if f.rep == nil || !f.readable.Load() {
			continue
		}
		f.readable.Store(false)
		for {
			r, err := f.rep.Read(io.Discard, tcpip.ReadOptions{})
			if err != nil || r.Count == 0 {
				break
			}
			f.received += uint64(r.Count)
		}
	}
}

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
	n, _ := b.ReadAt(h.hdr[:], 0)
	hd := h.hdr[:n]
	if len(hd) < 20 {
		return
	}
	ihl := int(hd[0]&0xf) * 4
	if len(hd) < ihl+20 {
		return
	}
	th := hd[ihl:]
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

// flowDone ends the run once every flow has finished (or was aborted).
func (h *harness) flowDone() {
	h.remaining--
	if h.remaining == 0 {
		h.sim.Stop()
	}
}

// teardown stops both stacks and their goroutines.
func (h *harness) teardown() {
	for _, ho := range []*host{h.snd, h.rcv} {
		if ho == nil {
			continue
		}
		ho.st.Destroy()
		for _, b := range ho.takePending(nil) {
			b.Release()
		}
	}
}

func (h *harness) result() netenv.Result {
	res := netenv.Result{
		SimTime: h.sim.Now(),
		Events:  h.sim.Events(),
		Capped:  h.sim.Capped(),
	}
	for _, l := range h.links {
		res.AddLink(l)
	}
	if res.Capped {
		res.CapReason = "time"
		if lim := h.cfg.Limits.MaxEvents; (lim == 0 && res.Events >= netenv.DefaultMaxEvents) || (lim > 0 && res.Events >= lim) {
			res.CapReason = "events"
		}
	}
	if h.hasher != nil {
		res.TraceSHA256 = h.hasher.Sum()
	}
	var undos uint64
	if len(h.flows) == 1 {
		undos = h.snd.st.Stats().TCP.SpuriousRecovery.Value()
	}
	for _, f := range h.flows {
		r := &f.rec
		res.Flows = append(res.Flows, netenv.FlowResult{
			CCA:            f.cca,
			SegmentsSent:   f.stSegs,
			Retransmits:    f.stRetx,
			Timeouts:       f.stRTO,
			Recoveries:     f.stRecover,
			Undos:          undos,
			DeliveredBytes: f.received,
			Done:           f.done,
			DoneAtS:        f.doneAt.Seconds(),
			Final: netenv.FinalState{
				Cwnd: r.Cwnd, SSThresh: r.SSThresh,
				SRTTms:   float64(r.SRTT) / 1e6,
				RTTVarMs: float64(r.RTTVar) / 1e6,
				CAState:  r.CAState.String(),
			},
		})
	}
	return res
}

// Handle runs a rate-limited application's next write.
func (f *flow) Handle(*sim.Event) {
	f.h.tick()
	f.h.settle(f.h.snd)
}

// appWritten is how many bytes the application has produced by now.
func (f *flow) appWritten(now time.Duration) uint64 {
	if f.appRate == 0 {
		return f.bytes
	}
	if f.blocked {
		return f.appBase
	}
	hi, lo := bits.Mul64(f.appRate, uint64(now-f.appSince))
	const div = 8 * uint64(time.Second)
	if hi >= div {
		return f.bytes
	}
	q, _ := bits.Div64(hi, lo, div)
	return min(f.appBase+q, f.bytes)
}

// appTimeFor is when the application will have produced n bytes.
func (f *flow) appTimeFor(n uint64) time.Duration {
	need := n - f.appBase
	hi, lo := bits.Mul64(need, 8*uint64(time.Second))
	if hi >= f.appRate {
		return netenv.DefaultMaxTime * 2
	}
	q, r := bits.Div64(hi, lo, f.appRate)
	if r != 0 {
		q++
	}
	return f.appSince + time.Duration(q)
}

// pump writes what the application has produced, as far as the send
// buffer takes it. A rate-limited application whose write finds the buffer
// full blocks, producing nothing, until the stack says it is writable
// again, and then goes on at its rate (as the native sender's application,
// netenv/tcp/app.go).
func (f *flow) pump() {
	if !f.established || f.done || f.written >= f.bytes {
		return
	}
	now := f.h.sim.Now()
	if f.blocked {
		if !f.writable.Load() {
			return
		}
		f.blocked = false
		f.appSince = now
	}
	target := f.appWritten(now)
	if f.appRate > 0 && target < f.bytes {
		// A rate-limited application writes whole segments (as
		// natively and on ns-3), not the few bytes produced since the
		// last ACK: gVisor, without Nagle, would send each as a runt.
		target = f.written + (target-min(f.written, target))/appMSS*appMSS
	}
	before := f.written
	for f.written < target && f.writable.Load() {
		n := min(target-f.written, writeChunk)
		f.rd.Reset(zeros[:n])
		m, err := f.ep.Write(&f.rd, tcpip.WriteOptions{})
		f.written += uint64(m)
		if err != nil {
			if _, ok := err.(*tcpip.ErrWouldBlock); !ok {
				f.fail(fmt.Errorf("flow %d: write: %v", f.idx+1, err))
			}
			f.writable.Store(false)
			break
		}
		if m == 0 {
			f.writable.Store(false)
			break
		}
	}
	if f.appRate > 0 && f.written > before {
		f.afterWrite()
	}
	if f.appRate > 0 && f.written < target && !f.writable.Load() {
		f.blocked = true
		f.appBase, f.appSince = f.written, now
		return
	}
	if f.appRate > 0 && f.written < f.bytes && f.written >= target {
		f.h.sim.ScheduleAt(f.appEv, f.appTimeFor(min(f.written+appMSS, f.bytes)))
	}
}

// afterWrite records what a write of a rate-limited application changed:
// gVisor's sendData, run by the write, restarts an idle connection's cwnd
// at the initial window (RFC 5681 §4.1, snd.go sendData: no segment sent
// for an RTO). No probe runs then, and without a record the next ACK's
// record showed the window grow from the old one (an unlimited
// application writes on every ACK and never idles).
func (f *flow) afterWrite() {
	info := f.info()
	if effectiveState(caState(info.CcState), &f.last) == f.rec.CAState && clampWindow(int(info.SndCwnd)) == f.rec.Cwnd &&
		clampWindow(int(info.SndSsthresh)) == f.rec.SSThresh {
		return
	}
	f.peek(&info)
	f.emitInfo(tcp.ReasonState, &info)
}

// fail ends the run with a fault: the stack refused what a healthy stack
// accepts.
func (f *flow) fail(err error) {
	if f.h.fault == nil {
		f.h.fault = &netenv.Fault{Kind: "error", Detail: err.Error()}
	}
	f.h.sim.Stop()
}

// info reads TCP_INFO from the harness goroutine (at quiescence).
func (f *flow) info() tcpip.TCPInfoOption {
	var info tcpip.TCPInfoOption
	if err := f.ep.GetSockOpt(&info); err != nil {
		f.fail(fmt.Errorf("flow %d: TCP_INFO: %v", f.idx+1, err))
	}
	return info
}

// onAck records the state after gVisor processed one ACK: the probe's
// snapshot, with ca_state from TCP_INFO (the probe does not carry it).
func (f *flow) onAck(s *snapshot) {
	if f.h.hooks.afterAck != nil {
		f.h.hooks.afterAck(f, s)
	}
	info := f.info()
	prev, hadSnap := f.last, f.hasSnap
	f.last, f.hasSnap = *s, true
	if f.lastUna.LessThan(s.una) {
		f.acked += uint64(uint32(s.una - f.lastUna))
		f.lastUna = s.una
	}
	cc := caState(info.CcState)
	st := effectiveState(cc, s)
	// A TLP episode on this ACK: gVisor's CcState turned to a recovery
	// that is not active, or, in one, ssthresh was reduced again.
	tlp := cc == ccai.StateRecovery && !s.recovering &&
		(f.lastCC != ccai.StateRecovery || hadSnap && s.ssthresh != prev.ssthresh)
	f.lastCC = cc
	r := &f.rec
	switch {
	case r.CAState == ccai.StateRecovery && (st == ccai.StateOpen || st == ccai.StateDisorder),
		hadSnap && st == ccai.StateRecovery && (r.CAState == ccai.StateRecovery || r.CAState == ccai.StateLoss) &&
			prev.recLast.LessThan(s.una):
		f.passOpen(s)
	}
	if tlp {
		f.tlpEpisode(s)
	}
	reason := tcp.ReasonAck
	if f.hasRec && st != r.CAState {
		reason = tcp.ReasonState
	}
	f.transition(st)
	r.Cwnd = clampWindow(s.cwnd)
	r.SSThresh = clampWindow(s.ssthresh)
	r.SRTT, r.RTTVar, r.RTO = s.srtt, s.rttvar, s.rto
	r.InFlight = f.inFlight(s, st)
	f.emit(reason)
	if f.acked >= f.bytes {
		f.done = true
		f.doneAt = f.h.sim.Now()
		f.h.sim.Cancel(f.appEv)
		f.h.flowDone()
	}
}

// passOpen records the Open state that an ACK acknowledging the recovery
// point of the recovery or timeout in force (RFC 6582 §3.2 step 3, full
// acknowledgment) puts the sender in before the rest of the ACK's
// processing, which no probe shows (the probe runs after the whole ACK).
// gVisor's handleRcvdSegment leaves a fast recovery with leaveRecovery
// (SndCwnd = Ssthresh: the reduction completed), then grows cwnd by
// cc.Update for every packet the ACK acknowledged (a full ACK after a
// recovery acknowledges the repaired hole and all that was SACKed above
// it: several packets of growth, 2 to 49 in the campaign's recovery-exit
// hits), and may enter a new recovery on the same ACK (RACK or the
// duplicate-ACK count: HandleLossDetected, enterRecovery). The record is
// the state the native subject records at the change itself: ca_state
// open, ssthresh and cwnd as leaveRecovery leaves them, or, after a
// timeout (no deflation), the last recorded cwnd; the CCA's variables
// stay as last recorded. The ACK's own record follows (reason ack, or
// state when it entered a new recovery). Without it the grown cwnd looked
// like a recovery ending half-way (recovery-exit), and two recoveries
// like one whose ssthresh fell twice (ssthresh-steady) whose second
// reduction was never checked as an entry from Open.
func (f *flow) passOpen(s *snapshot) {
	r := &f.rec
	cwnd := r.Cwnd
	if r.CAState == ccai.StateRecovery {
		cwnd = r.SSThresh
	}
	f.transition(ccai.StateOpen)
	r.Cwnd = cwnd
	r.InFlight = f.inFlight(s, ccai.StateOpen)
	f.emitKeepVars(tcp.ReasonState)
}

// effectiveState is the ca_state of a sender whose TCP_INFO reports cc
// and whose latest snapshot is s: cc, but Open where cc is a recovery
// that is not active (FastRecovery.Active false). That is the state a TLP
// episode leaves: an ACK that ends a tail loss probe without a D-SACK
// calls HandleLossDetected, enterRecovery and leaveRecovery at once
// (pkg/tcpip/transport/tcp/rack.go detectTLPRecovery; RFC 8985 §7.4.2,
// a response "equivalent to fast recovery"), so the reduction is done
// and fast recovery is over, but enterRecovery's state (SACKRecovery,
// which CcState reports) stays until an ACK passes the recovery point
// (snd.go handleRcvdSegment sets Open only then). In between, gVisor
// acts as out of recovery: cc.Update grows cwnd on every ACK (snd.go
// handleRcvdSegment), and a loss RACK detects, on an ACK or on its
// reorder timer (rack.go reorderTimerExpired), starts a new recovery
// with a reduction of its own. Recorded as a recovery, the episode and
// that growth looked like a recovery whose ssthresh fell twice
// (ssthresh-steady) or that ended above ssthresh (recovery-exit). Linux
// does the same in its own terms: tcp_process_tlp_ack enters CWR, ends
// the reduction and returns to Open on the one ACK (net/ipv4/tcp_input.c).
func effectiveState(cc ccai.CAState, s *snapshot) ccai.CAState {
	if cc == ccai.StateRecovery && !s.recovering {
		return ccai.StateOpen
	}
	return cc
}

// tlpEpisode records the reduction of a TLP episode on the ACK of
// snapshot s (effectiveState): the record entering recovery with the
// reduced ssthresh and cwnd as leaveRecovery left it (= ssthresh), then
// the record of Open that leaveRecovery leaves, before the ACK's own
// record, which holds the ACK's growth (measured: cwnd 4 → 6 on the ACK
// of a Reno TLP episode; recorded as the recovery's end, it was a
// recovery-exit hit). The CCA's variables are those after the reduction.
func (f *flow) tlpEpisode(s *snapshot) {
	r := &f.rec
	f.transition(ccai.StateRecovery)
	r.Cwnd = clampWindow(s.ssthresh)
	r.SSThresh = clampWindow(s.ssthresh)
	r.InFlight = f.inFlight(s, ccai.StateOpen)
	f.emit(tcp.ReasonState)
	// leaveRecovery's Open (cwnd = ssthresh), before the ACK's growth
	// (cc.Update, as on any ACK out of fast recovery), as for the end of
	// any recovery (passOpen).
	f.passOpen(s)
}

// peek refreshes the flow's latest snapshot from the sender's state
// (peekSender), so that records a timer causes carry in-flight and the
// CCA's variables as they are now, not as of the last ACK.
func (f *flow) peek(info *tcpip.TCPInfoOption) {
	snd, cubic, isCubic, ok := peekSender(f.ep)
	if !ok {
		return
	}
	s := snapshot{
		port: f.port, una: snd.SndUna, nxt: snd.SndNxt, recovering: snd.FastRecovery.Active, recLast: snd.FastRecovery.Last,
		cwnd: snd.SndCwnd, ssthresh: snd.Ssthresh,
		srtt: info.RTT, rttvar: info.RTTVar, rto: snd.RTO,
		outstanding: snd.Outstanding, sackedOut: snd.SackedOut, mss: snd.MaxPayloadSize,
	}
	if isCubic {
		s.cubic = cubicVars{
			wMax: cubic.WMax, wLastMax: cubic.WLastMax, k: cubic.K, c: cubic.C,
			wc: cubic.WC, wEst: cubic.WEst,
			sinceEpoch: f.h.snd.clk.NowMonotonic().Sub(cubic.T),
		}
	}
	f.last, f.hasSnap = s, true
	f.rec.InFlight = f.inFlight(&s, effectiveState(caState(info.CcState), &s))
}

// inFlight is the packets in flight as Linux counts them
// (tcp_packets_in_flight: packets_out − sacked_out − lost_out +
// retrans_out), from gVisor's state in state st.
//
// In gVisor's fast or SACK recovery and in RTO recovery it is gVisor's own
// Outstanding: RFC 6675's pipe, which SetPipe recomputes on every ACK of
// a recovery (pkg/tcpip/transport/tcp/snd.go SetPipe), and after a
// timeout the segments sent since (retransmitTimerExpired sets it to 0:
// everything outstanding is taken as lost, as Linux's tcp_enter_loss marks
// it). Elsewhere gVisor marks nothing lost, and in_flight is the segments
// sent and not cumulatively acknowledged less those SACKed, from the
// sequence numbers and the harness's own SACK scoreboard (ackBoard):
// gVisor's Outstanding there still holds SACKed segments, and segments
// SACKed outside a recovery stay in it after their cumulative ACK
// (handleRcvdSegment takes a SACKed segment off SackedOut, not off
// Outstanding; only SetPipe, in a recovery, and an ACK of everything
// recompute it), and SackedOut is no count of SACKed segments (see
// ackBoard): Outstanding − SackedOut, used before, double-counted SACKs in
// recovery and could exceed what was sent.
func (f *flow) inFlight(s *snapshot, st ccai.CAState) uint32 {
	if s.recovering || st == ccai.StateLoss {
		return uint32(max(s.outstanding, 0))
	}
	mss := uint64(max(s.mss, 1))
	out := uint64(s.una.Size(s.nxt))
	if s.una.LessThan(s.nxt) && f.board.sbytes < out {
		return uint32((out - f.board.sbytes + mss - 1) / mss)
	}
	return 0
}

// emitInfo records the state read from TCP_INFO, with in-flight and the
// CCA's variables from the latest snapshot.
func (f *flow) emitInfo(reason tcp.Reason, info *tcpip.TCPInfoOption) {
	r := &f.rec
	f.transition(effectiveState(caState(info.CcState), &f.last))
	r.Cwnd = clampWindow(int(info.SndCwnd))
	r.SSThresh = clampWindow(int(info.SndSsthresh))
	r.SRTT, r.RTTVar, r.RTO = info.RTT, info.RTTVar, info.RTO
	f.emit(reason)
}

// transition moves the record to ca_state st (tcp.StateRecord's
// ObserveTransition), counting recoveries. Where ObserveTransition sets
// prior_cwnd (entering recovery, or loss from open or disorder), a CUBIC
// flow's is the cwnd gVisor reduced from: WLastMax, which
// HandleLossDetected and HandleRTOExpired set to SndCwnd (cubic.go
// fastConvergence). The last recorded cwnd may be lower: gVisor grows
// cwnd on a cumulative ACK (cc.Update) before RACK detects a loss on the
// same ACK (snd.go handleRcvdSegment), and CUBIC's growth on one ACK can
// be several segments.
func (f *flow) transition(st ccai.CAState) {
	from := f.rec.CAState
	if !f.rec.ObserveTransition(st, !f.hasRec) {
		return
	}
	if st == ccai.StateRecovery {
		f.stRecover++
	}
	sets := st == ccai.StateRecovery || st == ccai.StateLoss && (from == ccai.StateOpen || from == ccai.StateDisorder)
	if sets && f.vars != nil && f.hasSnap && f.last.cubic.wLastMax >= 1 {
		f.rec.PriorCwnd = clampFloatWindow(f.last.cubic.wLastMax)
	}
}

func (f *flow) emit(reason tcp.Reason) { f.emitRecord(reason, true) }

// emitKeepVars emits a record whose CCA variables stay as last recorded.
func (f *flow) emitKeepVars(reason tcp.Reason) { f.emitRecord(reason, false) }

func (f *flow) emitRecord(reason tcp.Reason, vars bool) {
	r := &f.rec
	r.Time = f.h.sim.Now()
	r.Reason = reason
	if f.hasSnap {
		r.Delivered = f.board.delivered
		if f.vars != nil && vars {
			f.last.cubic.fill(f.vars, r.SRTT, f.last.cubic.grows(&f.last, r))
		}
	}
	f.hasRec = true
	if f.h.obs != nil {
		f.h.obs.Observe(r)
	}
}

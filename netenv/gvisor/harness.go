package gvisor

// harness.go holds the harness: its state, the setup of the two stacks,
// the listener and the flows, the run and its schedule's phases,
// teardown and the result.

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"time"

	"gvisor.dev/gvisor/pkg/buffer"
	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
	gtcp "gvisor.dev/gvisor/pkg/tcpip/transport/tcp"
	"gvisor.dev/gvisor/pkg/waiter"

	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
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

	obs    observe.Observer
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

// hooks let tests watch a run.
type hooks struct {
	packet   func(now time.Duration, from string, b *buffer.Buffer) // every packet a host writes
	afterAck func(f *flow, s *snapshot)                             // every ACK's snapshot, at quiescence
}

func newHarness(cfg *netenv.Config, obs observe.Observer, hk hooks) *harness {
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
			return fmt.Errorf("flow %d: congestion control %q: %v", i, fc.CCA, terr)
		}
		we := waiter.NewFunctionEntry(waiter.WritableEvents, func(waiter.EventMask) { f.writable.Store(true) })
		f.wq.EventRegister(&we)
		terr = ep.Connect(tcpip.FullAddress{Addr: receiverAddr, Port: listenPort})
		if _, ok := terr.(*tcpip.ErrConnectStarted); !ok && terr != nil {
			return fmt.Errorf("flow %d: connect: %v", i, terr)
		}
		la, terr := ep.GetLocalAddress()
		if terr != nil {
			return fmt.Errorf("flow %d: local address: %v", i, terr)
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
	res.NoteCap(h.cfg.Limits)
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

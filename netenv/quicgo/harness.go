package quicgo

// harness.go holds the harness: the links between the endpoints, the
// real-time driver of the link model, setup, teardown and the result.

import (
	"context"
	"crypto/tls"
	"fmt"
	"math"
	"net"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
	"github.com/actfuzz/actfuzz/netenv/sim"
)

// serverPort and clientPort0 are the endpoints' UDP ports: the server's,
// and flow i's client at clientPort0+i.
const (
	serverPort  = 443
	clientPort0 = 10000
)

// udpOverhead is what a datagram's IPv4 and UDP headers add on the wire.
const udpOverhead = 28

// qlink is a link carrying datagrams.
type qlink = netenv.Link[*wirePkt]

// wirePkt is one datagram on the links.
type wirePkt struct {
	h    *harness
	d    datagram
	path []*qlink
	hop  int
	dst  *pconn
	arr  *sim.Event
}

// WireBytes implements netenv.LinkPacket.
func (p *wirePkt) WireBytes() uint32 { return uint32(len(p.d.b)) + udpOverhead }

// Handle passes the datagram to the next link of its path, or delivers it.
func (p *wirePkt) Handle(*sim.Event) {
	if p.hop+1 < len(p.path) {
		p.hop++
		p.path[p.hop].Send(p)
		return
	}
	p.dst.deliver(p.d)
}

// harness runs one configuration: the link model (netenv/sim) in real
// time on the harness goroutine, quic-go's endpoints on their own.
type harness struct {
	cfg   *netenv.Config
	sim   *sim.Sim
	start time.Time

	mu    sync.Mutex
	inbox []outPkt // written by the endpoints, not yet on a link
	wake  chan struct{}

	links            []*qlink
	fwdPath, revPath [][]*qlink
	server           *pconn
	flows            []*flow
	phase            int
	switchEv         *sim.Event

	obsMu  sync.Mutex
	obs    observe.Observer
	hasher *netenv.TraceHasher

	remaining atomic.Int32  // flows not done
	progress  atomic.Uint64 // driver iterations, for the watchdog
	abandon   atomic.Bool

	tlsServer, tlsClient *tls.Config
	srvTr                *quic.Transport
	listener             *quic.Listener
	wg                   sync.WaitGroup // the applications' goroutines
	appErr               chan error     // capacity 1: the first application error
}

// outPkt is a datagram an endpoint wrote.
type outPkt struct {
	from *pconn
	to   *net.UDPAddr
	b    []byte
}

func newHarness(cfg *netenv.Config, obs observe.Observer, cert tls.Certificate) *harness {
	lim := cfg.Limits
	if lim.MaxTime == 0 || lim.MaxTime > DefaultMaxTime {
		lim.MaxTime = DefaultMaxTime
	}
	if lim.MaxEvents == 0 {
		lim.MaxEvents = netenv.DefaultMaxEvents
	}
	h := &harness{cfg: cfg, sim: sim.New(cfg.Scheduler, lim), wake: make(chan struct{}, 1), obs: obs, appErr: make(chan error, 1)}
	if cfg.HashTrace {
		h.hasher = netenv.NewTraceHasher(obs)
		h.obs = h.hasher
	}
	h.tlsServer = &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{alpn}}
	h.tlsClient = &tls.Config{InsecureSkipVerify: true, NextProtos: []string{alpn}, ServerName: "actfuzz"}
	return h
}

// now is the run's time: the wall clock since the start.
func (h *harness) now() time.Duration { return time.Since(h.start) }

func (h *harness) poke() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// observe hands a record to the observer; records of several flows come
// from several goroutines.
func (h *harness) observe(r *observe.Record) {
	if h.obs == nil {
		return
	}
	h.obsMu.Lock()
	h.obs.Observe(r)
	h.obsMu.Unlock()
}

// submit queues a datagram an endpoint wrote for the driver.
func (h *harness) submit(from *pconn, to *net.UDPAddr, b []byte) {
	h.mu.Lock()
	h.inbox = append(h.inbox, outPkt{from, to, b})
	h.mu.Unlock()
	h.poke()
}

// buildLinks creates the topology's links (netenv.PlanTopology, as every
// Go subject) and the flows' paths.
func (h *harness) buildLinks(env *netenv.Env) {
	plan := netenv.PlanTopology(h.cfg.Topology, len(h.cfg.Flows))
	for i, spec := range plan.Links {
		l := netenv.NewLink(h.sim, netenv.LinkConfig[*wirePkt]{
			Kind: spec.Kind, Node: sim.NodeID(2 + i), Seed: h.cfg.Seed, Index: uint64(i),
			Drop: func(*wirePkt) {}, UserTraces: h.cfg.LinkTraces,
			Deliver: func(p *wirePkt, delay time.Duration, _ int16) { h.sim.Schedule(p.arr, delay) },
		})
		l.Apply(env)
		h.links = append(h.links, l)
	}
	h.fwdPath, h.revPath = netenv.Paths(plan, h.links)
}

// inject puts a written datagram on the first link of its flow's path.
// A datagram to or from an unknown port is dropped.
func (h *harness) inject(o outPkt) {
	var path []*qlink
	var dst *pconn
	if o.from == h.server {
		i := o.to.Port - clientPort0
		if i < 0 || i >= len(h.flows) {
			return
		}
		path, dst = h.revPath[i], h.flows[i].conn
	} else {
		if o.to.Port != serverPort {
			return
		}
		path, dst = h.fwdPath[o.from.addr.Port-clientPort0], h.server
	}
	p := &wirePkt{h: h, d: datagram{b: o.b, from: o.from.addr}, path: path, dst: dst}
	p.arr = sim.NewEvent(dst.node(h), sim.KindPacket, 0, p)
	path[0].Send(p)
}

// node is the simulator node of an endpoint: the server 1, clients 0.
func (c *pconn) node(h *harness) sim.NodeID {
	if c == h.server {
		return 1
	}
	return 0
}

// Handle switches to the next phase of the schedule.
func (h *harness) Handle(*sim.Event) {
	h.phase++
	env := &h.cfg.Schedule[h.phase].Env
	for _, l := range h.links {
		l.Apply(env)
	}
	for _, f := range h.flows {
		f.appRate.Store(appRate(env))
	}
	if h.phase < len(h.cfg.Schedule)-1 {
		h.sim.ScheduleAt(h.switchEv, h.cfg.Schedule[h.phase].Until)
	}
}

// drive runs the link model in real time until every flow is done, a
// cap is reached or ctx ends: the simulator is advanced to the wall
// clock's time whenever the driver wakes (at the next due event, or when
// an endpoint wrote), and written datagrams enter their first link at the
// time the driver takes them.
func (h *harness) drive(ctx context.Context) error {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var in []outPkt
	for {
		now := h.now()
		next, pending := h.sim.RunUntil(now)
		h.mu.Lock()
		in, h.inbox = h.inbox, in[:0]
		h.mu.Unlock()
		for i := range in {
			h.inject(in[i])
			in[i] = outPkt{}
		}
		if len(in) > 0 {
			next, pending = h.sim.RunUntil(now)
		}
		h.progress.Add(1)
		if h.remaining.Load() == 0 || h.sim.Stopped() || h.abandon.Load() {
			return nil
		}
		select {
		case err := <-h.appErr:
			return err
		default:
		}
		wait := 100 * time.Millisecond
		if pending {
			wait = min(wait, next-h.now())
		}
		if wait <= 0 {
			continue
		}
		timer.Reset(wait)
		select {
		case <-timer.C:
		case <-h.wake:
			if !timer.Stop() {
				<-timer.C
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// run sets up the endpoints, drives the run and tears down. A panic on
// the harness goroutine becomes a *netenv.Fault.
func (h *harness) run(ctx context.Context) (res netenv.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &netenv.Fault{Kind: "panic", Detail: fmt.Sprint(r), Stack: string(debug.Stack())}
		}
	}()
	h.start = time.Now()
	env := &h.cfg.Schedule[0].Env
	h.buildLinks(env)
	if len(h.cfg.Schedule) > 1 {
		h.switchEv = sim.NewEvent(sim.ControlNode, sim.KindControl, 0, h)
		h.sim.ScheduleAt(h.switchEv, h.cfg.Schedule[0].Until)
	}
	appCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := h.setup(appCtx, env); err != nil {
		h.teardown(cancel)
		return netenv.Result{}, err
	}
	err = h.drive(ctx)
	h.teardown(cancel)
	if err != nil {
		return netenv.Result{}, err
	}
	return h.result(), nil
}

// teardown closes the endpoints and waits for the applications.
func (h *harness) teardown(cancel context.CancelFunc) {
	cancel()
	for _, f := range h.flows {
		f.close()
	}
	if h.listener != nil {
		_ = h.listener.Close()
	}
	if h.srvTr != nil {
		_ = h.srvTr.Close()
	}
	if h.server != nil {
		_ = h.server.Close()
	}
	h.wg.Wait()
}

func (h *harness) result() netenv.Result {
	res := netenv.Result{SimTime: h.sim.Now(), Events: h.sim.Events(), Capped: h.sim.Capped()}
	for _, l := range h.links {
		res.AddLink(l)
	}
	res.NoteCap(h.cfg.Limits)
	if h.hasher != nil {
		res.TraceSHA256 = h.hasher.Sum()
	}
	for _, f := range h.flows {
		res.Flows = append(res.Flows, f.result())
	}
	return res
}

func bps(mbps float64) uint64 { return uint64(math.Round(mbps * 1e6)) }

// appRate is the application's rate in bit/s, 0 for unlimited (≥ 1000×
// the bottleneck, as in the native and gVisor subjects).
func appRate(e *netenv.Env) uint64 {
	if e.App >= e.BW*1000 {
		return 0
	}
	return bps(e.App)
}

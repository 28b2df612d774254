package netenv

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv/observe"
	"github.com/actfuzz/actfuzz/netenv/sim"
	"github.com/actfuzz/actfuzz/netenv/tcp"
)

// Default guards of a run.
const (
	DefaultMaxTime   = 4 * time.Hour
	DefaultMaxEvents = 20_000_000
	// MaxFlows (max_flows) caps the flows of a configuration (a
	// campaign's ccai: list, a seed's): each flow is a sender, a
	// receiver and their buffers, allocated before the first event, so
	// the event cap does not bound them. Fairness studies run tens.
	MaxFlows     = 256
	DefaultBytes = 15_000_000 // ACT §4.1: 15 MB per flow
)

// Flow is one TCP flow of a run.
type Flow struct {
	CCA   string `json:"cca"`
	Bytes uint64 `json:"bytes"`
}

// Config is everything a native run needs: G = (seed, schedule) plus the
// test input's flows, topology and TCP options.
type Config struct {
	Seed     uint64
	Schedule Schedule
	Flows    []Flow
	Topology string // TopoSingleLink (default), TopoDumbbell or TopoParkingLot
	SACK     bool
	Profile  ccai.Profile
	Limits   sim.Limits // zero fields take the defaults
	// HashTrace computes Result.TraceSHA256 over every state record.
	HashTrace bool
	// Scheduler replaces the default heap (the symbolic back-end).
	Scheduler sim.Scheduler
	// DelayHook replaces the random queuing delay of chosen packets on the
	// bottleneck, in either direction (data or ACKs). A snapshot of a
	// Session (netenv/snapshot) does not see the hook's own state: a hook
	// with state (counting packets, say) passes it to snapshot.Take as a
	// root.
	DelayHook DelayHook `snapshot:"shared"`
	// DelayHookAdds makes DelayHook's delays extra delays on top of the
	// random queuing delay, which hooked packets then draw too, so that
	// every other packet keeps its random delay (symbolic plus random).
	DelayHookAdds bool
	// Handshake opens every connection with SYN and SYN-ACK before data
	// (native subject; ns-3 and gVisor always do).
	Handshake bool
	// LinkTraces are the user's trace files that link_trace user1 …
	// user4 name (Setup.LinkTraces), loaded: immutable (and each holds a
	// sync.Once, which a snapshot must not copy back).
	LinkTraces []*LinkTraceFile `snapshot:"shared"`
	// PacketTap, when set, sees every segment each sender sends and
	// every packet reaching it (packettap.go).
	PacketTap PacketTap `snapshot:"shared"`
}

// FlowResult is the outcome of one flow.
type FlowResult struct {
	CCA            string     `json:"cca"`
	SegmentsSent   uint64     `json:"segments_sent"`
	Retransmits    uint64     `json:"retransmits"`
	Timeouts       uint64     `json:"timeouts"`
	Recoveries     uint64     `json:"recoveries"`
	Undos          uint64     `json:"undos"`
	ECNReductions  uint64     `json:"ecn_reductions,omitempty"` // CWR episodes started by ECE
	DeliveredBytes uint64     `json:"delivered_bytes"`
	Done           bool       `json:"done"`
	DoneAtS        float64    `json:"done_at_s"`
	SynRetransmits uint64     `json:"syn_retransmits,omitempty"`
	ConnectFailed  bool       `json:"connect_failed,omitempty"`
	Final          FinalState `json:"final"`
}

// FinalState is a flow's state at the end of the run.
type FinalState struct {
	Cwnd     uint32  `json:"cwnd"`
	SSThresh uint32  `json:"ssthresh"`
	SRTTms   float64 `json:"srtt_ms"`
	RTTVarMs float64 `json:"rttvar_ms"`
	CAState  string  `json:"ca_state"`
}

// Result summarizes a run.
type Result struct {
	SimTime     time.Duration `json:"-"`
	Wall        time.Duration `json:"-"`
	Events      uint64        `json:"events"`
	Capped      bool          `json:"capped"`
	CapReason   string        `json:"cap_reason,omitempty"`
	TraceSHA256 string        `json:"trace_sha256,omitempty"`
	Drops       uint64        `json:"drops"`
	Losses      uint64        `json:"losses"`
	AQMDrops    uint64        `json:"aqm_drops,omitempty"` // RED's and CoDel's drops
	Policed     uint64        `json:"policed,omitempty"`   // the policer's drops
	Marks       uint64        `json:"ecn_marks,omitempty"` // packets marked CE
	Flows       []FlowResult  `json:"flows"`
}

// LinkCounters are a link's drop counters ([Link] has them).
type LinkCounters interface {
	Drops() uint64
	Losses() uint64
	AQMDrops() uint64
	Policed() uint64
	Marks() uint64
}

// NoteCap sets CapReason of a capped run: "events" when it used the event
// budget of lim (DefaultMaxEvents when unset), "time" otherwise.
func (r *Result) NoteCap(lim sim.Limits) {
	if !r.Capped {
		return
	}
	r.CapReason = "time"
	if m := lim.MaxEvents; (m == 0 && r.Events >= DefaultMaxEvents) || (m > 0 && r.Events >= m) {
		r.CapReason = "events"
	}
}

// AddLink adds a link's drops to the result.
func (r *Result) AddLink(l LinkCounters) {
	r.Drops += l.Drops()
	r.Losses += l.Losses()
	r.AQMDrops += l.AQMDrops()
	r.Policed += l.Policed()
	r.Marks += l.Marks()
}

// Fault is a misbehaving subject: a CCAI panic. Campaigns record it as a
// finding; it never crashes them.
type Fault struct {
	Kind   string // "panic"
	Detail string
	Stack  string
}

func (f *Fault) Error() string { return fmt.Sprintf("subject fault (%s): %s", f.Kind, f.Detail) }

// Validate checks a configuration and names the offending field. Whether
// a flow's CCA exists is the subject's business (the native subject checks
// the ccai registry).
func (c *Config) Validate() error {
	if len(c.Flows) == 0 {
		return fmt.Errorf("flows: at least one flow is needed")
	}
	if len(c.Flows) > MaxFlows {
		return fmt.Errorf("flows: %d, over the cap of %d (max_flows)", len(c.Flows), MaxFlows)
	}
	for i, f := range c.Flows {
		if f.CCA == "" {
			return fmt.Errorf("flow %d: cca is empty", i)
		}
		if f.Bytes == 0 {
			return fmt.Errorf("flow %d: bytes must be > 0", i)
		}
	}
	switch c.Topology {
	case "", TopoSingleLink, TopoDumbbell, TopoParkingLot:
	default:
		return fmt.Errorf("topology %q: want %s, %s or %s", c.Topology, TopoSingleLink, TopoDumbbell, TopoParkingLot)
	}
	if err := c.Schedule.Validate(); err != nil {
		return err
	}
	return checkUserTraces(c.Schedule, c.LinkTraces)
}

// run holds one native simulation.
type run struct {
	cfg       *Config
	sim       *sim.Sim
	links     []*link   // every link, for environment switches and counters
	fwdPath   [][]*link // per flow: the links data crosses
	revPath   [][]*link // per flow: the links ACKs cross
	senders   []*tcp.Sender
	ackEnds   []sim.Handler // per flow: where its ACKs end (the sender, or the tap before it)
	receivers []*tcp.Receiver
	phase     int
	switchEv  *sim.Event
	remaining int
	obs       observe.Observer
	hasher    *traceHasher
}

// Run simulates cfg, streaming every state record to obs (which may be
// nil). A CCAI panic is returned as a *Fault.
func Run(ctx context.Context, cfg Config, obs observe.Observer) (Result, error) {
	s, err := NewSession(cfg, obs)
	if err != nil {
		return Result{}, err
	}
	return s.Finish(ctx)
}

// Session is a native run that stops between events when asked and goes
// on: the symbolic back-end runs a window's prefix once, saves the session
// with netenv/snapshot (the session is the root of everything the run
// holds) and restores it for every branch. A CCAI panic is a *Fault, as in
// Run.
type Session struct {
	r     *run
	cfg   Config
	start time.Time
}

// NewSession prepares cfg's run (everything Run does before the first
// event).
func NewSession(cfg Config, obs observe.Observer) (s *Session, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	for i, f := range cfg.Flows {
		if _, ok := ccai.Lookup(f.CCA); !ok {
			return nil, fmt.Errorf("flow %d: unknown congestion control %q (known: %v)", i, f.CCA, ccai.Names())
		}
	}
	defer recoverFault(&err)
	s = &Session{cfg: cfg, start: time.Now()}
	s.r = newRun(&s.cfg, obs)
	return s, nil
}

// recoverFault turns a panic of a run into a *Fault.
func recoverFault(err *error) {
	if r := recover(); r != nil {
		*err = &Fault{Kind: "panic", Detail: fmt.Sprint(r), Stack: string(debug.Stack())}
	}
}

// Events is the number of events executed so far.
func (s *Session) Events() uint64 { return s.r.sim.Events() }

// Now is the simulated time.
func (s *Session) Now() time.Duration { return s.r.sim.Now() }

// RunTo executes events until events have run in all, or the run ends.
func (s *Session) RunTo(ctx context.Context, events uint64) (err error) {
	defer recoverFault(&err)
	return s.r.sim.RunTo(ctx, events)
}

// Finish runs to the end and returns the result; Wall counts from
// NewSession.
func (s *Session) Finish(ctx context.Context) (res Result, err error) {
	defer recoverFault(&err)
	if err := s.r.sim.Run(ctx); err != nil {
		return Result{}, err
	}
	res = s.r.result()
	res.Wall = time.Since(s.start)
	return res, nil
}

func newRun(cfg *Config, obs observe.Observer) *run {
	lim := cfg.Limits
	if lim.MaxTime == 0 {
		lim.MaxTime = DefaultMaxTime
	}
	if lim.MaxEvents == 0 {
		lim.MaxEvents = DefaultMaxEvents
	}
	r := &run{cfg: cfg, sim: sim.New(cfg.Scheduler, lim), remaining: len(cfg.Flows)}
	r.obs = obs
	if cfg.HashTrace {
		r.hasher = newTraceHasher(obs)
		r.obs = r.hasher
	}
	env := &cfg.Schedule[0].Env
	r.buildTopology(env)
	ecn := UsesECN(cfg.Schedule)
	for i, f := range cfg.Flows {
		alg, _ := ccai.New(f.CCA)
		var out tcp.Output = pathOut{r.fwdPath[i]}
		if cfg.PacketTap != nil {
			out = tapOut{out: pathOut{r.fwdPath[i]}, tap: cfg.PacketTap, sim: r.sim}
		}
		snd := tcp.NewSender(r.sim, tcp.SenderConfig{
			Flow: int32(i), Node: sim.NodeID(2 * i), Peer: sim.NodeID(2*i + 1),
			Bytes: f.Bytes, SACK: cfg.SACK, Profile: cfg.Profile,
			AppRate: appRate(env), Algorithm: alg, Observer: r.obs,
			Out: out, OnDone: r.flowDone, Handshake: cfg.Handshake,
			ECN: ecn,
		})
		rcv := tcp.NewReceiver(r.sim, tcp.ReceiverConfig{
			Flow: int32(i), Node: sim.NodeID(2*i + 1), Peer: sim.NodeID(2 * i),
			SACK: cfg.SACK, Bytes: f.Bytes, Out: pathOut{r.revPath[i]}, Handshake: cfg.Handshake,
			ECN: tcp.EchoFor(f.CCA, ecn),
		})
		r.senders = append(r.senders, snd)
		var end sim.Handler = snd
		if cfg.PacketTap != nil {
			end = tapIn{snd: snd, tap: cfg.PacketTap, sim: r.sim}
		}
		r.ackEnds = append(r.ackEnds, end)
		r.receivers = append(r.receivers, rcv)
	}
	if len(cfg.Schedule) > 1 {
		r.switchEv = sim.NewEvent(sim.ControlNode, sim.KindControl, 0, r)
		r.sim.ScheduleAt(r.switchEv, cfg.Schedule[0].Until)
	}
	for _, s := range r.senders {
		s.Start()
	}
	return r
}

// link is a link of a native run: the shared link model carrying
// simulated packets, with the node and FIFO lane of its events.
type link struct {
	*Link[*sim.Packet]
	node sim.NodeID
	lane int32  // the scheduler lane of the link's deliveries (sim.Event.Lane)
	in   linkIn // packet arrivals from a previous hop
}

// linkIn receives packets arriving at a link from a previous hop.
type linkIn struct{ l *link }

func (i linkIn) Handle(e *sim.Event) { i.l.Send(e.Pkt) }

// buildTopology creates the links and every flow's forward and reverse
// path. Nodes: sender i is 2i, receiver i is 2i+1, links follow.
func (r *run) buildTopology(env *Env) {
	n := len(r.cfg.Flows)
	plan := PlanTopology(r.cfg.Topology, n)
	for i, spec := range plan.Links {
		l := &link{node: sim.NodeID(2*n + i), lane: int32(i) + 1}
		// Deliveries leave in transmission order, after the same
		// propagation delay unless a random queuing delay is added:
		// they form a FIFO lane.
		l.in = linkIn{l}
		route := r.routeRev
		if spec.Kind.Forward() {
			route = r.routeFwd
		}
		cfg := LinkConfig[*sim.Packet]{
			Kind: spec.Kind, Node: l.node, Seed: r.cfg.Seed, Index: uint64(i),
			Drop: r.sim.FreePacket, UserTraces: r.cfg.LinkTraces,
			Deliver: func(p *sim.Packet, delay time.Duration, u int16) {
				h, node := route(p)
				p.Arrival.Uncertain = u
				p.Arrival.Handler = h
				p.Arrival.Node = node
				p.Arrival.Lane = l.lane
				r.sim.Schedule(&p.Arrival, delay)
			},
		}
		if spec.Hooked && r.cfg.DelayHook != nil {
			cfg.Hook, cfg.HookAdds = r.cfg.DelayHook, r.cfg.DelayHookAdds
		}
		l.Link = NewLink(r.sim, cfg)
		l.Apply(env)
		r.links = append(r.links, l)
	}
	r.fwdPath, r.revPath = Paths(plan, r.links)
}

// routeFwd and routeRev pass a packet that left a link to the next link of
// its flow's path, or to its endpoint.
func (r *run) routeFwd(p *sim.Packet) (sim.Handler, sim.NodeID) {
	return r.route(p, r.fwdPath[p.Flow], r.receivers[p.Flow])
}

func (r *run) routeRev(p *sim.Packet) (sim.Handler, sim.NodeID) {
	return r.route(p, r.revPath[p.Flow], r.ackEnds[p.Flow])
}

func (r *run) route(p *sim.Packet, path []*link, end sim.Handler) (sim.Handler, sim.NodeID) {
	if next := int(p.Hop) + 1; next < len(path) {
		p.Hop++
		return path[next].in, path[next].node
	}
	return end, p.Dst
}

// pathOut sends an endpoint's packets onto the first link of its path.
type pathOut struct{ path []*link }

func (o pathOut) Send(p *sim.Packet) {
	p.Hop = 0
	o.path[0].Send(p)
}

// appRate is the application rate in bit/s; rates at or above the
// bottleneck's ×1000 are treated as unlimited.
func appRate(e *Env) uint64 {
	if e.App >= e.BW*1000 {
		return 0
	}
	return bps(e.App)
}

// Handle switches to the next phase of the schedule.
func (r *run) Handle(*sim.Event) {
	r.phase++
	env := &r.cfg.Schedule[r.phase].Env
	for _, l := range r.links {
		l.Apply(env)
	}
	for _, s := range r.senders {
		s.SetAppRate(appRate(env))
	}
	if r.phase < len(r.cfg.Schedule)-1 {
		r.sim.ScheduleAt(r.switchEv, r.cfg.Schedule[r.phase].Until)
	}
}

func (r *run) flowDone() {
	r.remaining--
	if r.remaining == 0 {
		r.sim.Stop()
	}
}

func (r *run) result() Result {
	res := Result{
		SimTime: r.sim.Now(),
		Events:  r.sim.Events(),
		Capped:  r.sim.Capped(),
	}
	for _, l := range r.links {
		res.AddLink(l)
	}
	res.NoteCap(r.cfg.Limits)
	if r.hasher != nil {
		res.TraceSHA256 = r.hasher.sum()
	}
	for i, s := range r.senders {
		st := s.Stats()
		sk := s.Sock()
		res.Flows = append(res.Flows, FlowResult{
			CCA:            r.cfg.Flows[i].CCA,
			SegmentsSent:   st.SegmentsSent,
			Retransmits:    st.Retransmits,
			Timeouts:       st.Timeouts,
			Recoveries:     st.Recoveries,
			Undos:          st.Undos,
			ECNReductions:  st.ECNReductions,
			DeliveredBytes: r.receivers[i].Received(),
			Done:           st.Done,
			DoneAtS:        st.DoneAt.Seconds(),
			SynRetransmits: st.SynRetransmits,
			ConnectFailed:  st.ConnectFailed,
			Final: FinalState{
				Cwnd: sk.Cwnd, SSThresh: sk.SSThresh,
				SRTTms:   float64(sk.SRTT) / 1e6,
				RTTVarMs: float64(sk.RTTVar) / 1e6,
				CAState:  sk.CAState.String(),
			},
		})
	}
	return res
}

package netenv

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"time"

	"github.com/actfuzz/actfuzz/netenv/sim"
)

// This file adds multi-node topologies of point-to-point links with static
// shortest-path routing and UDP constant-bit-rate (CBR) sources, for the
// symbolic back-end's udp4 scenario (SEIB, ACM TOMACS 2022, §5.2, after
// ns-3's simple-error-model example). It shares the discrete-event core
// (package netenv/sim) with the TCP runs and leaves them untouched.
//
// Event ownership follows SEIB §4.4.1: a transmission-complete event belongs
// to the sending node, a packet arrival to the receiving node of the hop, and
// an application timer to the source node. A handler only touches the state
// of its own node (its applications, sinks and outgoing links), so events at
// different nodes interact only through packet arrivals.

// Default per-packet overheads of a UDP datagram on a point-to-point link.
const (
	// UDPHeaderBytes is IPv4 (20) + UDP (8) + PPP (2), as ns-3's
	// point-to-point devices put on the wire.
	UDPHeaderBytes = 20 + 8 + 2
	// DefaultLinkQueue is ns-3's default drop-tail queue (100 packets).
	DefaultLinkQueue = 100
)

// Event tags of topology runs.
const (
	tagCBR uint8 = 1 + iota
	tagTx
)

// TopoLink is a bidirectional point-to-point link; each direction has its own
// transmitter and drop-tail queue.
type TopoLink struct {
	A     int     `json:"a" yaml:"a"`
	B     int     `json:"b" yaml:"b"`
	BW    float64 `json:"bw" yaml:"bw"`       // Mbit/s
	Delay float64 `json:"delay" yaml:"delay"` // one-way propagation, ms
	Queue int     `json:"queue" yaml:"queue"` // packets per direction (0: DefaultLinkQueue)
}

// CBRFlow is a UDP constant-bit-rate source at Src sending to a sink at Dst:
// PacketBytes of payload every PacketBytes·8/Rate, the first one interval
// after Start, the last one before Stop (ns-3's OnOffApplication, always on).
type CBRFlow struct {
	Src         int           `json:"src" yaml:"src"`
	Dst         int           `json:"dst" yaml:"dst"`
	PacketBytes uint32        `json:"packet_bytes" yaml:"packet_bytes"`
	Rate        float64       `json:"rate" yaml:"rate"` // Mbit/s of payload
	Start       time.Duration `json:"start_ns" yaml:"-"`
	Stop        time.Duration `json:"stop_ns" yaml:"-"`
}

// Interval is the time between two packets.
func (f *CBRFlow) Interval() time.Duration {
	return time.Duration(uint64(f.PacketBytes) * 8 * uint64(time.Second) / bps(f.Rate))
}

// Count is the number of packets the flow sends.
func (f *CBRFlow) Count() uint64 {
	iv := f.Interval()
	if iv <= 0 || f.Stop <= f.Start {
		return 0
	}
	// Packets k = 1, 2, … at Start + k·iv < Stop.
	return uint64((f.Stop - f.Start - 1) / iv)
}

// Topology is a set of nodes joined by point-to-point links, with UDP CBR
// flows routed along shortest paths (ties: lowest node number first).
type Topology struct {
	Nodes       int        `json:"nodes"`
	Links       []TopoLink `json:"links"`
	CBR         []CBRFlow  `json:"cbr"`
	HeaderBytes uint32     `json:"header_bytes"` // per-packet overhead (0: UDPHeaderBytes)
}

// UDP4 is the four-node topology of ns-3's simple-error-model example, as
// used by SEIB §5.2: n0 and n1 attach to n2 at 5 Mbit/s / 2 ms, n3 at
// 1.5 Mbit/s / 10 ms; n0 sends 210-byte datagrams at 448 kbit/s to n2 (the
// example addresses n2's interface on the n3–n2 link) from 1.0 s to 10.0 s,
// and n3 sends the same to n1, through n2, from 1.1 s to 10.0 s. The two
// flows cross at n2. (The example's error models drop early packets only and
// are left out.)
func UDP4() Topology {
	return Topology{
		Nodes: 4,
		Links: []TopoLink{
			{A: 0, B: 2, BW: 5, Delay: 2},
			{A: 1, B: 2, BW: 5, Delay: 2},
			{A: 3, B: 2, BW: 1.5, Delay: 10},
		},
		CBR: []CBRFlow{
			{Src: 0, Dst: 2, PacketBytes: 210, Rate: 0.448, Start: time.Second, Stop: 10 * time.Second},
			{Src: 3, Dst: 1, PacketBytes: 210, Rate: 0.448, Start: 1100 * time.Millisecond, Stop: 10 * time.Second},
		},
	}
}

// Validate checks the topology and names the offending field.
func (t *Topology) Validate() error {
	if t.Nodes < 1 || t.Nodes > 1<<16 {
		return fmt.Errorf("nodes: %d, want 1..65536", t.Nodes)
	}
	seen := map[[2]int]bool{}
	for i, l := range t.Links {
		switch {
		case l.A < 0 || l.A >= t.Nodes || l.B < 0 || l.B >= t.Nodes || l.A == l.B:
			return fmt.Errorf("links[%d]: endpoints %d-%d must be two different nodes in 0..%d", i, l.A, l.B, t.Nodes-1)
		case !(l.BW >= MinBW && l.BW <= MaxBW):
			return fmt.Errorf("links[%d].bw: %v must be in [%g, %g] Mbit/s", i, l.BW, MinBW, MaxBW)
		case !(l.Delay >= 0 && l.Delay <= MaxDelay):
			return fmt.Errorf("links[%d].delay: %v must be in [0, %g] ms", i, l.Delay, MaxDelay)
		case l.Queue < 0 || l.Queue > MaxBuffer:
			return fmt.Errorf("links[%d].queue: %d must be in [0, %d] packets", i, l.Queue, MaxBuffer)
		}
		k := [2]int{min(l.A, l.B), max(l.A, l.B)}
		if seen[k] {
			return fmt.Errorf("links[%d]: nodes %d and %d are already linked", i, l.A, l.B)
		}
		seen[k] = true
	}
	next := t.routes()
	for i, f := range t.CBR {
		switch {
		case f.Src < 0 || f.Src >= t.Nodes || f.Dst < 0 || f.Dst >= t.Nodes || f.Src == f.Dst:
			return fmt.Errorf("cbr[%d]: src %d and dst %d must be two different nodes in 0..%d", i, f.Src, f.Dst, t.Nodes-1)
		case f.PacketBytes == 0 || f.PacketBytes > 65507:
			return fmt.Errorf("cbr[%d].packet_bytes: %d must be in 1..65507", i, f.PacketBytes)
		case !(f.Rate > 0 && f.Rate <= MaxBW) || f.Interval() <= 0:
			return fmt.Errorf("cbr[%d].rate: %v must be a positive rate in Mbit/s", i, f.Rate)
		case f.Start < 0 || f.Stop < f.Start:
			return fmt.Errorf("cbr[%d]: start %v and stop %v must satisfy 0 ≤ start ≤ stop", i, f.Start, f.Stop)
		case next[f.Src][f.Dst] < 0:
			return fmt.Errorf("cbr[%d]: no route from node %d to node %d", i, f.Src, f.Dst)
		}
	}
	return nil
}

// routes returns next[n][dst], the next hop from n towards dst (-1: none),
// by breadth-first search from each destination.
func (t *Topology) routes() [][]int {
	adj := make([][]int, t.Nodes)
	for _, l := range t.Links {
		if l.A >= 0 && l.A < t.Nodes && l.B >= 0 && l.B < t.Nodes {
			adj[l.A] = append(adj[l.A], l.B)
			adj[l.B] = append(adj[l.B], l.A)
		}
	}
	for i := range adj {
		// Deterministic tie-break: lower neighbour first.
		for a := 1; a < len(adj[i]); a++ {
			for b := a; b > 0 && adj[i][b] < adj[i][b-1]; b-- {
				adj[i][b], adj[i][b-1] = adj[i][b-1], adj[i][b]
			}
		}
	}
	next := make([][]int, t.Nodes)
	for n := range next {
		next[n] = make([]int, t.Nodes)
		for d := range next[n] {
			next[n][d] = -1
		}
	}
	dist := make([]int, t.Nodes)
	for dst := 0; dst < t.Nodes; dst++ {
		for i := range dist {
			dist[i] = -1
		}
		dist[dst] = 0
		q := []int{dst}
		for len(q) > 0 {
			u := q[0]
			q = q[1:]
			for _, v := range adj[u] {
				if dist[v] < 0 {
					dist[v] = dist[u] + 1
					next[v][dst] = u
					q = append(q, v)
				}
			}
		}
	}
	return next
}

// Path is the node path of CBR flow f, source first.
func (t *Topology) Path(f int) ([]int, error) {
	if f < 0 || f >= len(t.CBR) {
		return nil, fmt.Errorf("flow %d: out of range", f)
	}
	next := t.routes()
	fl := t.CBR[f]
	p := []int{fl.Src}
	for n := fl.Src; n != fl.Dst; {
		n = next[n][fl.Dst]
		if n < 0 || len(p) > t.Nodes {
			return nil, fmt.Errorf("cbr[%d]: no route from node %d to node %d", f, fl.Src, fl.Dst)
		}
		p = append(p, n)
	}
	return p, nil
}

// HopHook lets the symbolic back-end choose the extra delay of a chosen
// packet on the hop from → to: the delay, the 1-based index of the uncertain
// variable it stands for, and ok.
type HopHook func(from, to sim.NodeID, p *sim.Packet) (delay time.Duration, uncertain int16, ok bool)

// TopoConfig is one topology run.
type TopoConfig struct {
	Topology
	// Limits: MaxTime is the end of the simulation (an end event); zero
	// fields take DefaultMaxTime and DefaultMaxEvents.
	Limits sim.Limits
	// Scheduler replaces the default heap (the symbolic back-end).
	Scheduler sim.Scheduler
	// DelayHook adds an extra delay to chosen packets on chosen hops. As
	// with Config.DelayHook, a snapshot does not see its own state.
	DelayHook HopHook `snapshot:"shared"`
	// HashTrace computes TopoResult.TraceSHA256 over every delivery.
	HashTrace bool
	// OnDelivery, if set, sees every packet that reaches its destination.
	OnDelivery func(Delivery) `snapshot:"shared"`
	// OnStart, if set, gets the run's state before the first event (the
	// symbolic back-end's state hashing).
	OnStart func(sim.StateSource) `snapshot:"shared"`
}

// Delivery is one datagram reaching its destination: the packet-level trace
// of a topology run.
type Delivery struct {
	Flow int           `json:"flow"`
	Seq  uint64        `json:"seq"`
	Sent time.Duration `json:"sent_ns"`
	At   time.Duration `json:"at_ns"`
}

// CBRResult is the outcome of one CBR flow at the end of the run.
type CBRResult struct {
	Sent          uint64        `json:"sent"`
	Received      uint64        `json:"received"`
	ReceivedBytes uint64        `json:"received_bytes"`
	Dropped       uint64        `json:"dropped"`
	Reordered     uint64        `json:"reordered"` // received after a later-sent packet of the flow
	LastArrival   time.Duration `json:"last_arrival_ns"`

	nextSeq uint64
}

// TopoResult summarizes a topology run.
type TopoResult struct {
	SimTime time.Duration `json:"-"`
	Events  uint64        `json:"events"`
	Capped  bool          `json:"capped"`
	Flows   []CBRResult   `json:"flows"`
	// TraceSHA256 is the SHA-256 of the deliveries (flow, seq, sent, at as
	// little-endian 64-bit integers, in order), with TopoConfig.HashTrace.
	TraceSHA256 string `json:"trace_sha256,omitempty"`
}

// RunTopology simulates a topology with its CBR flows until the end time.
func RunTopology(ctx context.Context, cfg TopoConfig) (TopoResult, error) {
	s, err := NewTopoSession(cfg)
	if err != nil {
		return TopoResult{}, err
	}
	return s.Finish(ctx)
}

// TopoSession is a topology run that stops between events when asked and
// goes on, as [Session] is for native runs: the symbolic back-end saves it
// with netenv/snapshot at the start of a window.
type TopoSession struct {
	r   *topoRun
	cfg TopoConfig
}

// NewTopoSession prepares cfg's run (everything RunTopology does before
// the first event).
func NewTopoSession(cfg TopoConfig) (*TopoSession, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	lim := cfg.Limits
	if lim.MaxTime == 0 {
		lim.MaxTime = DefaultMaxTime
	}
	if lim.MaxEvents == 0 {
		lim.MaxEvents = DefaultMaxEvents
	}
	s := &TopoSession{cfg: cfg}
	r := newTopoRun(&s.cfg, sim.New(s.cfg.Scheduler, lim))
	s.r = r
	if cfg.HashTrace {
		r.hash = sha256.New()
	}
	if cfg.OnStart != nil {
		cfg.OnStart(r)
	}
	return s, nil
}

// Events is the number of events executed so far.
func (s *TopoSession) Events() uint64 { return s.r.sim.Events() }

// Now is the simulated time.
func (s *TopoSession) Now() time.Duration { return s.r.sim.Now() }

// RunTo executes events until events have run in all, or the run ends.
func (s *TopoSession) RunTo(ctx context.Context, events uint64) error {
	return s.r.sim.RunTo(ctx, events)
}

// Finish runs to the end and returns the result.
func (s *TopoSession) Finish(ctx context.Context) (TopoResult, error) {
	r := s.r
	if err := r.sim.Run(ctx); err != nil {
		return TopoResult{}, err
	}
	res := TopoResult{SimTime: r.sim.Now(), Events: r.sim.Events(), Capped: r.sim.Capped()}
	res.Flows = append(res.Flows, r.flows...)
	if r.hash != nil {
		res.TraceSHA256 = hex.EncodeToString(r.hash.Sum(nil))
	}
	return res, nil
}

// deliver records a packet reaching its destination in the trace.
func (r *topoRun) deliver(p *sim.Packet) {
	d := Delivery{Flow: int(p.Flow), Seq: p.Seq, Sent: p.SentAt, At: r.sim.Now()}
	if r.hash != nil {
		var b [32]byte
		binary.LittleEndian.PutUint64(b[0:], uint64(d.Flow))
		binary.LittleEndian.PutUint64(b[8:], d.Seq)
		binary.LittleEndian.PutUint64(b[16:], uint64(d.Sent))
		binary.LittleEndian.PutUint64(b[24:], uint64(d.At))
		r.hash.Write(b[:])
	}
	if r.cfg.OnDelivery != nil {
		r.cfg.OnDelivery(d)
	}
}

type topoRun struct {
	cfg   *TopoConfig
	sim   *sim.Sim
	hdr   uint32
	next  [][]int
	nodes []*topoNode
	apps  []*cbrApp
	flows []CBRResult
	hash  hash.Hash
	chans []*channel // in creation order
	ids   map[sim.Handler]uint64
}

type topoNode struct {
	run *topoRun
	id  int
	out map[int]*channel // by neighbour
}

// channel is one direction of a point-to-point link, owned by node from:
// the shared link model (link.go) with a fixed rate, delay and queue.
type channel struct {
	*Link[*sim.Packet]
	from, to int
}

type cbrApp struct {
	run  *topoRun
	idx  int
	flow CBRFlow
	iv   time.Duration
	seq  uint64
	n    uint64 // packets to send
	ev   *sim.Event
}

func newTopoRun(cfg *TopoConfig, s *sim.Sim) *topoRun {
	r := &topoRun{cfg: cfg, sim: s, hdr: cfg.HeaderBytes, next: cfg.routes()}
	if r.hdr == 0 {
		r.hdr = UDPHeaderBytes
	}
	for i := 0; i < cfg.Nodes; i++ {
		r.nodes = append(r.nodes, &topoNode{run: r, id: i, out: map[int]*channel{}})
	}
	for _, l := range cfg.Links {
		q := l.Queue
		if q == 0 {
			q = DefaultLinkQueue
		}
		for _, d := range [2][2]int{{l.A, l.B}, {l.B, l.A}} {
			c := &channel{from: d[0], to: d[1]}
			lc := LinkConfig[*sim.Packet]{
				Kind: LinkFixed, Node: sim.NodeID(d[0]), Tag: tagTx,
				Size: func(p *sim.Packet) uint32 { return p.Len + r.hdr },
				Drop: func(p *sim.Packet) {
					r.flows[p.Flow].Dropped++
					s.FreePacket(p)
				},
				Deliver: func(p *sim.Packet, delay time.Duration, u int16) {
					p.Arrival.Uncertain = u
					p.Arrival.Handler = r.nodes[c.to]
					p.Arrival.Node = sim.NodeID(c.to)
					s.Schedule(&p.Arrival, delay)
				},
			}
			if hook := cfg.DelayHook; hook != nil {
				from, to := sim.NodeID(c.from), sim.NodeID(c.to)
				lc.Hook = func(p *sim.Packet) (time.Duration, int16, bool) { return hook(from, to, p) }
			}
			c.Link = NewLink(s, lc)
			// The transmission timer's handler is the channel, so that
			// Components can tell the directed link an event belongs to.
			c.TxEvent().Handler = c
			c.SetFixed(l.BW, l.Delay, q)
			r.nodes[d[0]].out[d[1]] = c
			r.chans = append(r.chans, c)
		}
	}
	r.flows = make([]CBRResult, len(cfg.CBR))
	for i, f := range cfg.CBR {
		a := &cbrApp{run: r, idx: i, flow: f, iv: f.Interval(), n: f.Count()}
		a.ev = sim.NewEvent(sim.NodeID(f.Src), sim.KindTimer, tagCBR, a)
		r.apps = append(r.apps, a)
		if a.n > 0 {
			s.ScheduleAt(a.ev, f.Start+a.iv)
		}
	}
	return r
}

// HashState implements sim.StateSource: every link's queue and packet in
// transmission, every source's next sequence number and every sink's
// counters. LastArrival is left out: it is a time, not an outcome, and it
// would keep apart states that differ only in when a packet came.
func (r *topoRun) HashState(h *sim.StateHash) {
	for _, c := range r.chans {
		h.Word(uint64(c.Queued()))
		if tx, ok := c.Transmitting(); ok {
			h.Word(1)
			h.Packet(tx)
		} else {
			h.Word(0)
		}
		for i := 0; i < c.Queued(); i++ {
			h.Packet(c.QueuedAt(i))
		}
	}
	for _, a := range r.apps {
		h.Word(a.seq)
	}
	for _, f := range r.flows {
		h.Word(f.Sent)
		h.Word(f.Received)
		h.Word(f.ReceivedBytes)
		h.Word(f.Dropped)
		h.Word(f.Reordered)
		h.Word(f.nextSeq)
	}
}

// HandlerID implements sim.StateSource: nodes, links and sources by their
// creation order.
func (r *topoRun) HandlerID(hd sim.Handler) (uint64, bool) {
	if r.ids == nil {
		r.ids = map[sim.Handler]uint64{}
		for i, n := range r.nodes {
			r.ids[n] = 1<<32 | uint64(i)
		}
		for i, c := range r.chans {
			r.ids[c] = 2<<32 | uint64(i)
		}
		for i, a := range r.apps {
			r.ids[a] = 3<<32 | uint64(i)
		}
	}
	id, ok := r.ids[hd]
	return id, ok
}

// Handle sends one datagram and schedules the next.
func (a *cbrApp) Handle(*sim.Event) {
	r := a.run
	p := r.sim.NewPacket()
	p.Flow = int32(a.idx)
	p.Src, p.Dst = sim.NodeID(a.flow.Src), sim.NodeID(a.flow.Dst)
	p.Seq = a.seq
	p.Len = a.flow.PacketBytes
	p.UDP = true
	p.SentAt = r.sim.Now()
	a.seq++
	r.flows[a.idx].Sent++
	if a.seq < a.n {
		r.sim.Schedule(a.ev, a.iv)
	}
	r.nodes[a.flow.Src].forward(p)
}

// forward sends p towards its destination.
func (n *topoNode) forward(p *sim.Packet) {
	nh := n.run.next[n.id][p.Dst]
	c := n.out[nh]
	if c == nil {
		n.run.flows[p.Flow].Dropped++
		n.run.sim.FreePacket(p)
		return
	}
	c.Send(p)
}

// Handle receives a packet at this node.
func (n *topoNode) Handle(e *sim.Event) {
	p := e.Pkt
	if int(p.Dst) != n.id {
		n.forward(p)
		return
	}
	f := &n.run.flows[p.Flow]
	f.Received++
	f.ReceivedBytes += uint64(p.Len)
	if p.Seq < f.nextSeq {
		f.Reordered++
	} else {
		f.nextSeq = p.Seq + 1
	}
	f.LastArrival = n.run.sim.Now()
	if n.run.hash != nil || n.run.cfg.OnDelivery != nil {
		n.run.deliver(p)
	}
	n.run.sim.FreePacket(p)
}

// Components partitions the events of a topology run into state components
// for the symbolic back-end's independence reduction (SEIB §4.4): each
// event's handler reads and writes the state of its component only, and
// components interact only through packet arrivals. Components are finer
// than nodes: a CBR source together with the first link of its flow (the
// source enqueues into it), the transmitter of each directed link together
// with the arrivals forwarded into it, and the sink of each node.
type Components struct {
	N     int
	Names []string
	// Of returns the component of an event of a run of this topology
	// (not of control events).
	Of func(e *sim.Event) int
	// In lists, per component, the components whose packets arrive in it.
	In [][]int
	// Node is the topology node of each component.
	Node []int
}

// Components returns the state components of the topology's runs. With
// byNode, there is one component per topology node instead (SEIB's own
// granularity); In then lists the nodes that forward some flow to a node.
func (t *Topology) Components(byNode bool) (*Components, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	next := t.routes()
	c := &Components{}
	if byNode {
		c.N = t.Nodes
		for i := 0; i < t.Nodes; i++ {
			c.Names = append(c.Names, fmt.Sprintf("n%d", i))
			c.Node = append(c.Node, i)
		}
		c.Of = func(e *sim.Event) int { return int(e.Node) }
	} else {
		// Components: the sink of each node, then each directed link.
		idx := make([]int, t.Nodes*t.Nodes)
		chIdx := func(d [2]int) int { return idx[d[0]*t.Nodes+d[1]] }
		for i := 0; i < t.Nodes; i++ {
			c.Names = append(c.Names, fmt.Sprintf("sink%d", i))
			c.Node = append(c.Node, i)
		}
		for _, l := range t.Links {
			for _, d := range [2][2]int{{l.A, l.B}, {l.B, l.A}} {
				idx[d[0]*t.Nodes+d[1]] = len(c.Names)
				c.Names = append(c.Names, fmt.Sprintf("link%d-%d", d[0], d[1]))
				c.Node = append(c.Node, d[0])
			}
		}
		c.N = len(c.Names)
		flows := t.CBR
		c.Of = func(e *sim.Event) int {
			switch h := e.Handler.(type) {
			case *cbrApp:
				f := flows[h.idx]
				return chIdx([2]int{f.Src, next[f.Src][f.Dst]})
			case *channel:
				return chIdx([2]int{h.from, h.to})
			case *topoNode:
				p := e.Pkt
				if p == nil || int(p.Dst) == h.id {
					return h.id
				}
				return chIdx([2]int{h.id, next[h.id][p.Dst]})
			}
			return int(e.Node)
		}
		c.In = make([][]int, c.N)
		for f := range t.CBR {
			p, err := t.Path(f)
			if err != nil {
				return nil, err
			}
			for i := 1; i < len(p); i++ {
				from := chIdx([2]int{p[i-1], p[i]})
				to := p[i] // the sink
				if i+1 < len(p) {
					to = chIdx([2]int{p[i], p[i+1]})
				}
				if !containsInt(c.In[to], from) {
					c.In[to] = append(c.In[to], from)
				}
			}
		}
		for i := range c.In {
			sortInts(c.In[i])
		}
		return c, nil
	}
	c.In = make([][]int, c.N)
	for f := range t.CBR {
		p, err := t.Path(f)
		if err != nil {
			return nil, err
		}
		for i := 1; i < len(p); i++ {
			if !containsInt(c.In[p[i]], p[i-1]) {
				c.In[p[i]] = append(c.In[p[i]], p[i-1])
			}
		}
	}
	for i := range c.In {
		sortInts(c.In[i])
	}
	return c, nil
}

func containsInt(xs []int, v int) bool {
	for _, x := range xs {
		if x == v {
			return true
		}
	}
	return false
}

func sortInts(xs []int) {
	for a := 1; a < len(xs); a++ {
		for b := a; b > 0 && xs[b] < xs[b-1]; b-- {
			xs[b], xs[b-1] = xs[b-1], xs[b]
		}
	}
}

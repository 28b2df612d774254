package symbolic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/vm"
	"gopkg.in/yaml.v3"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/sim"
	"github.com/actfuzz/actfuzz/netenv/tcp"
)

// Scenario is what the symbolic back-end explores: a network (a UDP CBR
// topology or TCP flows over the single link), a window of packets whose
// delays are uncertain, an end time, metrics and conditions.
type Scenario struct {
	Name string
	// Exactly one of Topology and TCP is set.
	Topology *netenv.Topology
	TCP      *TCPSpec
	// End is the end of the simulation (an end-of-simulation event).
	End    time.Duration
	Window Window
	// Metrics lists the metrics to report: a name applies to every flow
	// ("received"), a qualified name to one ("flow0.received"). Empty:
	// every metric of every flow.
	Metrics []string
	// Conditions are boolean expr-lang expressions over the metrics,
	// written flowN.metric.
	Conditions []ConditionSpec
}

// TCPSpec is a TCP run over netenv's single link.
type TCPSpec struct {
	Flows   []netenv.Flow
	Env     netenv.Env
	SACK    bool
	Profile ccai.Profile
	Seed    uint64
	// Handshake opens the connections with SYN and SYN-ACK first.
	Handshake bool
	// Base, when set, is the whole run configuration of a seed (its
	// topology, schedule, PRNG seed, flows, profile, SACK, handshake): the
	// fields above are then taken from it (Env is its first phase) and
	// the window's delays are extra delays on top of the random queuing
	// delays, which every packet still draws from the seed's streams
	// (netenv.Config.DelayHookAdds): symbolic plus random.
	Base *netenv.Config
	// Watch, when set, sees every run's state records and adds the
	// conditions that held to the run's outcome.
	Watch RunWatcher
}

// RunWatcher sees the state records of one run at a time.
type RunWatcher interface {
	tcp.Observer
	// Reset prepares for a new run.
	Reset()
	// Hits lists the conditions that held during the run, sorted.
	Hits() []string
}

// FromBase fills the spec's fields from Base.
func (t *TCPSpec) FromBase() {
	b := t.Base
	if b == nil {
		return
	}
	t.Flows, t.SACK, t.Profile, t.Seed, t.Handshake = b.Flows, b.SACK, b.Profile, b.Seed, b.Handshake
	if len(b.Schedule) > 0 {
		t.Env = b.Schedule[0].Env
	}
}

// ConditionSpec is a named condition.
type ConditionSpec struct {
	Name string `yaml:"name" json:"name"`
	When string `yaml:"when" json:"when"`
}

// Window selects the packets whose delays are the uncertain variables
// d_1…d_N: first transmissions of data packets of one flow, in order.
type Window struct {
	Flow int
	N    int
	// Select is "last" (the last N packets of the flow, the default),
	// "range" (packets From … From+N−1, counted from 0) or "kind".
	Select string
	From   int
	// Kind, for TCP windows: "data" (data segments, the default; first
	// transmissions), "fin" (the last data segment; N = 1), "syn" or
	// "syn-ack" (the first SYN or SYN-ACK of the handshake; N = 1, needs
	// TCPSpec.Handshake) or "ack" (ACKs From … From+N−1 in the order they
	// leave the bottleneck; Select "kind" or "range").
	Kind string
	// Hop is the hop (from, to) of a UDP flow whose delay is uncertain;
	// zero value: the flow's first hop.
	Hop *[2]int
	// Lo and Hi bound each delay; Res is the resolution (default 1 ms).
	Lo, Hi, Res time.Duration
}

// Defaults of the built-in scenarios.
const (
	UDP4End         = 11 * time.Second
	TCPBulkSegments = 150
	TCPBulkEnd      = 120 * time.Second
)

// Builtins lists the built-in scenario names.
var Builtins = []string{"udp4", "tcp-bulk"}

// UDP4 is SEIB §5.2's UDP experiment: ns-3's simple-error-model topology
// (netenv.UDP4) with the last n packets from node 0 to node 2 uncertain in
// [lo, hi] ms (the paper: [1, 1024]).
func UDP4(n int, lo, hi time.Duration) *Scenario {
	t := netenv.UDP4()
	return &Scenario{
		Name:     "udp4",
		Topology: &t,
		End:      UDP4End,
		Window:   Window{Flow: 0, N: n, Select: "last", Hop: &[2]int{0, 2}, Lo: lo, Hi: hi, Res: time.Millisecond},
		Metrics:  []string{"received", "reordered"},
	}
}

// TCPBulk is SEIB §5.3's TCP experiment after ns-3's tcp-bulk-send: two
// nodes over a 0.5 Mbit/s, 5 ms link with a 100-packet queue, one Reno bulk
// transfer of TCPBulkSegments segments, the last n data packets uncertain in
// [1, dmax]. The transfer is the largest round size whose slow start does
// not overflow the queue, so that the last segments are first
// transmissions (larger transfers lose their tail to the overflow and only
// retransmit it, with ordinary delays).
func TCPBulk(n int, dmax time.Duration) *Scenario {
	return &Scenario{
		Name: "tcp-bulk",
		TCP: &TCPSpec{
			Flows: []netenv.Flow{{CCA: "reno", Bytes: TCPBulkSegments * tcp.DefaultMSS}},
			Env:   netenv.Env{BW: 0.5, Delay: 5, Buffer: 100, App: 10000},
			SACK:  true,
		},
		End:     TCPBulkEnd,
		Window:  Window{Flow: 0, N: n, Select: "last", Lo: time.Millisecond, Hi: dmax, Res: time.Millisecond},
		Metrics: []string{"delivered_bytes", "cwnd", "retransmits", "timeouts"},
	}
}

// Builtin returns a built-in scenario by name. hi is the upper delay bound
// (udp4: --hi, tcp-bulk: --dmax).
func Builtin(name string, n int, lo, hi time.Duration) (*Scenario, error) {
	switch name {
	case "udp4":
		return UDP4(n, lo, hi), nil
	case "tcp-bulk":
		s := TCPBulk(n, hi)
		s.Window.Lo = lo
		return s, nil
	}
	return nil, fmt.Errorf("unknown scenario %q (built-in: %s)", name, strings.Join(Builtins, ", "))
}

// Metric names per flow.
var (
	udpMetrics = []string{"received", "received_bytes", "sent", "dropped", "reordered"}
	tcpMetrics = []string{"delivered_bytes", "cwnd", "ssthresh", "retransmits", "timeouts", "recoveries", "done", "syn_retransmits"}
)

// compiled is a validated scenario ready to run.
type compiled struct {
	sc         *Scenario
	n          int
	res        int64
	lo, hi     [MaxVars]int64
	layout     Layout // state components
	nodeLayout Layout // SEIB's node granularity for I
	metrics    []metricRef
	conds      []*vm.Program
	first      uint64 // index of the first packet of the window
	total      uint64 // packets of the flow
	hop        [2]int
	kind       packetKind // TCP windows
}

// packetKind is what a TCP window's packets are.
type packetKind uint8

const (
	kindData packetKind = iota
	kindSyn
	kindSynAck
	kindAck
)

type metricRef struct {
	name string
	flow int
	m    string
}

// Validate checks the scenario and names the offending field.
func (sc *Scenario) Validate() error {
	_, err := sc.compile()
	return err
}

func (sc *Scenario) compile() (*compiled, error) {
	c := &compiled{sc: sc}
	if (sc.Topology == nil) == (sc.TCP == nil) {
		return nil, errors.New("scenario: exactly one of topology and tcp must be given")
	}
	if sc.End <= 0 {
		return nil, fmt.Errorf("end: %v must be > 0", sc.End)
	}
	w := sc.Window
	if w.N < 1 || w.N > MaxVars {
		return nil, fmt.Errorf("window.n: %d packets, want 1..%d", w.N, MaxVars)
	}
	c.n = w.N
	res := w.Res
	if res == 0 {
		res = time.Millisecond
	}
	if res < 0 {
		return nil, fmt.Errorf("window.resolution: %v must be > 0", res)
	}
	if w.Lo < 0 || w.Hi < w.Lo {
		return nil, fmt.Errorf("window: delays [%v, %v] need 0 ≤ lo ≤ hi", w.Lo, w.Hi)
	}
	if w.Lo%res != 0 || w.Hi%res != 0 {
		return nil, fmt.Errorf("window: lo %v and hi %v must be multiples of the resolution %v", w.Lo, w.Hi, res)
	}
	if w.Hi > time.Duration(netenv.MaxDelay)*time.Millisecond {
		return nil, fmt.Errorf("window.hi: %v is above %g ms", w.Hi, netenv.MaxDelay)
	}
	c.res = int64(res)
	for i := 0; i < c.n; i++ {
		c.lo[i], c.hi[i] = int64(w.Lo/res), int64(w.Hi/res)
	}
	var flows int
	switch {
	case sc.Topology != nil:
		if err := c.compileUDP(); err != nil {
			return nil, err
		}
		flows = len(sc.Topology.CBR)
	default:
		if err := c.compileTCP(); err != nil {
			return nil, err
		}
		flows = len(sc.TCP.Flows)
	}
	if err := c.compileMetrics(flows); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *compiled) window(count uint64) error {
	w := c.sc.Window
	c.total = count
	switch w.Select {
	case "", "last":
		if uint64(w.N) > count {
			return fmt.Errorf("window.last: flow %d sends only %d packets", w.Flow, count)
		}
		c.first = count - uint64(w.N)
	case "range", "kind":
		if w.From < 0 || uint64(w.From)+uint64(w.N) > count {
			return fmt.Errorf("window.from: packets %d..%d are outside the flow's %d packets", w.From, w.From+w.N-1, count)
		}
		c.first = uint64(w.From)
	default:
		return fmt.Errorf("window.select: %q, want last, range or kind", w.Select)
	}
	return nil
}

func (c *compiled) compileUDP() error {
	t := c.sc.Topology
	if err := t.Validate(); err != nil {
		return fmt.Errorf("topology: %w", err)
	}
	w := c.sc.Window
	if w.Flow < 0 || w.Flow >= len(t.CBR) {
		return fmt.Errorf("window.flow: %d, the topology has %d flows", w.Flow, len(t.CBR))
	}
	switch w.Kind {
	case "", "data":
	default:
		return fmt.Errorf("window.kind: %q is not a UDP packet kind (want data)", w.Kind)
	}
	path, err := t.Path(w.Flow)
	if err != nil {
		return err
	}
	c.hop = [2]int{path[0], path[1]}
	if w.Hop != nil {
		c.hop = *w.Hop
		ok := false
		for i := 0; i+1 < len(path); i++ {
			if path[i] == c.hop[0] && path[i+1] == c.hop[1] {
				ok = true
			}
		}
		if !ok {
			return fmt.Errorf("window.hop: %d→%d is not on flow %d's path %v", c.hop[0], c.hop[1], w.Flow, path)
		}
	}
	if err := c.window(t.CBR[w.Flow].Count()); err != nil {
		return err
	}
	comps, err := t.Components(false)
	if err != nil {
		return err
	}
	nodes, err := t.Components(true)
	if err != nil {
		return err
	}
	ident := make([]int, comps.N)
	for i := range ident {
		ident[i] = i
	}
	c.layout = Layout{Comps: comps.N, CompOf: comps.Of, Nodes: comps.N, NodeOf: ident, InNeighbors: comps.In}
	c.nodeLayout = Layout{Comps: comps.N, CompOf: comps.Of, Nodes: t.Nodes, NodeOf: comps.Node, InNeighbors: nodes.In}
	return nil
}

func (c *compiled) compileTCP() error {
	s := c.sc.TCP
	s.FromBase()
	cfg := netenv.Config{Schedule: netenv.Constant(s.Env), Flows: s.Flows, SACK: s.SACK, Profile: s.Profile}
	if s.Base != nil {
		cfg = *s.Base
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("tcp: %w", err)
	}
	for i, f := range s.Flows {
		if _, ok := ccai.Lookup(f.CCA); !ok {
			return fmt.Errorf("tcp.flows[%d].cca: unknown congestion control %q (known: %s)", i, f.CCA, strings.Join(ccai.Names(), ", "))
		}
	}
	w := c.sc.Window
	if w.Flow < 0 || w.Flow >= len(s.Flows) {
		return fmt.Errorf("window.flow: %d, the scenario has %d flows", w.Flow, len(s.Flows))
	}
	if w.Hop != nil {
		return errors.New("window.hop: TCP windows are on the single link's data direction; hop does not apply")
	}
	segs := (s.Flows[w.Flow].Bytes + tcp.DefaultMSS - 1) / tcp.DefaultMSS
	one := func(kind packetKind, first, total uint64) error {
		if w.N != 1 {
			return fmt.Errorf("window.kind: %s selects 1 packet, not %d", w.Kind, w.N)
		}
		c.kind, c.first, c.total = kind, first, total
		return c.tcpLayout()
	}
	switch w.Kind {
	case "", "data":
	case "fin":
		return one(kindData, segs-1, segs)
	case "syn", "syn-ack", "synack":
		if !s.Handshake {
			return fmt.Errorf("window.kind: %s needs the handshake (tcp.handshake: true)", w.Kind)
		}
		if w.Kind == "syn" {
			return one(kindSyn, 0, 1)
		}
		return one(kindSynAck, 0, 1)
	case "ack":
		if w.Select == "last" || w.Select == "" {
			return errors.New("window.kind: ack windows are counted from the first ACK: give from and count, not last")
		}
		if w.From < 0 {
			return fmt.Errorf("window.from: %d must be ≥ 0", w.From)
		}
		c.kind, c.first, c.total = kindAck, uint64(w.From), uint64(w.From+w.N)
		return c.tcpLayout()
	default:
		return fmt.Errorf("window.kind: %q, want data, fin, syn, syn-ack or ack", w.Kind)
	}
	if err := c.window(segs); err != nil {
		return err
	}
	return c.tcpLayout()
}

// tcpLayout: netenv.Run puts sender i on node 2i, receiver i on 2i+1 and the
// single link's data and ACK directions on 2k and 2k+1. Senders write into
// the data direction's queue and receivers into the ACK direction's, so
// there are two state components, which are also the two nodes: the sending
// side and the receiving side.
//
// A seed's topology (Base) generalizes this: every link of the data
// direction (netenv.LinkKind.Forward) is on the sending side, every link of
// the ACK direction on the receiving side.
func (c *compiled) tcpLayout() error {
	k := sim.NodeID(len(c.sc.TCP.Flows))
	topo := ""
	if b := c.sc.TCP.Base; b != nil {
		topo = b.Topology
	}
	plan := netenv.PlanTopology(topo, int(k))
	side := make([]int, len(plan.Links))
	for i, l := range plan.Links {
		if !l.Kind.Forward() {
			side[i] = 1
		}
	}
	if topo == netenv.TopoParkingLot && c.sc.Window.Flow != 0 && len(plan.Links) > 2 {
		return fmt.Errorf("window.flow: %d does not cross the parking lot's first bottleneck, the only link whose delays the window can set (flow 0 does)", c.sc.Window.Flow)
	}
	c.layout = Layout{
		Comps: 2,
		CompOf: func(e *sim.Event) int {
			switch n := e.Node; {
			case n >= 2*k && int(n-2*k) < len(side):
				return side[n-2*k]
			default:
				return int(n % 2)
			}
		},
		Nodes:       2,
		NodeOf:      []int{0, 1},
		InNeighbors: [][]int{{1}, {0}},
		Timeout: func(e *sim.Event) bool {
			switch e.Handler.(type) {
			case *tcp.Sender, *tcp.Receiver:
				return true
			}
			return false
		},
	}
	c.nodeLayout = c.layout
	return nil
}

func (c *compiled) compileMetrics(flows int) error {
	names := udpMetrics
	if c.sc.TCP != nil {
		names = tcpMetrics
	}
	want := c.sc.Metrics
	if len(want) == 0 {
		want = names
	}
	seen := map[string]bool{}
	add := func(f int, m string) {
		n := fmt.Sprintf("flow%d.%s", f, m)
		if !seen[n] {
			seen[n] = true
			c.metrics = append(c.metrics, metricRef{name: n, flow: f, m: m})
		}
	}
	for _, m := range want {
		if f, rest, ok := strings.Cut(m, "."); ok {
			var k int
			if _, err := fmt.Sscanf(f, "flow%d", &k); err != nil || k < 0 || k >= flows || !slices.Contains(names, rest) {
				return fmt.Errorf("metrics: %q, want METRIC or flowN.METRIC with N < %d and METRIC one of %s", m, flows, strings.Join(names, ", "))
			}
			add(k, rest)
			continue
		}
		if !slices.Contains(names, m) {
			return fmt.Errorf("metrics: unknown metric %q (want one of %s)", m, strings.Join(names, ", "))
		}
		for f := 0; f < flows; f++ {
			add(f, m)
		}
	}
	// Conditions see every metric of every flow.
	env := map[string]any{}
	for f := 0; f < flows; f++ {
		m := map[string]any{}
		for _, n := range names {
			m[n] = int64(0)
		}
		env[fmt.Sprintf("flow%d", f)] = m
	}
	for i, cs := range c.sc.Conditions {
		if cs.Name == "" {
			return fmt.Errorf("conditions[%d].name: empty", i)
		}
		prog, err := expr.Compile(cs.When, expr.Env(env), expr.AsBool())
		if err != nil {
			return fmt.Errorf("condition %q: %w", cs.Name, err)
		}
		chk := &metricChecker{names: names}
		root := prog.Node()
		ast.Walk(&root, chk)
		if chk.bad != "" {
			return fmt.Errorf("condition %q: unknown metric %q (want flowN.METRIC, METRIC one of %s)", cs.Name, chk.bad, strings.Join(names, ", "))
		}
		c.conds = append(c.conds, prog)
	}
	return nil
}

// metricChecker finds flowN.X references to unknown metrics (expr-lang
// accepts any key of a map).
type metricChecker struct {
	names []string
	bad   string
}

func (m *metricChecker) Visit(n *ast.Node) {
	mem, ok := (*n).(*ast.MemberNode)
	if !ok {
		return
	}
	id, ok1 := mem.Node.(*ast.IdentifierNode)
	prop, ok2 := mem.Property.(*ast.StringNode)
	if ok1 && ok2 && strings.HasPrefix(id.Value, "flow") && !slices.Contains(m.names, prop.Value) && m.bad == "" {
		m.bad = id.Value + "." + prop.Value
	}
}

// outcome is what one run produced.
type outcome struct {
	all    map[string]map[string]int64 // flow → metric → value
	values []int64                     // the selected metrics, in order
	hits   []string                    // conditions that hold
	events uint64
	hash   string // trace SHA-256, when traced
}

// Tracing lets a replay record more than its outcome.
type Tracing struct {
	// State sees every TCP state record (TCP scenarios).
	State tcp.Observer
	// Delivery sees every datagram that reaches its destination (topology
	// scenarios).
	Delivery func(netenv.Delivery)
}

// simulate runs the scenario once with the given scheduler and delay vector
// (units of the resolution). tr, if not nil, traces the run and makes it
// compute the trace hash.
func (c *compiled) simulate(ctx context.Context, s sim.Scheduler, w *[MaxVars]int64, tr *Tracing) (*outcome, error) {
	out := &outcome{all: map[string]map[string]int64{}}
	res := time.Duration(c.res)
	lim := sim.Limits{MaxTime: c.sc.End}
	win := c.sc.Window
	if c.sc.Topology != nil {
		hop := [2]sim.NodeID{sim.NodeID(c.hop[0]), sim.NodeID(c.hop[1])}
		hook := func(from, to sim.NodeID, p *sim.Packet) (time.Duration, int16, bool) {
			if int(p.Flow) != win.Flow || from != hop[0] || to != hop[1] || p.Seq < c.first || p.Seq >= c.first+uint64(c.n) {
				return 0, 0, false
			}
			i := p.Seq - c.first
			return time.Duration(w[i]) * res, int16(i + 1), true
		}
		tc := netenv.TopoConfig{Topology: *c.sc.Topology, Limits: lim, Scheduler: s, DelayHook: hook}
		if ss, ok := s.(*sched); ok && ss.red.H {
			tc.OnStart = func(src sim.StateSource) { ss.src = src }
		}
		if tr != nil {
			tc.HashTrace, tc.OnDelivery = true, tr.Delivery
		}
		r, err := netenv.RunTopology(ctx, tc)
		if err != nil {
			return nil, err
		}
		out.events, out.hash = r.Events, r.TraceSHA256
		for f, fr := range r.Flows {
			out.all[fmt.Sprintf("flow%d", f)] = map[string]int64{
				"received": int64(fr.Received), "received_bytes": int64(fr.ReceivedBytes),
				"sent": int64(fr.Sent), "dropped": int64(fr.Dropped), "reordered": int64(fr.Reordered),
			}
		}
	} else {
		t := c.sc.TCP
		hook := windowHook(win.Flow, c.kind, c.first, uint64(c.n), func(i uint64) time.Duration { return time.Duration(w[i]) * res })
		cfg := netenv.Config{
			Seed: t.Seed, Schedule: netenv.Constant(t.Env), Flows: t.Flows, SACK: t.SACK, Profile: t.Profile,
			Handshake: t.Handshake,
		}
		if t.Base != nil {
			cfg = *t.Base
			cfg.DelayHookAdds = true
		}
		cfg.Limits, cfg.Scheduler, cfg.DelayHook = lim, s, hook
		var obs tcp.Observer
		if tr != nil {
			cfg.HashTrace, obs = true, tr.State
		}
		if t.Watch != nil {
			t.Watch.Reset()
			if obs != nil {
				obs = teeObs{t.Watch, obs}
			} else {
				obs = t.Watch
			}
		}
		r, err := netenv.Run(ctx, cfg, obs)
		if err != nil {
			return nil, err
		}
		if t.Watch != nil {
			out.hits = append(out.hits, t.Watch.Hits()...)
		}
		out.events, out.hash = r.Events, r.TraceSHA256
		for f, fr := range r.Flows {
			done := int64(0)
			if fr.Done {
				done = 1
			}
			out.all[fmt.Sprintf("flow%d", f)] = map[string]int64{
				"delivered_bytes": int64(fr.DeliveredBytes), "cwnd": int64(fr.Final.Cwnd),
				"ssthresh": int64(fr.Final.SSThresh), "retransmits": int64(fr.Retransmits),
				"timeouts": int64(fr.Timeouts), "recoveries": int64(fr.Recoveries), "done": done,
				"syn_retransmits": int64(fr.SynRetransmits),
			}
		}
	}
	for _, m := range c.metrics {
		out.values = append(out.values, out.all[fmt.Sprintf("flow%d", m.flow)][m.m])
	}
	if len(c.conds) > 0 {
		env := map[string]any{}
		for k, v := range out.all {
			m := map[string]any{}
			for n, x := range v {
				m[n] = x
			}
			env[k] = m
		}
		for i, prog := range c.conds {
			v, err := expr.Run(prog, env)
			if err != nil {
				return nil, fmt.Errorf("condition %q: %w", c.sc.Conditions[i].Name, err)
			}
			if b, _ := v.(bool); b {
				out.hits = append(out.hits, c.sc.Conditions[i].Name)
			}
		}
	}
	return out, nil
}

// key renders an outcome as its canonical string: the selected metrics in
// order, then the conditions that hold.
func (c *compiled) key(o *outcome) string {
	var b strings.Builder
	for i, m := range c.metrics {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%d", m.name, o.values[i])
	}
	if len(o.hits) > 0 {
		fmt.Fprintf(&b, " hits=%s", strings.Join(o.hits, ","))
	}
	return b.String()
}

// YAML scenario files.

type yamlScenario struct {
	Name       string          `yaml:"name" json:"name"`
	EndS       float64         `yaml:"end_s" json:"end_s"`
	Topology   *yamlTopology   `yaml:"topology,omitempty" json:"topology,omitempty"`
	TCP        *yamlTCP        `yaml:"tcp,omitempty" json:"tcp,omitempty"`
	Window     yamlWindow      `yaml:"window" json:"window"`
	Metrics    []string        `yaml:"metrics,omitempty" json:"metrics,omitempty"`
	Conditions []ConditionSpec `yaml:"conditions,omitempty" json:"conditions,omitempty"`
}

type yamlTopology struct {
	Nodes       int               `yaml:"nodes" json:"nodes"`
	Links       []netenv.TopoLink `yaml:"links" json:"links"`
	CBR         []yamlCBR         `yaml:"cbr" json:"cbr"`
	HeaderBytes uint32            `yaml:"header_bytes,omitempty" json:"header_bytes,omitempty"`
}

type yamlCBR struct {
	Src         int     `yaml:"src" json:"src"`
	Dst         int     `yaml:"dst" json:"dst"`
	PacketBytes uint32  `yaml:"packet_bytes" json:"packet_bytes"`
	Rate        float64 `yaml:"rate" json:"rate"` // Mbit/s
	StartS      float64 `yaml:"start_s" json:"start_s"`
	StopS       float64 `yaml:"stop_s" json:"stop_s"`
}

type yamlTCP struct {
	Handshake bool          `yaml:"handshake,omitempty" json:"handshake,omitempty"`
	Env       netenv.Env    `yaml:"env" json:"env"`
	Flows     []netenv.Flow `yaml:"flows" json:"flows"`
	SACK      *bool         `yaml:"sack" json:"sack"`
	Profile   string        `yaml:"profile" json:"profile"`
	Seed      uint64        `yaml:"seed" json:"seed"`
}

type yamlWindow struct {
	Flow  int     `yaml:"flow" json:"flow"`
	Last  int     `yaml:"last" json:"last,omitempty"`
	From  *int    `yaml:"from" json:"from,omitempty"`
	Count int     `yaml:"count" json:"count,omitempty"`
	Kind  string  `yaml:"kind" json:"kind,omitempty"`
	Hop   []int   `yaml:"hop" json:"hop,omitempty"`
	LoMS  float64 `yaml:"lo_ms" json:"lo_ms"`
	HiMS  float64 `yaml:"hi_ms" json:"hi_ms"`
	ResMS float64 `yaml:"resolution_ms" json:"resolution_ms"`
}

func msDur(v float64) time.Duration { return time.Duration(math.Round(v * 1e6)) }

// LoadScenario reads a YAML scenario file.
func LoadScenario(path string) (*Scenario, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	sc, err := ParseScenario(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return sc, nil
}

// ParseScenario parses a YAML scenario. Unknown keys are errors that name
// the field.
func ParseScenario(b []byte) (*Scenario, error) {
	var y yamlScenario
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&y); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return y.scenario()
}

// ParseScenarioJSON parses the JSON form of a scenario (the same keys as
// the YAML form), as seeds carry it.
func ParseScenarioJSON(b []byte) (*Scenario, error) {
	var y yamlScenario
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&y); err != nil {
		return nil, err
	}
	return y.scenario()
}

// ScenarioJSON renders a scenario in the JSON form ParseScenarioJSON reads.
func ScenarioJSON(sc *Scenario) (json.RawMessage, error) {
	y, err := encode(sc)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // conditions keep their > and &&
	if err := enc.Encode(y); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(b.Bytes()), nil
}

func (y *yamlScenario) scenario() (*Scenario, error) {
	sc := &Scenario{Name: y.Name, End: time.Duration(math.Round(y.EndS * 1e9)), Metrics: y.Metrics, Conditions: y.Conditions}
	if sc.Name == "" {
		sc.Name = "scenario"
	}
	if y.EndS <= 0 {
		return nil, errors.New("end_s: the end of the simulation (s) must be given and > 0")
	}
	switch {
	case y.Topology != nil && y.TCP != nil:
		return nil, errors.New("topology and tcp: give one of them")
	case y.Topology != nil:
		t := &netenv.Topology{Nodes: y.Topology.Nodes, Links: y.Topology.Links, HeaderBytes: y.Topology.HeaderBytes}
		for _, f := range y.Topology.CBR {
			t.CBR = append(t.CBR, netenv.CBRFlow{
				Src: f.Src, Dst: f.Dst, PacketBytes: f.PacketBytes, Rate: f.Rate,
				Start: time.Duration(math.Round(f.StartS * 1e9)), Stop: time.Duration(math.Round(f.StopS * 1e9)),
			})
		}
		sc.Topology = t
	case y.TCP != nil:
		// Unset parameters are 0 (no loss, no random queuing: the
		// symbolic window is the only uncertainty), except the two that
		// cannot be: the application and the buffer take DefaultEnv's.
		e := y.TCP.Env
		def := netenv.DefaultEnv()
		if e.App == 0 {
			e.App = def.App
		}
		if e.Buffer == 0 {
			e.Buffer = def.Buffer
		}
		t := &TCPSpec{Env: e, Flows: y.TCP.Flows, SACK: true, Seed: y.TCP.Seed, Handshake: y.TCP.Handshake}
		if y.TCP.SACK != nil {
			t.SACK = *y.TCP.SACK
		}
		if y.TCP.Profile != "" {
			p, err := ccai.ParseProfile(y.TCP.Profile)
			if err != nil {
				return nil, fmt.Errorf("tcp.profile: %w", err)
			}
			t.Profile = p
		}
		sc.TCP = t
	default:
		return nil, errors.New("topology or tcp: one of them must be given")
	}
	w := y.Window
	sc.Window = Window{Flow: w.Flow, Kind: w.Kind, Lo: msDur(w.LoMS), Hi: msDur(w.HiMS), Res: msDur(w.ResMS)}
	if w.ResMS == 0 {
		sc.Window.Res = time.Millisecond
	}
	if w.LoMS == 0 && w.HiMS == 0 {
		return nil, errors.New("window.lo_ms, window.hi_ms: the delay interval must be given")
	}
	switch {
	case w.Last > 0 && (w.From != nil || w.Count > 0):
		return nil, errors.New("window.last: give either last or from/count")
	case w.Last > 0:
		sc.Window.Select, sc.Window.N = "last", w.Last
	case w.Kind == "fin" || w.Kind == "syn" || w.Kind == "syn-ack" || w.Kind == "synack":
		if w.From != nil || w.Count > 1 {
			return nil, fmt.Errorf("window.kind: %s is one packet; from and count do not apply", w.Kind)
		}
		sc.Window.Select, sc.Window.N = "kind", 1
	case w.From != nil:
		sc.Window.Select, sc.Window.From, sc.Window.N = "range", *w.From, w.Count
		if w.Kind != "" {
			sc.Window.Select = "kind"
		}
		if w.Count == 0 {
			sc.Window.N = 1
		}
	default:
		return nil, errors.New("window: give last: N, from: I with count: N, or kind: fin, syn or syn-ack")
	}
	if len(w.Hop) > 0 {
		if len(w.Hop) != 2 {
			return nil, fmt.Errorf("window.hop: %v, want [from, to]", w.Hop)
		}
		sc.Window.Hop = &[2]int{w.Hop[0], w.Hop[1]}
	}
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	return sc, nil
}

// EncodeScenario renders a scenario in the YAML form ParseScenario reads,
// so that a seed can carry its scenario next to a witness for Replay.
func EncodeScenario(sc *Scenario) ([]byte, error) {
	y, err := encode(sc)
	if err != nil {
		return nil, err
	}
	return yaml.Marshal(y)
}

func encode(sc *Scenario) (*yamlScenario, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	y := yamlScenario{Name: sc.Name, EndS: sc.End.Seconds(), Metrics: sc.Metrics, Conditions: sc.Conditions}
	if t := sc.Topology; t != nil {
		yt := &yamlTopology{Nodes: t.Nodes, Links: t.Links, HeaderBytes: t.HeaderBytes}
		for _, f := range t.CBR {
			yt.CBR = append(yt.CBR, yamlCBR{Src: f.Src, Dst: f.Dst, PacketBytes: f.PacketBytes, Rate: f.Rate, StartS: f.Start.Seconds(), StopS: f.Stop.Seconds()})
		}
		y.Topology = yt
	} else {
		t := sc.TCP
		sack := t.SACK
		y.TCP = &yamlTCP{Env: t.Env, Flows: t.Flows, SACK: &sack, Profile: t.Profile.String(), Seed: t.Seed, Handshake: t.Handshake}
	}
	w := sc.Window
	res := w.Res
	if res == 0 {
		res = time.Millisecond
	}
	y.Window = yamlWindow{Flow: w.Flow, Kind: w.Kind, LoMS: float64(w.Lo) / 1e6, HiMS: float64(w.Hi) / 1e6, ResMS: float64(res) / 1e6}
	switch w.Select {
	case "", "last":
		y.Window.Last = w.N
	default:
		switch w.Kind {
		case "fin", "syn", "syn-ack", "synack":
		default:
			from := w.From
			y.Window.From, y.Window.Count = &from, w.N
		}
	}
	if w.Hop != nil {
		y.Window.Hop = []int{w.Hop[0], w.Hop[1]}
	}
	return &y, nil
}

type teeObs struct{ a, b tcp.Observer }

func (t teeObs) Observe(r *tcp.StateRecord) { t.a.Observe(r); t.b.Observe(r) }

// WindowHook is the delay hook of a TCP window of n packets of one flow from
// packet first on: kind "data" (first transmissions, counted by segment),
// "fin", "syn", "syn-ack" or "ack" (counted in the order they leave the
// bottleneck). delays[i] is the delay of the window's i-th packet. The hook
// counts ACKs: use a fresh one for every run.
func WindowHook(flow int, kind string, first uint64, delays []time.Duration) (netenv.DelayHook, error) {
	var k packetKind
	switch kind {
	case "", "data", "fin":
	case "syn":
		k = kindSyn
	case "syn-ack", "synack":
		k = kindSynAck
	case "ack", "acks":
		k = kindAck
	default:
		return nil, fmt.Errorf("kind %q, want data, fin, syn, syn-ack or ack", kind)
	}
	ds := slices.Clone(delays)
	return windowHook(flow, k, first, uint64(len(ds)), func(i uint64) time.Duration { return ds[i] }), nil
}

// windowHook gives the window's packets their delays.
func windowHook(flow int, kind packetKind, first, n uint64, delay func(i uint64) time.Duration) netenv.DelayHook {
	acks := uint64(0) // ACKs of the flow that left the bottleneck so far
	return func(p *sim.Packet) (time.Duration, int16, bool) {
		if int(p.Flow) != flow || p.Retx {
			return 0, 0, false
		}
		var k uint64
		switch kind {
		case kindData:
			if p.IsAck || p.SYN || p.Len == 0 {
				return 0, 0, false
			}
			k = p.Seq / tcp.DefaultMSS
		case kindSyn:
			if !p.SYN || p.IsAck {
				return 0, 0, false
			}
		case kindSynAck:
			if !p.SYN || !p.IsAck {
				return 0, 0, false
			}
		case kindAck:
			if !p.IsAck || p.SYN {
				return 0, 0, false
			}
			k = acks
			acks++
		}
		if k < first || k >= first+n {
			return 0, 0, false
		}
		i := k - first
		return delay(i), int16(i + 1), true
	}
}

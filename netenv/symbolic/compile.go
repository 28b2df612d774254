package symbolic

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/vm"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/internal/exprcheck"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/sim"
	"github.com/actfuzz/actfuzz/netenv/tcp"
)

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
		// Bounded before it is compiled: one evaluation a branch.
		if err := exprcheck.Check(cs.When); err != nil {
			return fmt.Errorf("condition %q: when: %w", cs.Name, err)
		}
		prog, err := expr.Compile(cs.When, append([]expr.Option{expr.Env(env), expr.AsBool()}, exprcheck.Options()...)...)
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

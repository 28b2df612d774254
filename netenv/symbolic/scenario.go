package symbolic

import (
	"fmt"
	"strings"
	"time"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
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
	observe.Observer
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

package oracle

import (
	"slices"
	"strings"
	"testing"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
	"github.com/actfuzz/actfuzz/netenv/quicgo"
)

// Fire/silent cases of the RFC 9002 oracles (rfc9002.go), on hand-built
// records of the quic subject's schema: its base variables and its own
// (netenv/quicgo Vars: cc_state, cwnd_bytes, in_flight_bytes,
// packets_in_flight, min_rtt_ms, latest_rtt_ms, pto_count, lost).

// quicCaps are the quic subject's capabilities.
func quicCaps() netenv.Capabilities { return (&quicgo.Subject{}).Capabilities() }

// quicRec is a hand-built record of the quic subject: time in ms, the
// ca_state, cwnd and in_flight in 1280-byte datagrams, min_rtt in ms.
type quicRec struct {
	ms       float64
	state    string
	cwnd     uint32
	prior    uint32
	inFlight uint32
	minRTTms float64
	extra    float64 // the synthetic variable, when the test adds one
}

// quicRecords turns quicRecs into state records of the quic subject (with
// extra appended to the variables when withExtra).
func quicRecords(withExtra bool, rs ...quicRec) []observe.Record {
	var in []rec
	for _, r := range rs {
		cc := 1.0 // congestion_avoidance
		if r.state == "recovery" {
			cc = 2
		}
		vars := []float64{cc, float64(r.cwnd) * 1280, float64(r.inFlight) * 1280, float64(r.inFlight), r.minRTTms, r.minRTTms, 0, 0}
		if withExtra {
			vars = append(vars, r.extra)
		}
		in = append(in, rec{ms: r.ms, reason: observe.ReasonAck, state: r.state, cwnd: r.cwnd, prior: r.prior, inFlight: r.inFlight, srttMS: r.minRTTms, vars: vars})
	}
	return records(in...)
}

// withVar is the quic subject's capabilities with one more variable of
// reno flows: one that no subject reports yet, for an oracle tested on
// synthetic records.
func withVar(name string) netenv.Capabilities {
	caps := quicCaps()
	vars := caps.Vars
	caps.Vars = func(cca string) []ccai.VarDesc {
		return append(slices.Clone(vars(cca)), ccai.VarDesc{Name: name})
	}
	return caps
}

// replayUnselected watches records with the oracle's condition as it
// would run on the quic subject, bypassing Select (for oracles Select
// rightly skips there: the subject lacks their variable).
func replayUnselected(t *testing.T, name string, caps netenv.Capabilities, recs []observe.Record) []hit {
	t.Helper()
	o, ok := Lookup(name)
	if !ok {
		t.Fatalf("no oracle %s", name)
	}
	w, hits := watchSpecs(t, name, caps, []string{"reno"}, []corpus.ConditionSpec{o.specFor("quic", 0.5)})
	return feed(t, name, w, hits, env(), recs)
}

func TestRFC9002Oracles(t *testing.T) {
	const rtt = 100 // ms
	open := func(ms float64, cwnd, inFlight uint32) quicRec {
		return quicRec{ms: ms, state: "open", cwnd: cwnd, inFlight: inFlight, minRTTms: rtt}
	}
	recov := func(ms float64, cwnd uint32) quicRec {
		return quicRec{ms: ms, state: "recovery", cwnd: cwnd, prior: 20, inFlight: 10, minRTTms: rtt}
	}
	cases := []struct {
		oracle, what string
		recs         []quicRec
		unselected   string // the synthetic variable of an oracle Select skips on quic
		want         bool
	}{
		{"quic-recovery-steady", "a second reduction 30 ms into a recovery period (a loss sent before it)",
			[]quicRec{open(0, 20, 20), recov(10, 14), recov(40, 9)}, "", true},
		{"quic-recovery-steady", "growth 30 ms into a recovery period",
			[]quicRec{open(0, 20, 20), recov(10, 14), recov(40, 15)}, "", true},
		{"quic-recovery-steady", "one reduction on entry, then a steady window",
			[]quicRec{open(0, 20, 20), recov(10, 14), recov(40, 14), recov(90, 14)}, "", false},
		{"quic-recovery-steady", "a new period's reduction more than min_rtt after the last began",
			[]quicRec{open(0, 20, 20), recov(10, 14), recov(150, 9)}, "", false},
		{"quic-recovery-steady", "an undo of a spurious loss back to the window before",
			[]quicRec{open(0, 20, 20), recov(10, 14), recov(40, 20)}, "", false},
		{"quic-recovery-steady", "a collapse to kMinimumWindow",
			[]quicRec{open(0, 20, 20), recov(10, 14), recov(40, 2)}, "", false},

		{"quic-app-limited-no-growth", "growth with at most 2 of 40 datagrams in flight for two round trips",
			[]quicRec{open(0, 40, 2), open(100, 40, 2), open(200, 40, 1), open(250, 41, 2)}, "", true},
		{"quic-app-limited-no-growth", "growth with the window full",
			[]quicRec{open(0, 40, 38), open(100, 40, 39), open(200, 40, 39), open(250, 41, 40)}, "", false},
		{"quic-app-limited-no-growth", "a steady window while application-limited",
			[]quicRec{open(0, 40, 2), open(100, 40, 2), open(200, 40, 1), open(250, 40, 2)}, "", false},

		{"quic-persistent-congestion", "persistent congestion leaving cwnd at 10 datagrams",
			[]quicRec{{ms: 0, state: "open", cwnd: 20, minRTTms: rtt}, {ms: 900, state: "recovery", cwnd: 10, prior: 20, minRTTms: rtt, extra: 1}}, "persistent_congestion", true},
		{"quic-persistent-congestion", "persistent congestion collapsing cwnd to 2 datagrams",
			[]quicRec{{ms: 0, state: "open", cwnd: 20, minRTTms: rtt}, {ms: 900, state: "recovery", cwnd: 2, prior: 20, minRTTms: rtt, extra: 1}}, "persistent_congestion", false},

		{"quic-ecn-ce-reduces", "a CE mark that leaves the window and the state",
			[]quicRec{{ms: 0, state: "open", cwnd: 20, minRTTms: rtt}, {ms: 50, state: "open", cwnd: 21, minRTTms: rtt, extra: 1}}, "ecn_ce", true},
		{"quic-ecn-ce-reduces", "a CE mark that enters recovery with the window reduced",
			[]quicRec{{ms: 0, state: "open", cwnd: 20, minRTTms: rtt}, {ms: 50, state: "recovery", cwnd: 14, prior: 20, minRTTms: rtt, extra: 1}}, "ecn_ce", false},
		{"quic-ecn-ce-reduces", "a CE mark within a recovery period",
			[]quicRec{{ms: 0, state: "open", cwnd: 20, minRTTms: rtt}, {ms: 50, state: "recovery", cwnd: 14, prior: 20, minRTTms: rtt, extra: 1},
				{ms: 60, state: "recovery", cwnd: 14, prior: 20, minRTTms: rtt, extra: 2}}, "ecn_ce", false},
	}
	for _, c := range cases {
		t.Run(c.oracle+"/"+c.what, func(t *testing.T) {
			recs := quicRecords(c.unselected != "", c.recs...)
			var hits []hit
			if c.unselected != "" {
				hits = replayUnselected(t, c.oracle, withVar(c.unselected), recs)
			} else {
				hits = replay(t, c.oracle, quicCaps(), []string{"reno"}, env(), recs)
			}
			expect(t, c.oracle, c.what, hits, c.want)
		})
	}
}

// TestRFC9002Selection: on a quic campaign with every oracle, the RFC 9002
// oracles the subject can check run, the two it cannot are skipped saying
// why; on every other subject they apply to nothing and stay silent.
func TestRFC9002Selection(t *testing.T) {
	specs, skips := Select(Choice{}, quicCaps(), []string{"reno"}, ccai.ProfileLinux)
	for _, n := range []string{"quic-recovery-steady", "quic-app-limited-no-growth"} {
		if !containsName(specs, n) {
			t.Errorf("quic campaign: %s not selected (skips: %v)", n, skips)
		}
	}
	for _, n := range []string{"quic-persistent-congestion", "quic-ecn-ce-reduces"} {
		if containsName(specs, n) {
			t.Errorf("quic campaign: %s selected, but the subject cannot report its variable", n)
		}
		if !slices.ContainsFunc(skips, func(s Skip) bool { return s.Oracle == n && strings.HasPrefix(s.Why, "not on quic: ") }) {
			t.Errorf("quic campaign: %s not among the skips with its reason: %v", n, skips)
		}
	}
	native := netenv.Capabilities{Name: "native", CCAs: []string{"reno"}}
	specs, skips = Select(Choice{}, native, []string{"reno"}, ccai.ProfileLinux)
	for _, sp := range specs {
		if strings.HasPrefix(sp.Name, "quic-") {
			t.Errorf("native campaign selected %s", sp.Name)
		}
	}
	for _, s := range skips {
		if strings.HasPrefix(s.Oracle, "quic-") {
			t.Errorf("native campaign lists a skip of %s: %s", s.Oracle, s.Why)
		}
	}
}

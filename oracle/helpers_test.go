package oracle

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

// Helpers of the oracles' fire/silent tests (generic_test.go,
// families_test.go): a native simulation, or a hand-built stream of state
// records, watched by the conditions Select makes of one oracle.

// hit is one record at which an oracle held.
type hit struct {
	flow  int
	at    time.Duration
	state map[string]any
}

func (h hit) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "flow %d at %v:", h.flow, h.at)
	for _, k := range slices.Sorted(maps.Keys(h.state)) {
		fmt.Fprintf(&b, " %s=%v", k, h.state[k])
	}
	return b.String()
}

// maxHits is how many hits a watcher keeps.
const maxHits = 20

// watcher is a Watcher of oracle name on flows running ccas on a subject
// with capabilities caps (Linux profile), and the hits it keeps (the
// first maxHits).
func watcher(t *testing.T, name string, caps netenv.Capabilities, ccas []string) (*corpus.Watcher, *[]hit) {
	t.Helper()
	specs, skips := Select(Choice{Names: []string{name}}, caps, ccas, ccai.ProfileLinux)
	if len(specs) == 0 {
		t.Fatalf("%s selects no condition on %s %v: %v", name, caps.Name, ccas, skips)
	}
	return watchSpecs(t, name, caps, ccas, specs)
}

// watchSpecs is a Watcher of conditions specs (of oracle name) on flows
// running ccas on a subject with capabilities caps, and the hits it keeps.
func watchSpecs(t *testing.T, name string, caps netenv.Capabilities, ccas []string, specs []corpus.ConditionSpec) (*corpus.Watcher, *[]hit) {
	t.Helper()
	w, err := corpus.NewWatcherFor(caps, ccas, specs)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	hits := &[]hit{}
	w.OnHit = func(flow int, _ *corpus.Condition, obs []float64, at time.Duration) {
		if len(*hits) < maxHits {
			*hits = append(*hits, hit{flow, at, corpus.StateMap(w.Schemas[flow], obs)})
		}
	}
	return w, hits
}

// simRun is one native simulation: flows of cca (one each), a constant
// environment (or a schedule), bytes per flow, with SACK unless noSACK.
type simRun struct {
	ccas   []string
	env    netenv.Env
	sched  netenv.Schedule
	bytes  uint64
	seed   uint64
	noSACK bool
}

// config is r's run: its schedule and configuration.
func (r simRun) config() (netenv.Schedule, netenv.Config) {
	sched := r.sched
	if sched == nil {
		sched = netenv.Constant(r.env)
	}
	setup := netenv.Setup{CCAI: r.ccas, SACK: !r.noSACK, Bytes: r.bytes}
	return sched, setup.Config(r.seed, sched)
}

// simulate runs r on the native subject with oracle name checked and
// returns its hits and the run's result.
func simulate(t *testing.T, name string, r simRun) ([]hit, netenv.Result) {
	t.Helper()
	w, hits := watcher(t, name, netenv.NativeCapabilities(), r.ccas)
	sched, cfg := r.config()
	w.Start(sched)
	res, err := netenv.Run(context.Background(), cfg, w)
	if err != nil {
		t.Fatalf("%v: %v", r.ccas, err)
	}
	if w.Err != nil {
		t.Fatalf("%s on %v: %v", name, r.ccas, w.Err)
	}
	if res.Capped {
		t.Fatalf("%v: capped (%s)", r.ccas, res.CapReason)
	}
	return *hits, res
}

// holds says whether condition when held at some record of run r (on the
// native subject): that a run went through what an oracle is about.
func holds(t *testing.T, r simRun, when string) bool {
	t.Helper()
	w, err := corpus.NewWatcher(r.ccas, []corpus.ConditionSpec{{Name: "premise", When: when}})
	if err != nil {
		t.Fatalf("premise %q: %v", when, err)
	}
	held := false
	w.OnHit = func(int, *corpus.Condition, []float64, time.Duration) { held = true }
	sched, cfg := r.config()
	w.Start(sched)
	if _, err := netenv.Run(context.Background(), cfg, w); err != nil {
		t.Fatal(err)
	}
	if w.Err != nil {
		t.Fatalf("premise %q: %v", when, w.Err)
	}
	return held
}

// replay feeds hand-built records to a Watcher of oracle name on flows
// running ccas, under environment env, and returns the hits.
func replay(t *testing.T, name string, caps netenv.Capabilities, ccas []string, env netenv.Env, recs []observe.Record) []hit {
	t.Helper()
	w, hits := watcher(t, name, caps, ccas)
	return feed(t, name, w, hits, env, recs)
}

// feed feeds hand-built records to w under environment env and returns
// the hits.
func feed(t *testing.T, name string, w *corpus.Watcher, hits *[]hit, env netenv.Env, recs []observe.Record) []hit {
	t.Helper()
	w.Start(netenv.Constant(env))
	for i := range recs {
		w.Observe(&recs[i])
	}
	if w.Err != nil {
		t.Fatalf("%s: %v", name, w.Err)
	}
	return *hits
}

// expect checks that an oracle fired (want) or stayed silent (!want).
func expect(t *testing.T, name, what string, hits []hit, want bool) {
	t.Helper()
	switch {
	case want && len(hits) == 0:
		t.Errorf("%s did not fire on %s", name, what)
	case !want && len(hits) > 0:
		t.Errorf("%s fired on %s, which keeps its rule (%d hits), first: %v", name, what, len(hits), hits[0])
	}
}

// env is the default environment with the given parameters set by name.
func env(kv ...any) netenv.Env {
	e := netenv.DefaultEnv()
	for i := 0; i < len(kv); i += 2 {
		k := netenv.ParamIndex(kv[i].(string))
		if k < 0 {
			panic("no parameter " + kv[i].(string))
		}
		var v float64
		switch x := kv[i+1].(type) {
		case int:
			v = float64(x)
		case float64:
			v = x
		}
		e.Set(k, v)
	}
	return e
}

// rec is a hand-built state record: time in ms, the ca_state by name.
type rec struct {
	ms              float64
	reason          observe.Reason
	state           string
	cwnd, ssthresh  uint32
	prior, inFlight uint32
	delivered       uint64
	srttMS, rtoMS   float64
	flow            int32
	pacing          uint64
	vars            []float64
}

// records turns hand-built records into state records, prev_ca_state
// following the transitions as the native sender sets it.
func records(rs ...rec) []observe.Record {
	out := make([]observe.Record, len(rs))
	last := map[int32]ccai.CAState{}
	prevSt := map[int32]ccai.CAState{}
	for i, r := range rs {
		st, err := ccai.ParseCAState(r.state)
		if err != nil {
			panic(err)
		}
		prev, seen := last[r.flow]
		if !seen {
			prev = st
		}
		if st != prev {
			prevSt[r.flow] = prev
		} else if !seen {
			prevSt[r.flow] = st
		}
		last[r.flow] = st
		out[i] = observe.Record{
			Time: time.Duration(r.ms * float64(time.Millisecond)), Flow: r.flow, Reason: r.reason,
			Cwnd: r.cwnd, SSThresh: r.ssthresh, PriorCwnd: r.prior, InFlight: r.inFlight, Delivered: r.delivered,
			SRTT: time.Duration(r.srttMS * float64(time.Millisecond)), RTO: time.Duration(r.rtoMS * float64(time.Millisecond)),
			CAState: st, PrevCAState: prevSt[r.flow], PacingRate: r.pacing, Vars: r.vars,
		}
	}
	return out
}

// logRun logs a run's counters and its first hit (go test -v).
func logRun(t *testing.T, cca string, hits []hit, res netenv.Result) {
	t.Helper()
	f := res.Flows[0]
	first := "none"
	if len(hits) > 0 {
		first = hits[0].String()
	}
	t.Logf("%s: %v simulated, %d events, %d recoveries, %d timeouts, %d undos, %d ECN reductions; %d hits kept, first: %s",
		cca, res.SimTime, res.Events, f.Recoveries, f.Timeouts, f.Undos, f.ECNReductions, len(hits), first)
}

// containsName says whether specs hold a condition called name.
func containsName(specs []corpus.ConditionSpec, name string) bool {
	return slices.ContainsFunc(specs, func(sp corpus.ConditionSpec) bool { return sp.Name == name })
}

// tested are the oracles generic_test.go and families_test.go have fire
// and silent cases for.
var tested = []string{
	"cwnd-floor", "window-overflow", "stall", "rto-backoff", "cwnd-validation", "reduction-bound",
	"one-reduction-per-window", "ssthresh-steady", "recovery-exit", "undo-restores",
	"reno-half", "cubic-growth", "cubic-target-bound", "cubic-reno-friendly", "hystart-exit", "cubic-beta", "cubic-fast-convergence",
	"bbr-min-cwnd", "bbr-pacing-rate", "bbr-probe-rtt-cwnd", "bbr-probe-rtt-duration", "bbr-cwnd-target",
	"dctcp-alpha-range", "dctcp-reduction", "starvation",
	"quic-recovery-steady", "quic-persistent-congestion", "quic-app-limited-no-growth", "quic-ecn-ce-reduces",
}

// TestEveryOracleHasCases: a new oracle comes with a case that fires and
// one that does not.
func TestEveryOracleHasCases(t *testing.T) {
	for _, n := range Names() {
		if !slices.Contains(tested, n) {
			t.Errorf("oracle %s has no fire/silent case (generic_test.go, families_test.go)", n)
		}
	}
	for _, n := range tested {
		if _, ok := Lookup(n); !ok {
			t.Errorf("tested lists %s, which is no oracle", n)
		}
	}
}

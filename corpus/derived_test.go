package corpus

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

// The round-trip windows (rtt_ago.X, rtt_max.X) and the derived variables
// (DerivedVars) the Watcher computes, on hand-built records.

// TestRTTWindows: rtt_ago.X is the value in force one srtt before the
// record (the oldest kept before that, the current one before any RTT
// sample), rtt_max.X the largest value at the records of the last two
// srtt, both ends included.
func TestRTTWindows(t *testing.T) {
	schema := SchemaFor("reno")
	conds, err := Compile([]ConditionSpec{{Name: "w", When: "rtt_ago.cwnd >= 0 && rtt_max.in_flight >= 0"}}, schema)
	if err != nil {
		t.Fatal(err)
	}
	e := NewEvaluator(schema, conds)
	ti, si, ci, fi := schema.Index("time"), schema.Index("srtt"), schema.Index("cwnd"), schema.Index("in_flight")
	for _, tc := range []struct {
		t, srtt, cwnd, inFlight float64
		ago, max                float64
	}{
		{0, 0, 10, 5, 10, 5},                 // no RTT sample: the current values
		{0.05, 100, 12, 9, 10, 9},            // one srtt back is before the first record: the oldest
		{0.1, 100, 14, 3, 10, 9},             // cwnd at 0 s
		{0.16, 100, 20, 4, 12, 9},            // cwnd at 0.06 s: 12 since 0.05 s
		{0.25, 100, 20, 2, 14, 9},            // 9 (0.05 s) is exactly two srtt back: still in
		{0.26, 100, 20, 2, 20, 4},            // a change exactly one srtt back counts; 9 has left
		{0.4, 100, 30, 1, 20, 2},             // 4 (0.16 s) has left
		{0.5, 100, 30, 1, 30, 1},             // 2 (0.26 s) has left
		{0.5005, 250, 31, 1, 20, math.NaN()}, // srtt grew: cwnd at 0.2505 s (rtt_max: TestRTTMaxAfterSRTTGrows)
		{0.6, 250, 31, 0, 20, math.NaN()},    // cwnd at 0.35 s
		{10, 250, 40, 7, 31, 7},              // a long gap: the value before it
		{10.1, 50, 40, 6, 40, 7},             // srtt fell: cwnd at 10.05 s
		{10.2, 50, 41, 6, 40, 6},             // 7 (10 s) is more than two srtt back
		{10.25, 50, 41, 6, 41, 6},            //
		{10.3, 50, 42, 5, 41, 6},             //
	} {
		cur := make([]float64, len(schema))
		cur[ti], cur[si], cur[ci], cur[fi] = tc.t, tc.srtt, tc.cwnd, tc.inFlight
		if _, err := e.Eval(cur, cur, nil); err != nil {
			t.Fatal(err)
		}
		if got := e.win.agoVals[ci]; got != tc.ago {
			t.Errorf("at %v s: rtt_ago.cwnd = %v, want %v", tc.t, got, tc.ago)
		}
		if got := e.win.maxVals[fi]; got != tc.max && !math.IsNaN(tc.max) {
			t.Errorf("at %v s: rtt_max.in_flight = %v, want %v", tc.t, got, tc.max)
		}
	}
	// A new simulation forgets the windows.
	e.Reset()
	cur := make([]float64, len(schema))
	cur[ti], cur[si], cur[ci], cur[fi] = 0.01, 100, 3, 1
	if _, err := e.Eval(cur, cur, nil); err != nil {
		t.Fatal(err)
	}
	if e.win.agoVals[ci] != 3 || e.win.maxVals[fi] != 1 {
		t.Errorf("after Reset: rtt_ago.cwnd = %v, rtt_max.in_flight = %v, want 3 and 1", e.win.agoVals[ci], e.win.maxVals[fi])
	}
}

// TestRTTMaxAfterSRTTGrows: rtt_max.X is documented as the largest value
// at the records of the last two srtt. Records that fell out of the window
// while srtt was smaller do not come back when srtt grows (unlike
// rtt_ago's, whose window keeps two srtt for a lookup one srtt back).
func TestRTTMaxAfterSRTTGrows(t *testing.T) {
	schema := SchemaFor("reno")
	conds, err := Compile([]ConditionSpec{{Name: "w", When: "rtt_max.in_flight >= 0"}}, schema)
	if err != nil {
		t.Fatal(err)
	}
	e := NewEvaluator(schema, conds)
	ti, si, fi := schema.Index("time"), schema.Index("srtt"), schema.Index("in_flight")
	for _, r := range [][3]float64{{0, 100, 9}, {0.3, 100, 1}, {0.35, 300, 1}} {
		cur := make([]float64, len(schema))
		cur[ti], cur[si], cur[fi] = r[0], r[1], r[2]
		if _, err := e.Eval(cur, cur, nil); err != nil {
			t.Fatal(err)
		}
	}
	// At 0.35 s the last two srtt (600 ms) hold the record at 0 s.
	if got := e.win.maxVals[fi]; got != 9 {
		t.Errorf("rtt_max.in_flight = %v at 0.35 s with srtt 300 ms, want 9 (in flight at 0 s): the window dropped the record at 0 s when srtt was 100 ms, and a larger srtt does not bring it back; rtt_max can read low just after srtt grows", got)
	}
}

// A condition over the window: cwnd grew by more than half in one round
// trip.
func TestRTTWindowCondition(t *testing.T) {
	spec := ConditionSpec{Name: "c", When: "cwnd > 1.5 * rtt_ago.cwnd"}
	for _, tc := range []struct {
		name   string
		stream []rec
		want   []int
	}{
		{"doubling each round trip", []rec{{0, 100, 10, 0}, {0.1, 100, 16, 0}, {0.2, 100, 26, 0}, {0.3, 100, 40, 0}}, []int{1, 2, 3}},
		{"one segment a round trip", []rec{{0, 100, 10, 0}, {0.1, 100, 11, 0}, {0.2, 100, 12, 0}, {0.3, 100, 13, 0}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := holdsAt(t, spec, tc.stream)
			if !slices.Equal(got, tc.want) {
				t.Errorf("held at records %v, want %v", got, tc.want)
			}
		})
	}
}

// dRec is a hand-built record: time in ms and the ca_state by name.
type dRec struct {
	ms             float64
	flow           int32
	reason         observe.Reason
	state          string
	cwnd, ssthresh uint32
	prior          uint32
	inFlight       uint32
	delivered      uint64
	srttMS, rtoMS  float64
}

// derived feeds records to a Watcher of reno flows with no condition and
// returns, per record, its derived variables by name.
func derived(t *testing.T, flows int, recs []dRec) []map[string]float64 {
	t.Helper()
	ccas := make([]string, flows)
	for i := range ccas {
		ccas[i] = "reno"
	}
	w, err := NewWatcher(ccas, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]float64
	w.OnObservation = func(f int, obs []float64, _ time.Duration) {
		m := map[string]float64{}
		for _, v := range DerivedVars {
			m[v.Name] = obs[w.Schemas[f].Index(v.Name)]
		}
		out = append(out, m)
	}
	w.Start(netenv.Constant(netenv.DefaultEnv()))
	for _, r := range recs {
		st, err := ccai.ParseCAState(r.state)
		if err != nil {
			t.Fatal(err)
		}
		sr := observe.Record{Time: time.Duration(r.ms * float64(time.Millisecond)), Flow: r.flow, Reason: r.reason, CAState: st,
			Cwnd: r.cwnd, SSThresh: r.ssthresh, PriorCwnd: r.prior, Delivered: r.delivered, InFlight: r.inFlight,
			SRTT: time.Duration(r.srttMS * float64(time.Millisecond)), RTO: time.Duration(r.rtoMS * float64(time.Millisecond))}
		w.Observe(&sr)
	}
	return out
}

// check compares one derived variable over the records.
func check(t *testing.T, name string, got []map[string]float64, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d records observed, want %d", len(got), len(want))
	}
	for i, w := range want {
		if g := got[i][name]; math.Abs(g-w) > 1e-9 {
			t.Errorf("record %d: %s = %v, want %v", i, name, g, w)
		}
	}
}

// timeouts counts the timeouts of one stay in Loss without progress;
// last_timeout_rto is the rto of the previous one.
func TestDerivedTimeouts(t *testing.T) {
	const rto, ack = observe.ReasonRTO, observe.ReasonAck
	got := derived(t, 1, []dRec{
		{ms: 1000, state: "open", cwnd: 20, ssthresh: 50, delivered: 100, rtoMS: 300},
		{ms: 1300, reason: rto, state: "loss", cwnd: 1, ssthresh: 10, delivered: 100, rtoMS: 600},
		{ms: 1900, reason: rto, state: "loss", cwnd: 1, ssthresh: 10, delivered: 100, rtoMS: 1200},
		{ms: 3100, reason: rto, state: "loss", cwnd: 1, ssthresh: 10, delivered: 100, rtoMS: 2400},
		{ms: 3200, reason: ack, state: "loss", cwnd: 2, ssthresh: 10, delivered: 101, rtoMS: 2400}, // progress
		{ms: 5600, reason: rto, state: "loss", cwnd: 1, ssthresh: 10, delivered: 101, rtoMS: 4800},
		{ms: 5700, reason: ack, state: "open", cwnd: 2, ssthresh: 10, delivered: 101, rtoMS: 4800}, // leaves Loss (an undo): no progress
		{ms: 9000, reason: rto, state: "loss", cwnd: 1, ssthresh: 10, delivered: 101, rtoMS: 600},
		{ms: 9600, reason: rto, state: "loss", cwnd: 1, ssthresh: 10, delivered: 101, rtoMS: 1200},
	})
	check(t, "timeouts", got, []float64{0, 1, 2, 3, 0, 1, 0, 1, 2})
	check(t, "last_timeout_rto", got, []float64{0, 0, 600, 1200, 0, 0, 0, 0, 600})
	check(t, "reason", got, []float64{0, 2, 2, 2, 0, 2, 0, 2, 2})
	// since_progress: seconds since delivered last grew.
	check(t, "since_progress", got, []float64{0, 0.3, 0.9, 2.1, 0, 2.4, 2.5, 5.8, 6.4})
}

// since_progress restarts where data is in flight again after a record in
// Open with none: an application-limited flow (one segment every 12 s, as
// ns-3's TcpNewReno at 1 kbit/s, whose segment was lost and timed out) is
// not waiting on the network while it has nothing to send. In Loss,
// nothing in flight (everything marked lost) does not restart it.
func TestDerivedSinceProgressAfterIdle(t *testing.T) {
	const rto, ack = observe.ReasonRTO, observe.ReasonAck
	got := derived(t, 1, []dRec{
		{ms: 1000, state: "open", cwnd: 20, ssthresh: 50, inFlight: 1, delivered: 10, rtoMS: 300},
		{ms: 1100, reason: ack, state: "open", cwnd: 21, ssthresh: 50, inFlight: 0, delivered: 11, rtoMS: 300},  // idle from here
		{ms: 12700, reason: rto, state: "loss", cwnd: 1, ssthresh: 10, inFlight: 1, delivered: 11, rtoMS: 600},  // the next segment timed out
		{ms: 13300, reason: rto, state: "loss", cwnd: 1, ssthresh: 10, inFlight: 0, delivered: 11, rtoMS: 1200}, // all marked lost
		{ms: 14500, reason: rto, state: "loss", cwnd: 1, ssthresh: 10, inFlight: 1, delivered: 11, rtoMS: 2400},
		{ms: 14600, reason: ack, state: "open", cwnd: 2, ssthresh: 10, inFlight: 0, delivered: 12, rtoMS: 2400},
		{ms: 20000, reason: ack, state: "open", cwnd: 2, ssthresh: 10, inFlight: 0, delivered: 12, rtoMS: 2400}, // still nothing to send
	})
	check(t, "since_progress", got, []float64{0, 0, 0, 0.6, 1.8, 0, 5.4})
}

// since_reduction: seconds since the last entry into a reduction that
// reduced, before the record; -1 before any and after an undone one.
func TestDerivedSinceReduction(t *testing.T) {
	const inf = ccai.InfiniteSSThresh
	got := derived(t, 1, []dRec{
		{ms: 1000, state: "open", cwnd: 20, ssthresh: 50},
		{ms: 1100, state: "recovery", cwnd: 20, ssthresh: 10, prior: 20}, // enters: -1 before it
		{ms: 1300, state: "recovery", cwnd: 12, ssthresh: 10, prior: 20},
		{ms: 1500, state: "open", cwnd: 10, ssthresh: 10, prior: 20}, // completed: cwnd = ssthresh
		{ms: 2100, state: "open", cwnd: 11, ssthresh: 10, prior: 20},
		{ms: 2200, state: "disorder", cwnd: 11, ssthresh: 10, prior: 20},
		{ms: 2300, state: "cwr", cwnd: 11, ssthresh: 8, prior: 11},     // CWR from disorder enters
		{ms: 2400, state: "recovery", cwnd: 9, ssthresh: 8, prior: 11}, // recovery from CWR does not
		{ms: 2600, state: "open", cwnd: 11, ssthresh: 10, prior: 11},   // undone: cwnd above ssthresh
		{ms: 2700, state: "open", cwnd: 11, ssthresh: 10, prior: 11},
		{ms: 3000, state: "recovery", cwnd: 11, ssthresh: 5, prior: 11},
		{ms: 3100, state: "open", cwnd: 5, ssthresh: 1 << 30, prior: 11}, // undone: ssthresh back above the reduced one
		{ms: 3200, state: "open", cwnd: 6, ssthresh: 1 << 30, prior: 11},
		{ms: 4000, state: "loss", cwnd: 1, ssthresh: 3, prior: 6}, // a timeout enters
		{ms: 4500, state: "loss", cwnd: 2, ssthresh: 3, prior: 6},
		{ms: 5000, state: "open", cwnd: 3, ssthresh: 3, prior: 6}, // Loss ends, not undone
		{ms: 5500, state: "open", cwnd: 4, ssthresh: 3, prior: 6}, // past ssthresh in Open: no undo
		{ms: 6000, state: "open", cwnd: 5, ssthresh: 3, prior: 6},
		{ms: 7000, state: "recovery", cwnd: 5, ssthresh: 2, prior: 5},
		{ms: 7000.5, state: "recovery", cwnd: 5, ssthresh: 2, prior: 5},
		{ms: 8000, state: "disorder", cwnd: 2, ssthresh: 2, prior: 5}, // completed, to disorder
		{ms: 8000.5, state: "disorder", cwnd: 3, ssthresh: 2, prior: 5},
		{ms: 8001, state: "recovery", cwnd: 3, ssthresh: 2, prior: 3}, // another, a ms later
		{ms: 8002, state: "recovery", cwnd: 3, ssthresh: 2, prior: 3},
		{ms: 9000, state: "open", cwnd: 2, ssthresh: 2, prior: 3},
		{ms: 9000.25, state: "open", cwnd: 2, ssthresh: 2, prior: 3},
		{ms: 9500, state: "open", cwnd: 3, ssthresh: 2, prior: 3},
		{ms: 10000, state: "open", cwnd: 3, ssthresh: 2, prior: 3},
		{ms: 10000, state: "open", cwnd: 4, ssthresh: 2, prior: 3},
		{ms: 10100, state: "loss", cwnd: 1, ssthresh: 2, prior: 4},
		{ms: 10200, state: "disorder", cwnd: 4, ssthresh: 2, prior: 4}, // Loss undone: cwnd restored
		{ms: 10300, state: "disorder", cwnd: 4, ssthresh: 2, prior: 4},
		{ms: 10400, state: "cwr", cwnd: 4, ssthresh: 2, prior: 4},
		{ms: 10500, state: "cwr", cwnd: 3, ssthresh: 2, prior: 4},
		{ms: 10600, state: "open", cwnd: 2, ssthresh: 2, prior: 4},
		{ms: 10700, state: "open", cwnd: 2, ssthresh: 2, prior: 4},
		{ms: 10800, state: "recovery", cwnd: 2, ssthresh: 2, prior: 2}, // reduces nothing: no reduction
		{ms: 10800.5, state: "recovery", cwnd: 2, ssthresh: 2, prior: 2},
		{ms: 10900, state: "open", cwnd: 2, ssthresh: 2, prior: 2},
		// A timeout that does not lower ssthresh (BBR's), undone: cwnd
		// back at prior_cwnd.
		{ms: 11000, state: "open", cwnd: 20, ssthresh: inf, prior: 2},
		{ms: 11100, state: "loss", cwnd: 1, ssthresh: inf, prior: 20},
		{ms: 11300, state: "open", cwnd: 20, ssthresh: inf, prior: 20},
		{ms: 11400, state: "open", cwnd: 21, ssthresh: inf, prior: 20},
	})
	check(t, "since_reduction", got, []float64{
		-1, -1, 0.2, 0.4, 1.0, 1.1, 1.2, 0.1, 0.3, -1, -1, 0.1, -1,
		-1, 0.5, 1.0, 1.5, 2.0, 3.0, 0.0005, 1.0, 1.0005, 1.001, 0.001,
		0.999, 0.99925, 1.499, 1.999, 1.999, 2.099, 0.1, -1, -1, 0.1, 0.2, 0.3,
		0.4, 0.4005, 0.5, 0.6, 0.7, 0.2, -1,
	})
}

// share: a flow's delivery rate over the last 10 s over the best of the
// active flows'; 1 before 11 s, with one flow, and once the others are
// done.
func TestDerivedShare(t *testing.T) {
	// Flow 0 delivers 1000 packets a second until 15 s, flow 1 250; a
	// record each every 500 ms.
	var recs []dRec
	for ms := 500.0; ms <= 20000; ms += 500 {
		if ms <= 15000 {
			recs = append(recs, dRec{ms: ms, flow: 0, state: "open", cwnd: 100, ssthresh: 80, delivered: uint64(ms)})
		}
		recs = append(recs, dRec{ms: ms + 1, flow: 1, state: "open", cwnd: 20, ssthresh: 16, delivered: uint64(ms / 4)})
	}
	got := derived(t, 2, recs)
	at := func(flow int32, ms float64) float64 {
		for i, r := range recs {
			if r.flow == flow && r.ms == ms {
				return got[i]["share"]
			}
		}
		t.Fatalf("no record of flow %d at %v ms", flow, ms)
		return 0
	}
	for _, tc := range []struct {
		flow     int32
		ms       float64
		min, max float64
	}{
		{0, 10500, 1, 1},       // before 11 s
		{1, 10501, 1, 1},       //
		{0, 12000, 1, 1},       // the best flow
		{1, 12001, 0.24, 0.26}, // a quarter of flow 0's rate
		{1, 15001, 0.24, 0.26}, //
		{1, 15501, 0.24, 0.27}, // flow 0's last record 0.5 s ago: still active
		{1, 16501, 1, 1},       // flow 0 done 1.5 s ago: not compared
	} {
		if s := at(tc.flow, tc.ms); s < tc.min || s > tc.max {
			t.Errorf("flow %d at %v ms: share %v, want [%v, %v]", tc.flow, tc.ms, s, tc.min, tc.max)
		}
	}
	one := derived(t, 1, []dRec{{ms: 12000, state: "open", delivered: 5}, {ms: 30000, state: "open", delivered: 6}})
	check(t, "share", one, []float64{1, 1})
}

// srtt_min: the smallest srtt so far, 0 before the first sample.
func TestDerivedSRTTMin(t *testing.T) {
	got := derived(t, 1, []dRec{
		{ms: 10, state: "open"},
		{ms: 50, state: "open", srttMS: 40},
		{ms: 90, state: "open", srttMS: 35},
		{ms: 900, state: "open", srttMS: 300},
		{ms: 950, state: "open", srttMS: 36},
	})
	check(t, "srtt_min", got, []float64{0, 40, 35, 35, 35})
}

// reduction_left: in_flight at the entry into the reduction
// since_reduction counts from, less what was delivered since, before the
// record; -1 when since_reduction is.
func TestDerivedReductionLeft(t *testing.T) {
	got := derived(t, 1, []dRec{
		{ms: 1000, state: "open", cwnd: 20, ssthresh: 50, inFlight: 20, delivered: 100},
		{ms: 1100, state: "recovery", cwnd: 20, ssthresh: 10, prior: 20, inFlight: 18, delivered: 100}, // enters: -1 before it
		{ms: 1200, state: "recovery", cwnd: 12, ssthresh: 10, prior: 20, inFlight: 12, delivered: 105},
		{ms: 1300, state: "open", cwnd: 10, ssthresh: 10, prior: 20, inFlight: 10, delivered: 117}, // 18 − 17
		{ms: 1400, state: "open", cwnd: 10, ssthresh: 10, prior: 20, inFlight: 10, delivered: 130}, // all delivered: 0
		{ms: 1500, state: "recovery", cwnd: 10, ssthresh: 5, prior: 10, inFlight: 9, delivered: 130},
		{ms: 1600, state: "open", cwnd: 12, ssthresh: 5, prior: 10, inFlight: 9, delivered: 131}, // undone
		{ms: 1700, state: "open", cwnd: 12, ssthresh: 5, prior: 10, inFlight: 9, delivered: 132},
	})
	check(t, "reduction_left", got, []float64{-1, -1, 13, 1, 0, 0, 8, -1})
}

// rtt_floor: twice the smallest one-way delay of the phases in force since
// the flow's first record, a phase between two records included; 0
// without a schedule.
func TestDerivedRTTFloor(t *testing.T) {
	at := func(ms float64, delay float64) netenv.Phase {
		e := netenv.DefaultEnv()
		e.Delay = delay
		return netenv.Phase{Env: e, Until: time.Duration(ms * float64(time.Millisecond))}
	}
	// 30 ms until 1 s, 5 ms until 1.1 s (no record in it), 50 ms after.
	sched := netenv.Schedule{at(1000, 30), at(1100, 5), at(0, 50)}
	w, err := NewWatcher([]string{"reno", "reno"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []float64
	w.OnObservation = func(f int, obs []float64, _ time.Duration) {
		got = append(got, obs[w.Schemas[f].Index("rtt_floor")])
	}
	w.Start(sched)
	for _, r := range []struct {
		flow int32
		ms   float64
	}{{0, 500}, {0, 900}, {0, 2000}, {1, 3000}, {0, 4000}} {
		w.Observe(&observe.Record{Time: time.Duration(r.ms * float64(time.Millisecond)), Flow: r.flow, CAState: ccai.StateOpen})
	}
	want := []float64{60, 60, 10, 100, 10} // flow 1 began in the 50 ms phase
	if !slices.Equal(got, want) {
		t.Errorf("rtt_floor %v, want %v", got, want)
	}
	check(t, "rtt_floor", derived(t, 1, []dRec{{ms: 10, state: "open"}}), []float64{40}) // the default 20 ms
	w.Reset()                                                                            // no schedule
	got = nil
	w.Observe(&observe.Record{Time: time.Second, CAState: ccai.StateOpen})
	if !slices.Equal(got, []float64{0}) {
		t.Errorf("rtt_floor without a schedule %v, want [0]", got)
	}
}

package corpus

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

// rec is one observation of a stream: time (s), srtt (ms), cwnd, in_flight.
type rec struct{ t, srtt, cwnd, inFlight float64 }

// holdsAt runs the condition over the stream and returns the indices of the
// records at which it held.
func holdsAt(t *testing.T, spec ConditionSpec, stream []rec) []int {
	t.Helper()
	schema := SchemaFor("reno")
	conds, err := Compile([]ConditionSpec{spec}, schema)
	if err != nil {
		t.Fatalf("Compile(%+v): %v", spec, err)
	}
	e := NewEvaluator(schema, conds)
	ti, si, ci, fi := schema.Index("time"), schema.Index("srtt"), schema.Index("cwnd"), schema.Index("in_flight")
	cur, prev := make([]float64, len(schema)), make([]float64, len(schema))
	var at []int
	for i, r := range stream {
		copy(prev, cur)
		cur[ti], cur[si], cur[ci], cur[fi] = r.t, r.srtt, r.cwnd, r.inFlight
		if i == 0 {
			copy(prev, cur)
		}
		hits, err := e.Eval(cur, prev, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) > 0 {
			at = append(at, i)
		}
	}
	return at
}

func TestConditionStretch(t *testing.T) {
	// An application-limited flow whose cwnd keeps growing (ns-3 bug #966)
	// from record 2 on, with one record (6) where in-flight catches up and
	// the stretch restarts.
	appLimited := []rec{
		{0.0, 100, 10, 10},
		{0.1, 100, 10, 9},
		{0.2, 100, 12, 4}, // stretch begins: in_flight*2 < cwnd
		{0.3, 100, 14, 4},
		{0.4, 100, 16, 4},
		{0.6, 100, 20, 4},  // 0.4 s = 4 RTTs after 0.2
		{0.7, 100, 22, 12}, // not app-limited: the stretch ends
		{0.8, 100, 24, 4},  // a new stretch
		{1.0, 100, 28, 4},
		{1.2, 100, 32, 4}, // 0.4 s after 0.8
	}
	for _, tc := range []struct {
		name   string
		spec   ConditionSpec
		stream []rec
		want   []int
	}{
		{"plain condition, no stretch", ConditionSpec{When: "in_flight * 2 < cwnd"}, appLimited, []int{2, 3, 4, 5, 7, 8, 9}},
		{"held for a duration", ConditionSpec{When: "in_flight * 2 < cwnd", For: "400ms"}, appLimited, []int{5, 9}},
		{"held for round trips", ConditionSpec{When: "in_flight * 2 < cwnd", For: "4rtt"}, appLimited, []int{5, 9}},
		{"round trips at the current srtt", ConditionSpec{When: "in_flight * 2 < cwnd", For: "2rtt"},
			[]rec{{0, 100, 12, 4}, {0.15, 100, 12, 3}, {0.25, 200, 12, 2}, {0.4, 200, 12, 1}}, []int{3}},
		{"while and when over first", ConditionSpec{While: "in_flight * 2 < cwnd", For: "4rtt", When: "cwnd >= first.cwnd + 8"}, appLimited, []int{5, 9}},
		{"when false over the stretch", ConditionSpec{While: "in_flight * 2 < cwnd", For: "4rtt", When: "cwnd > 2 * first.cwnd"}, appLimited, nil},
		{"first.time", ConditionSpec{While: "cwnd > 0", For: "1s", When: "first.time == 0 && time >= 1"}, appLimited, []int{8, 9}},
		{"never long enough", ConditionSpec{When: "in_flight * 2 < cwnd", For: "5s"}, appLimited, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.spec.Name = "c"
			if got := holdsAt(t, tc.spec, tc.stream); !slices.Equal(got, tc.want) {
				t.Errorf("held at records %v, want %v", got, tc.want)
			}
		})
	}
}

// A stretch does not carry over from one simulation to the next.
func TestConditionStretchReset(t *testing.T) {
	schema := SchemaFor("reno")
	conds, err := Compile([]ConditionSpec{{Name: "c", When: "cwnd > 5", For: "1s"}}, schema)
	if err != nil {
		t.Fatal(err)
	}
	e := NewEvaluator(schema, conds)
	ti, ci := schema.Index("time"), schema.Index("cwnd")
	obs := make([]float64, len(schema))
	obs[ti], obs[ci] = 0.5, 10
	if h, _ := e.Eval(obs, obs, nil); len(h) != 0 {
		t.Fatal("held before a second had passed")
	}
	e.Reset()
	obs[ti] = 1.6
	if h, _ := e.Eval(obs, obs, nil); len(h) != 0 {
		t.Fatal("a stretch of the previous simulation carried over")
	}
	obs[ti] = 2.6
	if h, _ := e.Eval(obs, obs, nil); len(h) != 1 {
		t.Fatal("a second-long stretch did not hold")
	}
}

func TestConditionStretchErrors(t *testing.T) {
	for _, tc := range []struct {
		spec ConditionSpec
		want string
	}{
		{ConditionSpec{When: "cwnd > 1", For: "soon"}, "for:"},
		{ConditionSpec{When: "cwnd > 1", For: "-1s"}, "for:"},
		{ConditionSpec{When: "cwnd > 1", For: "0rtt"}, "for:"},
		{ConditionSpec{When: "cwnd > 1", While: "cwnd > 0"}, "while: needs for:"},
		{ConditionSpec{When: "cwnd > first.cwnd", For: "1s"}, "needs while:"},
		{ConditionSpec{When: "cwnd > 1", While: "cwnd > first.cwnd", For: "1s"}, "while: first.X"},
		{ConditionSpec{When: "cwnd > 1", While: "cwnd >", For: "1s"}, "while:"},
	} {
		tc.spec.Name = "c"
		_, err := Compile([]ConditionSpec{tc.spec}, SchemaFor("reno"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Compile(%+v) = %v, want an error containing %q", tc.spec, err, tc.want)
		}
	}
}

// A stretch condition's distance is its stretch predicate's.
func TestStretchDistance(t *testing.T) {
	schema := SchemaFor("reno")
	d, err := CompileDistance(ConditionSpec{Name: "c", While: "in_flight * 2 < cwnd", For: "4rtt", When: "cwnd > 2 * first.cwnd"}, schema)
	if err != nil {
		t.Fatal(err)
	}
	obs := make([]float64, len(schema))
	obs[schema.Index("cwnd")], obs[schema.Index("in_flight")] = 10, 4
	if v := d.Eval(obs, obs); v != 0 {
		t.Errorf("distance %v where the stretch predicate holds", v)
	}
	obs[schema.Index("in_flight")] = 10
	if v := d.Eval(obs, obs); v <= 0 {
		t.Errorf("distance %v where it does not", v)
	}
}

// p.X reads the parameter of the phase in force at the record's time.
func TestConditionParams(t *testing.T) {
	w, err := NewWatcher([]string{"reno"}, []ConditionSpec{
		{Name: "above-bdp", When: "cwnd > p.bw * 1e6 / 8 / 1448 * 2 * p.delay / 1000"},
		{Name: "on-red", When: `p.aqm == "red" && cwnd > 1`},
	})
	if err != nil {
		t.Fatal(err)
	}
	slow, fast := netenv.DefaultEnv(), netenv.DefaultEnv()
	slow.BW, slow.Delay = 1, 50 // BDP 8.6 packets
	fast.BW, fast.Delay = 100, 50
	fast.AQM = netenv.AQMRED
	sched := netenv.Schedule{{Env: slow, Until: 2 * time.Second}, {Env: fast}}
	var hits []string
	w.OnHit = func(_ int, c *Condition, _ []float64, at time.Duration) {
		hits = append(hits, fmt.Sprintf("%s@%v", c.Name, at))
	}
	w.Start(sched)
	for _, r := range []observe.Record{
		{Time: 1 * time.Second, Cwnd: 8},
		{Time: 1500 * time.Millisecond, Cwnd: 20},
		{Time: 2500 * time.Millisecond, Cwnd: 20},
	} {
		w.Observe(&r)
	}
	if w.Err != nil {
		t.Fatal(w.Err)
	}
	want := []string{"above-bdp@1.5s", "on-red@2.5s"}
	if !slices.Equal(hits, want) {
		t.Errorf("hits %v, want %v", hits, want)
	}
	// Without a schedule, a condition that reads p.X is an error, never a
	// silent zero.
	w.Reset()
	w.Observe(&observe.Record{Time: time.Second, Cwnd: 5})
	if w.Err == nil {
		t.Error("no error for p.X without a schedule")
	}
	if _, err := Compile([]ConditionSpec{{Name: "c", When: "cwnd > p.bandwidth"}}, SchemaFor("reno")); err == nil || !strings.Contains(err.Error(), "p.bandwidth") {
		t.Errorf("an unknown parameter: %v", err)
	}
}

// A distance reads p.X from the environment it was given.
func TestDistanceParams(t *testing.T) {
	schema := SchemaFor("reno")
	d, err := CompileDistance(ConditionSpec{Name: "c", When: "cwnd > p.buffer"}, schema)
	if err != nil {
		t.Fatal(err)
	}
	obs := make([]float64, len(schema))
	obs[schema.Index("cwnd")] = 50
	if v := d.Eval(obs, obs); v != 1 {
		t.Errorf("distance %v before SetEnv, want 1 (unknown)", v)
	}
	env := netenv.DefaultEnv()
	env.Buffer = 100
	d.SetEnv(&env)
	far := d.Eval(obs, obs)
	env.Buffer = 60
	d.SetEnv(&env)
	near := d.Eval(obs, obs)
	env.Buffer = 10
	d.SetEnv(&env)
	if !(far > near && near > 0) || d.Eval(obs, obs) != 0 {
		t.Errorf("distances %v (buffer 100), %v (60), %v (10)", far, near, d.Eval(obs, obs))
	}
	if _, err := CompileDistance(ConditionSpec{Name: "c", When: `p.aqm == "red" && cwnd > 2`}, schema); err != nil {
		t.Errorf("a categorical parameter against a string: %v", err)
	}
}

// TestConditionUnknownMember: prev.X, rtt_ago.X, rtt_max.X and
// held.X name a state variable of the schema, as a bare X does; expr-lang
// compiles a missing key of these maps to nil, which failed on every
// record at run time (cubic-reno-friendly's rtt_ago.w_est on ns-3, whose
// CUBIC reports no w_est: a condition-error fault per simulation). And
// rtt_max.X needs a number.
func TestConditionUnknownMember(t *testing.T) {
	schema := SchemaFor("reno")
	for _, tc := range []struct{ when, want string }{
		{"rtt_ago.w_est > rtt_ago.cwnd + 2", "unknown name w_est in rtt_ago.w_est"},
		{"prev.w_max > cwnd", "unknown name w_max in prev.w_max"},
		{"rtt_max.nosuch > 1", "unknown name nosuch"},
		{"held.mode > 0.2", "unknown name mode in held.mode"},
		{`rtt_max.ca_state == "open"`, "categorical"},
	} {
		if _, err := Compile([]ConditionSpec{{Name: "c", When: tc.when}}, schema); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.when, err, tc.want)
		}
	}
	for _, when := range []string{"rtt_ago.cwnd > 2 * prev.cwnd", "rtt_max.in_flight < prev.cwnd", `held.ca_state > 1 && prev.ca_state == "open"`} {
		if _, err := Compile([]ConditionSpec{{Name: "c", When: when}}, schema); err != nil {
			t.Errorf("%s: %v", when, err)
		}
	}
}

// TestReachedAgrees: Evaluator.reached leaves the rounding out where a
// stretch was already found long enough at an earlier time and an srtt no
// smaller; at every record it says what the rounding says, srtt going up
// and down, time going back now and then, NaN.
func TestReachedAgrees(t *testing.T) {
	schema := SchemaFor("reno")
	for _, tc := range []struct{ name, forS string }{{"duration", "30ms"}, {"rtts", "2rtt"}, {"fraction", "0.5rtt"}} {
		conds, err := Compile([]ConditionSpec{{Name: "s", When: "cwnd >= 0", For: tc.forS}}, schema)
		if err != nil {
			t.Fatal(err)
		}
		c := conds[0]
		e := NewEvaluator(schema, conds)
		rng := rand.New(rand.NewPCG(5, 6))
		cur, first := make([]float64, len(schema)), make([]float64, len(schema))
		for n := range 50000 {
			if n%500 == 0 {
				e.reach[0].ok = false // a new stretch
				first[c.timeIdx] = cur[c.timeIdx]
			}
			switch rng.IntN(40) {
			case 0:
				cur[c.timeIdx] -= 0.001
			case 1:
				cur[c.srttIdx] = math.NaN()
			default:
				cur[c.timeIdx] += float64(rng.IntN(3)) * 0.001
				cur[c.srttIdx] = float64(5 + rng.IntN(30))
			}
			want := !(math.Round((cur[c.timeIdx]-first[c.timeIdx])*1e9) < c.stretch.nanoseconds(cur[c.srttIdx]))
			if got := e.reached(0, c, cur, first); got != want {
				t.Fatalf("record %d (time %v, srtt %v, since %v): reached %v, want %v", n, cur[c.timeIdx], cur[c.srttIdx], first[c.timeIdx], got, want)
			}
		}
	}
}

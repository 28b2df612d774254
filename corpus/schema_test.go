package corpus

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/gvisor"
	"github.com/actfuzz/actfuzz/netenv/ns3"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

// TestSchemaPerSubject: the observation schema is what the subject
// provides, each name once: no native-only variable on ns-3 or gVisor, no
// variable gVisor does not have, gVisor's own ones, no second
// pacing_rate; and the derived variables last.
func TestSchemaPerSubject(t *testing.T) {
	base := netenv.BaseVars
	noPacing := slices.DeleteFunc(slices.Clone(base), func(s string) bool { return s == "pacing_rate" })
	for _, tc := range []struct {
		subject string
		caps    netenv.Capabilities
		cca     string
		want    []string
	}{
		{"native", netenv.NativeCapabilities(), "reno", base},
		{"native", netenv.NativeCapabilities(), "cubic", append(slices.Clone(base), "target", "w_max", "k", "w_est", "cnt", "delay_min_ms", "epoch_s")},
		{"native", netenv.NativeCapabilities(), "bbr", append(slices.Clone(base), "mode", "btlbw", "rtprop_ms", "cycle_idx", "pacing_gain",
			"cwnd_gain", "full_bw_reached", "round", "target_cwnd", "extra_acked", "lt_bw", "lt_use_bw")},
		{"ns3", ns3.DefaultCapabilities(), "TcpCubic", base},
		{"ns3", ns3.DefaultCapabilities(), "cubic", base},
		{"ns3", ns3.DefaultCapabilities(), "TcpBbr", base},
		{"gvisor", (&gvisor.Subject{}).Capabilities(), "cubic", append(slices.Clone(noPacing), "target", "w_max", "k", "w_est", "epoch_s", "w_c", "w_last_max")},
		{"gvisor", (&gvisor.Subject{}).Capabilities(), "reno", noPacing},
	} {
		// The derived variables close every schema.
		tc.want = append(slices.Clone(tc.want), DerivedVars.Names()...)
		if got := SchemaOf(tc.caps, tc.cca).Names(); !slices.Equal(got, tc.want) {
			t.Errorf("%s %s:\n got %v\nwant %v", tc.subject, tc.cca, got, tc.want)
		}
	}
}

// TestSchemaObserve: each variable is read from its own field, whatever
// the subject leaves out.
func TestSchemaObserve(t *testing.T) {
	r := &observe.Record{Time: 2 * time.Second, Flow: 0, Cwnd: 10, SSThresh: 5, SRTT: 30 * time.Millisecond,
		CAState: ccai.StateRecovery, PacingRate: 1234, Vars: []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}}
	for _, tc := range []struct {
		name   string
		schema Schema
		want   map[string]any
	}{
		{"native bbr", SchemaFor("bbr"), map[string]any{"cwnd": 10.0, "srtt": 30.0, "pacing_rate": 1234.0, "mode": "drain", "btlbw": 3.0, "extra_acked": 11.0, "time": 2.0}},
		{"gvisor cubic", SchemaOf((&gvisor.Subject{}).Capabilities(), "cubic"), map[string]any{"cwnd": 10.0, "ca_state": "recovery", "target": 1.0, "epoch_s": 5.0, "w_c": 6.0, "w_last_max": 7.0}},
		{"native cubic", SchemaFor("cubic"), map[string]any{"ssthresh": 5.0, "cnt": 5.0, "epoch_s": 7.0}},
	} {
		obs := make([]float64, len(tc.schema))
		tc.schema.Observe(r, obs)
		m := StateMap(tc.schema, obs)
		for k, v := range tc.want {
			if m[k] != v {
				t.Errorf("%s: %s = %v, want %v (%v)", tc.name, k, m[k], v, m)
			}
		}
		if _, ok := m["pacing_rate"]; ok != (tc.name != "gvisor cubic") {
			t.Errorf("%s: pacing_rate present %v", tc.name, ok)
		}
	}
}

// TestWatcherForSubject: conditions see the subject's variables (gVisor's
// w_c) and compiling one on a variable the subject lacks (gVisor's cnt)
// fails.
func TestWatcherForSubject(t *testing.T) {
	gv := (&gvisor.Subject{}).Capabilities()
	w, err := NewWatcherFor(gv, []string{"cubic"}, []ConditionSpec{{Name: "c", When: "w_c > 5 && prev.w_last_max == 7"}})
	if err != nil {
		t.Fatal(err)
	}
	var hits int
	w.OnHit = func(int, *Condition, []float64, time.Duration) { hits++ }
	w.Observe(&observe.Record{Cwnd: 1, Vars: []float64{0, 0, 0, 0, 0, 6, 7}})
	if hits != 1 {
		t.Fatalf("%d hits, want 1", hits)
	}
	if _, err := NewWatcherFor(gv, []string{"cubic"}, []ConditionSpec{{Name: "c", When: "cnt > 1"}}); err == nil || !strings.Contains(err.Error(), "cnt") {
		t.Fatalf("a condition on cnt compiled for gVisor: %v", err)
	}
}

func TestRefs(t *testing.T) {
	refs, err := Refs(`prev.ca_state == "recovery" && ca_state == "open" && cwnd >= prior_cwnd && cwnd > 2`)
	if err != nil || !slices.Equal(refs.Cur, []string{"ca_state", "cwnd", "prior_cwnd"}) || !slices.Equal(refs.Prev, []string{"ca_state"}) || refs.First != nil {
		t.Fatalf("Refs = %+v, %v", refs, err)
	}
	refs, err = Refs(`cwnd > 2 * first.cwnd && first.time < 3`)
	if err != nil || !slices.Equal(refs.Cur, []string{"cwnd"}) || refs.Prev != nil || !slices.Equal(refs.First, []string{"cwnd", "time"}) {
		t.Fatalf("Refs = %+v, %v", refs, err)
	}
	if _, err := Refs("cwnd >"); err == nil {
		t.Fatal("no error for a bad expression")
	}
}

package observe

import (
	"slices"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/ccai"
)

// TestTraceColumns: every base variable has a trace position of its own,
// the reason column the one left, so the trace's columns are a
// permutation (a CSV trace's order is frozen: trace hashes depend on it).
func TestTraceColumns(t *testing.T) {
	want := []string{"time_s", "flow", "reason", "cwnd", "ssthresh", "srtt_ms", "rttvar_ms", "rto_ms", "ca_state",
		"prev_ca_state", "prior_cwnd", "in_flight", "delivered", "pacing_rate"}
	var got []string
	seen := map[int]bool{reasonAt: true}
	for _, v := range Base {
		if seen[v.TraceAt] || v.TraceAt < 0 || v.TraceAt > len(Base) {
			t.Fatalf("%s: trace position %d taken or out of range", v.Name, v.TraceAt)
		}
		seen[v.TraceAt] = true
	}
	for _, c := range TraceColumns {
		got = append(got, c.Name)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("trace columns %v, want %v", got, want)
	}
}

// TestBaseValues: each variable's observed value and trace cell, from one
// record whose fields all differ, in the variable's unit.
func TestBaseValues(t *testing.T) {
	r := &Record{Time: 1500 * time.Millisecond, Flow: 2, Reason: ReasonRTO, Cwnd: 10, SSThresh: 7,
		SRTT: 12500 * time.Microsecond, RTTVar: 3 * time.Millisecond, RTO: 210 * time.Millisecond,
		CAState: ccai.StateLoss, PrevCAState: ccai.StateRecovery, PriorCwnd: 14, InFlight: 9, Delivered: 1234, PacingRate: 56789}
	tests := []struct {
		name  string
		value float64
		cell  string
	}{
		{"cwnd", 10, "10"},
		{"ssthresh", 7, "7"},
		{"srtt", 12.5, "12.500000"},
		{"rttvar", 3, "3.000000"},
		{"ca_state", float64(ccai.StateLoss), "loss"},
		{"prev_ca_state", float64(ccai.StateRecovery), "recovery"},
		{"prior_cwnd", 14, "14"},
		{"in_flight", 9, "9"},
		{"delivered", 1234, "1234"},
		{"rto", 210, "210.000"},
		{"pacing_rate", 56789, "56789"},
		{"time", 1.5, "1.500000000"},
		{"flow", 2, "2"},
	}
	if got := Names(); len(got) != len(tests) {
		t.Fatalf("%d base variables %v, the test knows %d", len(got), got, len(tests))
	}
	for i, tc := range tests {
		v := Base[i]
		if v.Name != tc.name {
			t.Fatalf("slot %d is %s, want %s (the observation order is frozen)", i, v.Name, tc.name)
		}
		if got := v.Value(r); got != tc.value {
			t.Errorf("%s: value %v, want %v", v.Name, got, tc.value)
		}
		if got := string(v.Append(nil, r)); got != tc.cell {
			t.Errorf("%s: trace cell %q, want %q", v.Name, got, tc.cell)
		}
	}
	if got := string(reasonColumn.Append(nil, r)); got != "rto" {
		t.Errorf("reason cell %q, want rto", got)
	}
}

// TestValuesIsBase: the per-ACK fast path gives what every Base entry's
// Value gives, for records whose fields are all distinct and non-zero.
func TestValuesIsBase(t *testing.T) {
	recs := []Record{
		{Time: 1500 * time.Millisecond, Flow: 2, Cwnd: 11, SSThresh: 22, SRTT: 33 * time.Millisecond,
			RTTVar: 44 * time.Microsecond, CAState: ccai.StateRecovery, PrevCAState: ccai.StateDisorder, PriorCwnd: 55,
			InFlight: 66, Delivered: 77, RTO: 880 * time.Millisecond, PacingRate: 99},
		{},
	}
	for _, r := range recs {
		got := make([]float64, len(Base))
		Values(&r, got)
		for i, v := range Base {
			if want := v.Value(&r); got[i] != want {
				t.Errorf("%s: Values gives %v, Base's Value %v", v.Name, got[i], want)
			}
		}
	}
}

package gvisor

import (
	"math"
	"testing"

	"github.com/actfuzz/actfuzz/ccai"
)

// TestClampWindows: gVisor's windows (ints, and CUBIC's float64 WMax and
// WLastMax, from which prior_cwnd comes) map to record fields the same
// way, so a window past the records' ceiling is saturated alike whichever
// it came from: cwnd, ssthresh and prior_cwnd of the 2,000-simulation
// campaign's cubic-beta hit (gVisor CUBIC's cwnd of 5.8·10¹⁰ after its
// unbounded target, reduced to 4.1·10¹⁰) all read 2³¹ − 1, which the
// oracles that check a ratio skip. A float past int's range is no window
// of 0 (Go's float-to-int conversion is implementation-defined there).
func TestClampWindows(t *testing.T) {
	const inf = ccai.InfiniteSSThresh
	for _, tc := range []struct {
		name string
		in   int
		want uint32
	}{
		{"initial ssthresh", math.MaxInt, inf},
		{"cwnd 5.8e10", 57_797_700_959, inf},
		{"ssthresh 4.1e10", 40_458_390_671, inf},
		{"the ceiling", int(inf), inf},
		{"below it", int(inf) - 1, inf - 1},
		{"10", 10, 10},
		{"negative", -5, 0},
	} {
		if got := clampWindow(tc.in); got != tc.want {
			t.Errorf("clampWindow(%s = %d) = %d, want %d", tc.name, tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct {
		name string
		in   float64
		want uint32
	}{
		{"WLastMax 5.8e10", 5.786278279e+10, inf},
		{"past MaxInt64", 1e30, inf},
		{"+Inf", math.Inf(1), inf},
		{"just below the ceiling", float64(inf) - 0.6, inf - 1},
		{"rounds up to the ceiling", float64(inf) - 0.4, inf},
		{"20.4", 20.4, 20},
		{"20.5", 20.5, 21},
		{"NaN", math.NaN(), 0},
		{"-Inf", math.Inf(-1), 0},
	} {
		if got := clampFloatWindow(tc.in); got != tc.want {
			t.Errorf("clampFloatWindow(%s = %g) = %d, want %d", tc.name, tc.in, got, tc.want)
		}
	}
}

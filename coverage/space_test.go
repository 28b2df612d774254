package coverage

import (
	"math"
	"strings"
	"testing"
)

func TestGranules(t *testing.T) {
	for _, tc := range []struct {
		v    Var
		want int64
	}{
		{Var{Name: "cwnd", Min: 1, Max: 1024, Step: 1}, 1024},
		{Var{Name: "srtt", Min: 0, Max: 2044, Step: 4}, 512},
		{Var{Name: "srtt", Min: 0, Max: 2048, Step: 4}, 513}, // the closed range has a 513th granule
		{Var{Name: "rttvar", Min: 0, Max: 1020, Step: 4}, 256},
		{Var{Name: "loss", Min: 0, Max: 1, Step: 0.1}, 11},
		{Var{Name: "one", Min: 5, Max: 5, Step: 1}, 1},
		{Var{Name: "ca", Values: CAStates}, 5},
		{Var{Name: "bad", Min: 2, Max: 1, Step: 1}, 0},
		{Var{Name: "bad", Min: 0, Max: 1, Step: 0}, 0},
	} {
		if got := tc.v.Granules(); got != tc.want {
			t.Errorf("%+v: Granules() = %d, want %d", tc.v, got, tc.want)
		}
	}
}

func TestGranule(t *testing.T) {
	cwnd := Var{Name: "cwnd", Min: 1, Max: 1024, Step: 1}
	srtt := Var{Name: "srtt", Min: 0, Max: 2044, Step: 4}
	loss := Var{Name: "loss", Min: 0, Max: 1, Step: 0.1}
	ca := Var{Name: "ca", Values: CAStates}
	for _, tc := range []struct {
		v      Var
		x      float64
		g      int64
		inside bool
	}{
		{cwnd, 1, 0, true},
		{cwnd, 512, 511, true},
		{cwnd, 513, 512, true},
		{cwnd, 1024, 1023, true},
		{cwnd, 1024.5, 1023, true}, // inside the last granule
		{cwnd, 1025, 1024, false},
		{cwnd, 0, -1, false},
		{cwnd, 4294967294, 4294967293, false},
		{cwnd, math.Inf(1), 1<<62 + 1, false},
		{cwnd, math.NaN(), 0, false},
		{srtt, 0, 0, true},
		{srtt, 3.99, 0, true},
		{srtt, 4, 1, true},
		{srtt, 2047.9, 511, true},
		{srtt, 2048, 512, false},
		{loss, 0.3, 3, true}, // not 2 despite 0.3/0.1 = 2.9999999999999996
		{loss, 1, 10, true},
		{ca, 0, 0, true},
		{ca, 4, 4, true},
		{ca, 5, 5, false},
		{ca, 1.5, 1, false},
		{ca, -1, -1, false},
	} {
		g, ok := tc.v.Granule(tc.x)
		if g != tc.g || ok != tc.inside {
			t.Errorf("%s.Granule(%g) = %d, %v; want %d, %v", tc.v.Name, tc.x, g, ok, tc.g, tc.inside)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		sp   Space
		want string // substring of the error, "" for none
	}{
		{"default", DefaultSpace(), ""},
		{"empty", Space{}, "empty"},
		{"inverted", DefaultSpace().With(Var{Name: "cwnd", Min: 10, Max: 1, Step: 1}), `"cwnd": inverted range`},
		{"zero step", DefaultSpace().With(Var{Name: "target", Min: 0, Max: 10}), `"target": step 0`},
		{"negative step", DefaultSpace().With(Var{Name: "srtt", Min: 0, Max: 10, Step: -1}), `"srtt": step -1`},
		{"nan", Space{Vars: []Var{{Name: "x", Min: math.NaN(), Max: 1, Step: 1}}}, `"x": non-finite`},
		{"duplicate", Space{Vars: []Var{{Name: "x", Max: 1, Step: 1}, {Name: "x", Max: 2, Step: 1}}}, `duplicate variable "x"`},
		{"no name", Space{Vars: []Var{{Max: 1, Step: 1}}}, "empty name"},
		{"duplicate value", Space{Vars: []Var{{Name: "ca", Values: []string{"a", "a"}}}}, `"ca": duplicate value`},
		{"too fine", Space{Vars: []Var{{Name: "x", Max: 1, Step: 1e-10}}}, `"x": more than 2^32`},
	} {
		err := tc.sp.Validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: unexpected error %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// TestPaperRegionCounts checks the region counts quoted by ACT §2.1 and §4.2.
func TestPaperRegionCounts(t *testing.T) {
	twoD := Space{Vars: DefaultSpace().Vars[:2]} // (cwnd, ssthresh) of §2.1
	fourCA := DefaultSpace().With(Var{Name: "ca_state", Values: []string{"open", "disorder", "recovery", "loss"}})
	for _, tc := range []struct {
		name string
		sp   Space
		k    int
		want uint64
	}{
		{"§2.1 k=1", twoD, 1, 1024 * 1024},
		{"§2.1 k=512", twoD, 512, 4},
		{"§2.1 k=1024", twoD, 1024, 1},
		{"default k=1", DefaultSpace(), 1, 1024 * 1024 * 512 * 256 * 5},
		{"default k=16", DefaultSpace(), 16, 10_485_760},
		{"default k=128", DefaultSpace(), 128, 2_560},
		{"default k=1024", DefaultSpace(), 1024, 5},
		// §4.2's figures are those of the same S with four ca_state values.
		{"§4.2 k=16", fourCA, 16, 8_388_608},
		{"§4.2 k=128", fourCA, 128, 2_048},
		{"§4.2 k=2 (about 10^10)", fourCA, 2, 1 << 35},
		{"non power of two", twoD, 1000, 4},
		{"k=0", twoD, 0, 0},
		{"overflow", Space{Vars: []Var{{Name: "a", Max: 1<<32 - 1, Step: 1}, {Name: "b", Max: 1<<32 - 1, Step: 1}, {Name: "c", Max: 1, Step: 1}}}, 1, math.MaxUint64},
	} {
		if got := tc.sp.Regions(tc.k); got != tc.want {
			t.Errorf("%s: Regions(%d) = %d, want %d", tc.name, tc.k, got, tc.want)
		}
	}
	if got := DefaultSpace().MaxK(); got != 1024 {
		t.Errorf("MaxK = %d, want 1024", got)
	}
	if got := len(DefaultSpace().Ks()); got != 11 {
		t.Errorf("len(Ks) = %d, want 11", got)
	}
}

func TestWith(t *testing.T) {
	sp := DefaultSpace().With(
		Var{Name: "prior_cwnd", Min: 1, Max: 1024, Step: 1},
		Var{Name: "cwnd", Min: 1, Max: 65536, Step: 1},
	)
	if sp.Dim() != 6 || sp.Index("prior_cwnd") != 5 || sp.Index("cwnd") != 0 {
		t.Fatalf("With: got %+v", sp.Vars)
	}
	if sp.Vars[0].Max != 65536 || sp.MaxK() != 65536 {
		t.Errorf("cwnd not replaced: %+v, MaxK %d", sp.Vars[0], sp.MaxK())
	}
	if DefaultSpace().Dim() != 5 || DefaultSpace().Vars[0].Max != 1024 {
		t.Error("With modified its receiver")
	}
	if l, ok := sp.Level(256); !ok || l != 8 {
		t.Errorf("Level(256) = %d, %v", l, ok)
	}
	if _, ok := sp.Level(3); ok {
		t.Error("Level(3) ok")
	}
	if _, ok := DefaultSpace().Level(2048); ok {
		t.Error("Level(2048) ok for MaxK 1024")
	}
}

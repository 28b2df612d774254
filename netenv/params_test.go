package netenv

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestParamTable checks every row: a unique name, a doc, accessors that
// round-trip, a default that is a valid value, a default range that
// resolves, and simplification rules that keep a valid environment valid.
func TestParamTable(t *testing.T) {
	seen := map[string]bool{}
	def := DefaultEnv()
	if err := def.Validate(); err != nil {
		t.Fatalf("DefaultEnv: %v", err)
	}
	for i, p := range Params() {
		if p.Name == "" || p.Doc == "" || seen[p.Name] {
			t.Fatalf("row %d: name %q, doc %q: want a unique name and a doc", i, p.Name, p.Doc)
		}
		seen[p.Name] = true
		if ParamIndex(p.Name) != i || ParamNames()[i] != p.Name {
			t.Fatalf("row %d: ParamIndex(%q) = %d", i, p.Name, ParamIndex(p.Name))
		}
		if got := def.Get(i); got != p.Default {
			t.Fatalf("%s: DefaultEnv has %v, the table says %v", p.Name, got, p.Default)
		}
		r, err := p.Resolve(p.Range)
		if err != nil {
			t.Fatalf("%s: default range: %v", p.Name, err)
		}
		for _, v := range []float64{r.Point(0), r.Point(r.Points())} {
			e := def
			e.Set(i, v)
			if e.Get(i) != v {
				t.Fatalf("%s: Set(%v) then Get = %v", p.Name, v, e.Get(i))
			}
			if err := e.Validate(); err != nil {
				t.Fatalf("%s = %v (an end of the default range): %v", p.Name, v, err)
			}
			for _, s := range p.Simplify {
				f := e
				p.Apply(s, &f)
				if err := f.Validate(); err != nil {
					t.Fatalf("%s: rule %q turns %v into an invalid environment: %v", p.Name, s.Name, v, err)
				}
			}
		}
	}
}

func TestParamCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    float64
		want string // "" = valid
	}{
		{"loss", 0, ""},
		{"loss", 1, ""},
		{"loss", 1.5, "parameter loss = 1.5: must be in [0, 1]"},
		{"loss", math.NaN(), "parameter loss = NaN: must be a finite number"},
		{"bw", 0, "parameter bw = 0: must be in [0.001, 1000000] Mbit/s"},
		{"delay", -1, "must be in [0, 1000000] ms"},
		{"qshape", -0.5, "parameter qshape = -0.5: must be ≥ 0"},
		{"qscale", math.Inf(1), "must be a finite number"},
		{"app", 0, "parameter app = 0: must be in (0, 10000000] Mbit/s"},
		{"app", 1e-9, ""},
		{"buffer", 0, "must be in [1, 16777216] packets"},
	} {
		err := ParamAt(ParamIndex(tc.name)).Check(tc.v)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s = %v: %v", tc.name, tc.v, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s = %v: error %v, want %q", tc.name, tc.v, err, tc.want)
		}
	}
	e := DefaultEnv()
	e.QShape, e.QScale = 1e4, 1e3
	if err := e.Validate(); err == nil || !strings.Contains(err.Error(), "qshape×qscale") {
		t.Fatalf("Gamma mean 1e7 ms: %v", err)
	}
}

func TestParamParse(t *testing.T) {
	buf := ParamAt(ParamIndex("buffer"))
	if v, err := buf.Parse("250"); err != nil || v != 250 {
		t.Fatalf("buffer 250: %v, %v", v, err)
	}
	for _, s := range []string{"1.5", "x", "0"} {
		if _, err := buf.Parse(s); err == nil || !strings.Contains(err.Error(), "buffer") {
			t.Fatalf("buffer %q: %v, want an error naming buffer", s, err)
		}
	}
}

// aqm is a categorical row as the issue on AQMs will add one: a test of
// the machinery, not of the table.
var aqm = Param{Name: "aqm", Doc: "queue discipline", Kind: Categorical, Values: []string{"droptail", "red", "codel", "pie"}}

func TestCategoricalRange(t *testing.T) {
	if _, err := aqm.Resolve(Range{Min: 0, Max: 2, Step: 1}); err == nil {
		t.Fatal("categorical with min/max/step accepted")
	}
	if _, err := aqm.Resolve(Range{Values: []string{"red", "fq"}}); err == nil || !strings.Contains(err.Error(), `"fq"`) {
		t.Fatalf("unknown value: %v", err)
	}
	if _, err := aqm.Resolve(Range{Values: []string{"red", "red"}}); err == nil {
		t.Fatal("duplicate value accepted")
	}
	all, err := aqm.Resolve(Range{})
	if err != nil || !all.Categorical() || all.Points() != 3 {
		t.Fatalf("no values = all of them: %+v, %v", all, err)
	}
	r, err := aqm.Resolve(Range{Values: []string{"codel", "droptail"}})
	if err != nil {
		t.Fatal(err)
	}
	// Choices are the parameter's indices: codel = 2, droptail = 0.
	if r.Points() != 1 || r.Point(0) != 2 || r.Point(1) != 0 || r.Index(0) != 1 || r.Index(2) != 0 {
		t.Fatalf("grid of {codel, droptail}: points %d, %v %v", r.Points(), r.Point(0), r.Point(1))
	}
	if r.Snap(1) != 2 || r.Snap(0) != 0 {
		t.Fatalf("Snap: red (not a choice) → %v, droptail → %v", r.Snap(1), r.Snap(0))
	}
	if r.Normalize(2) != 0 || r.Normalize(0) != 1 {
		t.Fatalf("Normalize: %v %v", r.Normalize(2), r.Normalize(0))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	count := map[float64]int{}
	for range 1000 {
		// Interpolating between codel and droptail chooses one of them,
		// never something in between (red, 1).
		v := r.Between(rng, 2, 0)
		if v != 2 && v != 0 {
			t.Fatalf("Between(codel, droptail) = %v", v)
		}
		count[v]++
		// Extrapolating has no side: every choice, whatever the sign.
		if w := all.Toward(rng, 1, +1); !slices.Contains([]float64{0, 1, 2, 3}, w) {
			t.Fatalf("Toward = %v", w)
		}
		count[10+all.Toward(rng, 3, -1)]++
	}
	if count[0] < 400 || count[2] < 400 {
		t.Fatalf("Between is not a fair choice: %v", count)
	}
	for v := 10.0; v < 14; v++ {
		if count[v] < 150 {
			t.Fatalf("Toward never or rarely gives %v: %v", v-10, count)
		}
	}
	if err := aqm.Check(4); err == nil || !strings.Contains(err.Error(), "one of [droptail red codel pie]") {
		t.Fatalf("Check(4): %v", err)
	}
	if v, err := aqm.Parse("pie"); err != nil || v != 3 {
		t.Fatalf("Parse(pie) = %v, %v", v, err)
	}
	if _, err := aqm.Parse("sfq"); err == nil {
		t.Fatal("Parse(sfq) accepted")
	}
}

// TestNumericRange pins the grid arithmetic ACT and the fuzz decoder share.
func TestNumericRange(t *testing.T) {
	r, err := ParamAt(ParamIndex("delay")).Resolve(Range{Min: 1, Max: 10, Step: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ v, snap float64 }{{0, 1}, {1.9, 1}, {2.1, 3}, {9.5, 9}, {100, 9}} {
		if got := r.Snap(tc.v); got != tc.snap {
			t.Errorf("Snap(%v) = %v, want %v", tc.v, got, tc.snap)
		}
	}
	if r.Points() != 4 || r.Point(4) != 9 || r.Index(9) != 4 || r.FloorIndex(8.9) != 3 || r.Index(-5) != 0 {
		t.Fatalf("grid: points %d, point(4) %v, index(9) %d, floor(8.9) %d", r.Points(), r.Point(4), r.Index(9), r.FloorIndex(8.9))
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		if v := r.Toward(rng, 5, +1); v < 5 {
			t.Fatalf("Toward(5, +1) = %v", v)
		}
		if v := r.Toward(rng, 5, -1); v > 5 {
			t.Fatalf("Toward(5, -1) = %v", v)
		}
	}
	if _, err := ParamAt(ParamIndex("loss")).Resolve(Range{Min: 0, Max: 2, Step: 0.1}); err == nil || !strings.Contains(err.Error(), "loss") {
		t.Fatalf("loss up to 2: %v", err)
	}
	if _, err := ParamAt(ParamIndex("bw")).Resolve(Range{Values: []string{"fast"}}); err == nil {
		t.Fatal("numeric with values accepted")
	}
}

// ParamNamesWithoutECN is every parameter but ecn and ecn_k, in order.
func TestParamNamesWithoutECN(t *testing.T) {
	var want []string
	for _, n := range ParamNames() {
		if !strings.HasPrefix(n, "ecn") {
			want = append(want, n)
		}
	}
	got := ParamNamesWithoutECN()
	if !slices.Equal(got, want) || len(got) != len(ParamNames())-2 {
		t.Fatalf("ParamNamesWithoutECN() = %v, want %v", got, want)
	}
}

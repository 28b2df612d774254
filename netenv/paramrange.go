package netenv

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Range is one parameter's extent in a campaign: [Min, Max] at granularity
// Step for a numeric parameter, or a set of Values for a categorical one
// (`params: {aqm: {values: [droptail, codel]}}`). ACT draws, interpolates
// and steers within it; the fuzz decoder maps words onto its grid.
type Range struct {
	Min    float64  `yaml:"min,omitempty" json:"min,omitempty"`
	Max    float64  `yaml:"max,omitempty" json:"max,omitempty"`
	Step   float64  `yaml:"step,omitempty" json:"step,omitempty"`
	Values []string `yaml:"values,omitempty" json:"values,omitempty"`

	// choices are a categorical range's values as indices into the
	// parameter's Values, set by Param.Resolve.
	choices []float64
}

// Categorical reports whether r is a set of choices.
func (r Range) Categorical() bool { return len(r.choices) > 0 }

// Fixed reports whether r holds one value: a parameter the campaign does
// not vary. Drawing from it takes no random number, so that adding a
// parameter to the table, fixed by default, leaves every campaign's
// draws as they were.
func (r Range) Fixed() bool { return r.Points() == 0 }

// Resolve checks r against the parameter and returns it ready for use:
// a numeric range needs Min ≤ Max, Step > 0 and both ends valid values; a
// categorical one needs known, distinct values (all of them when r names
// none).
func (p *Param) Resolve(r Range) (Range, error) {
	if p.Kind == Categorical {
		if r.Min != 0 || r.Max != 0 || r.Step != 0 {
			return r, fmt.Errorf("%s is categorical: want {values: [...]} of %v, not min/max/step", p.Name, p.Values)
		}
		vals := r.Values
		if len(vals) == 0 {
			vals = p.Values
		}
		r.choices = r.choices[:0:0]
		for _, v := range vals {
			i := slices.Index(p.Values, v)
			if i < 0 {
				return r, fmt.Errorf("%s: unknown value %q (want one of %v)", p.Name, v, p.Values)
			}
			if slices.Contains(r.choices, float64(i)) {
				return r, fmt.Errorf("%s: value %q listed twice", p.Name, v)
			}
			r.choices = append(r.choices, float64(i))
		}
		r.Values = slices.Clone(vals)
		return r, nil
	}
	if len(r.Values) > 0 {
		return r, fmt.Errorf("%s is numeric: want {min, max, step}, not values", p.Name)
	}
	if !(r.Step > 0) || math.IsInf(r.Step, 0) || r.Min > r.Max || math.IsNaN(r.Min) || math.IsNaN(r.Max) {
		return r, fmt.Errorf("want min ≤ max and step > 0 (got min %g, max %g, step %g)", r.Min, r.Max, r.Step)
	}
	for _, v := range []float64{r.Min, r.Max} {
		if err := p.Check(v); err != nil {
			return r, err
		}
	}
	return r, nil
}

// DefaultRanges are the ranges of a campaign that sets none: every row's
// Range, resolved.
func DefaultRanges() []Range {
	out := make([]Range, len(params))
	for i := range params {
		r, err := params[i].Resolve(params[i].Range)
		if err != nil {
			panic("netenv: parameter table: " + err.Error())
		}
		out[i] = r
	}
	return out
}

// Snap maps v to the range: the nearest grid point inside [Min, Max], or
// for a categorical range v itself when it is a choice and the first
// choice otherwise.
func (r Range) Snap(v float64) float64 {
	if r.Categorical() {
		if slices.Contains(r.choices, v) {
			return v
		}
		return r.choices[0]
	}
	n := math.Floor((r.Max-r.Min)/r.Step + 1e-9)
	g := math.Round((v - r.Min) / r.Step)
	g = math.Max(0, math.Min(g, n))
	return r.Min + g*r.Step
}

// Between draws uniformly on the grid between a and b (either order): ACT's
// interpolation. A categorical range chooses a or b.
func (r Range) Between(rng *rand.Rand, a, b float64) float64 {
	if r.Fixed() {
		return r.Point(0)
	}
	if r.Categorical() {
		if rng.IntN(2) == 0 {
			return r.Snap(a)
		}
		return r.Snap(b)
	}
	if a > b {
		a, b = b, a
	}
	return r.Snap(a + rng.Float64()*(b-a))
}

// Uniform draws uniformly from the range (ACT step 1).
func (r Range) Uniform(rng *rand.Rand) float64 {
	if r.Fixed() {
		return r.Point(0)
	}
	if r.Categorical() {
		return r.choices[rng.IntN(len(r.choices))]
	}
	return r.Between(rng, r.Min, r.Max)
}

// Toward draws on the side of v where dir points (+1 above, -1 below, 0
// anywhere): ACT's extrapolation (Method 1 lines 20–26). A categorical
// range has no sides and chooses uniformly.
func (r Range) Toward(rng *rand.Rand, v float64, dir int) float64 {
	switch {
	case r.Categorical() || dir == 0:
		return r.Uniform(rng)
	case dir > 0:
		return r.Between(rng, v, r.Max)
	default:
		return r.Between(rng, r.Min, v)
	}
}

// Normalize maps v into [0, 1] for distances and regression; a
// categorical value maps to its rank among the choices.
func (r Range) Normalize(v float64) float64 {
	if r.Categorical() {
		if len(r.choices) < 2 {
			return 0
		}
		return float64(max(slices.Index(r.choices, v), 0)) / float64(len(r.choices)-1)
	}
	if r.Max > r.Min {
		return (v - r.Min) / (r.Max - r.Min)
	}
	return 0
}

// Points is the index of the range's last grid point: floor((Max-Min)/
// Step) with Snap's tolerance, capped at 2^62; a categorical range has
// one point per choice.
func (r Range) Points() uint64 {
	if r.Categorical() {
		return uint64(len(r.choices) - 1)
	}
	q := math.Floor((r.Max-r.Min)/r.Step + 1e-9)
	switch {
	case !(q > 0): // NaN, negative, zero
		return 0
	case q >= 1<<62:
		return 1 << 62
	}
	return uint64(q)
}

// Point is grid point g of r (g ≤ Points()).
func (r Range) Point(g uint64) float64 {
	if r.Categorical() {
		return r.choices[min(g, uint64(len(r.choices)-1))]
	}
	return math.Min(r.Min+float64(g)*r.Step, r.Max)
}

// Index is the grid point nearest to v, Point's inverse on the grid.
func (r Range) Index(v float64) uint64 {
	if r.Categorical() {
		return uint64(max(slices.Index(r.choices, v), 0))
	}
	if !(r.Step > 0) {
		return 0
	}
	return r.clampIndex(math.Round((v - r.Min) / r.Step))
}

// FloorIndex is the last grid point at or below v (0 below the range).
func (r Range) FloorIndex(v float64) uint64 {
	if r.Categorical() {
		return r.Index(v)
	}
	return r.clampIndex(math.Floor((v - r.Min) / r.Step))
}

func (r Range) clampIndex(g float64) uint64 {
	switch n := r.Points(); {
	case !(g > 0): // NaN, below the range
		return 0
	case g >= float64(n):
		return n
	}
	return uint64(g)
}

package coverage

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// Var is one state variable of S (ACT §2.1, §4.1).
//
// A numerical variable has a range [Min, Max] and a granularity Step. Its
// granules are the half-open intervals [Min+g·Step, Min+(g+1)·Step) for
// g = 0 … Granules()-1, where Granules() = floor((Max-Min)/Step)+1: the last
// granule is the one that contains Max, and a value is in range when its
// granule is, i.e. when Min ≤ x < Min+Granules()·Step. So cwnd in [1,1024] at
// step 1 has the 1024 granules 1, 2, …, 1024 that §2.1 counts, and srtt in
// [0,2044] at step 4 has the 512 granules of 4 ms covering [0,2048) ms.
//
// A non-numerical (categorical) variable has Values; Min, Max and Step are then
// ignored. Its numerical value in a state is the index into Values.
type Var struct {
	Name           string
	Min, Max, Step float64
	Values         []string
}

// granuleEps absorbs floating-point error in (v-Min)/Step, so that 0.3 at
// step 0.1 is granule 3, not 2.
const granuleEps = 1e-9

// maxGranules bounds the number of granules of one variable so that a granule
// index fits in 32 bits.
const maxGranules = 1 << 32

// Categorical reports whether v is non-numerical.
func (v Var) Categorical() bool { return len(v.Values) > 0 }

// Granules is the number of granules of v: floor((Max-Min)/Step)+1 for a
// numerical variable, len(Values) for a categorical one. It is 0 for an
// invalid variable.
func (v Var) Granules() int64 {
	if v.Categorical() {
		return int64(len(v.Values))
	}
	if !(v.Step > 0) || !(v.Max >= v.Min) || math.IsInf(v.Max-v.Min, 0) {
		return 0
	}
	q := math.Floor((v.Max-v.Min)/v.Step + granuleEps)
	if q >= maxGranules {
		return maxGranules + 1
	}
	return int64(q) + 1
}

// Granule returns the granule index of value x and whether it lies inside the
// range of v. For a categorical variable, x must be an integral index into
// Values. Outside the range the index is still returned (saturated to ±2^62),
// so that out-of-range states can be told apart; NaN gives ok=false and g=0.
func (v Var) Granule(x float64) (g int64, ok bool) {
	if math.IsNaN(x) {
		return 0, false
	}
	n := v.Granules()
	if v.Categorical() {
		f := math.Floor(x)
		g = clampInt(f)
		return g, f == x && g >= 0 && g < n
	}
	g = clampInt(math.Floor((x-v.Min)/v.Step + granuleEps))
	return g, g >= 0 && g < n
}

// Value is the representative value of granule g: the lower edge Min+g·Step of
// a numerical granule, or g itself (the index into Values) for a categorical
// variable.
func (v Var) Value(g int64) float64 {
	if v.Categorical() {
		return float64(g)
	}
	return v.Min + float64(g)*v.Step
}

// Index returns the position of value in Values, or -1.
func (v Var) Index(value string) int { return slices.Index(v.Values, value) }

// bits is the number of bits of a granule index of v.
func (v Var) bits() int { return bits.Len64(uint64(v.Granules() - 1)) }

func clampInt(f float64) int64 {
	const lim = 1 << 62
	switch {
	case f > lim:
		return lim + 1
	case f < -lim:
		return -lim - 1
	}
	return int64(f)
}

func (v Var) validate() error {
	if v.Name == "" {
		return errors.New("coverage: variable with empty name")
	}
	if v.Categorical() {
		seen := make(map[string]bool, len(v.Values))
		for _, s := range v.Values {
			if seen[s] {
				return fmt.Errorf("coverage: variable %q: duplicate value %q", v.Name, s)
			}
			seen[s] = true
		}
		return nil
	}
	for _, f := range []float64{v.Min, v.Max, v.Step} {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("coverage: variable %q: non-finite bound or step", v.Name)
		}
	}
	if v.Step <= 0 {
		return fmt.Errorf("coverage: variable %q: step %g must be positive", v.Name, v.Step)
	}
	if v.Min > v.Max {
		return fmt.Errorf("coverage: variable %q: inverted range [%g, %g]", v.Name, v.Min, v.Max)
	}
	if v.Granules() > maxGranules {
		return fmt.Errorf("coverage: variable %q: more than 2^32 granules", v.Name)
	}
	return nil
}

// Space is the state space S: an ordered list of state variables. A state is a
// []float64 aligned with Vars.
type Space struct {
	Vars []Var
}

// CAStates are the values of the default ca_state variable, in Linux's order
// (TCP_CA_Open … TCP_CA_Loss; ACT §4.1 numbers them 0 … 4).
var CAStates = []string{"open", "disorder", "cwr", "recovery", "loss"}

// DefaultSpace returns the S of the paper's default test inputs (ACT §4.1):
// cwnd and ssthresh in [1,1024] packets at granularity 1, srtt in [0,2048) ms
// and rttvar in [0,1024) ms at granularity 4 ms, and the five ca_state values.
//
// srtt and rttvar are given as [0,2044] and [0,1020] so that they have the 512
// and 256 granules of 4 ms that cover the paper's ranges: with closed ranges
// [0,2048] and [0,1024] the values 2048 and 1024 would add a 513th and a 257th
// granule.
//
// With these definitions there are 64·64·32·16·5 = 10,485,760 regions at k=16
// and 2,560 at k=128. §4.2 quotes 8,388,608 and 2,048: exactly 4/5 of those,
// which is what the same formula gives with four ca_state values. (The paper
// also says that k=1024 makes S a single region, which holds for the numerical
// variables only.) The tests check both.
func DefaultSpace() Space {
	return Space{Vars: []Var{
		{Name: "cwnd", Min: 1, Max: 1024, Step: 1},
		{Name: "ssthresh", Min: 1, Max: 1024, Step: 1},
		{Name: "srtt", Min: 0, Max: 2044, Step: 4},
		{Name: "rttvar", Min: 0, Max: 1020, Step: 4},
		{Name: "ca_state", Values: slices.Clone(CAStates)},
	}}
}

// With returns a copy of sp with vars added by name: a variable whose name is
// already in sp replaces it in place (to change a range), any other is
// appended (prior_cwnd, CCAI variables such as CUBIC's target). The result is
// not validated; see [Space.Validate].
func (sp Space) With(vars ...Var) Space {
	out := Space{Vars: make([]Var, len(sp.Vars), len(sp.Vars)+len(vars))}
	copy(out.Vars, sp.Vars)
	for _, v := range vars {
		v.Values = slices.Clone(v.Values)
		if i := out.Index(v.Name); i >= 0 {
			out.Vars[i] = v
		} else {
			out.Vars = append(out.Vars, v)
		}
	}
	return out
}

// Validate checks every variable (a name, a positive step, a non-inverted
// finite range, at most 2^32 granules, distinct categorical values) and that
// names are unique. Errors name the offending variable.
func (sp Space) Validate() error {
	if len(sp.Vars) == 0 {
		return errors.New("coverage: empty state space")
	}
	seen := make(map[string]bool, len(sp.Vars))
	for _, v := range sp.Vars {
		if err := v.validate(); err != nil {
			return err
		}
		if seen[v.Name] {
			return fmt.Errorf("coverage: duplicate variable %q", v.Name)
		}
		seen[v.Name] = true
	}
	return nil
}

// Index returns the position of the variable called name, or -1.
func (sp Space) Index(name string) int {
	return slices.IndexFunc(sp.Vars, func(v Var) bool { return v.Name == name })
}

// Dim is the number of state variables, dim(S).
func (sp Space) Dim() int { return len(sp.Vars) }

// MaxLevel is the largest level L: k = 2^L is the smallest power of two that
// is at least the widest numerical range in granules, so at k = MaxK() every
// numerical variable is a single interval.
func (sp Space) MaxLevel() int {
	l := 0
	for _, v := range sp.Vars {
		if !v.Categorical() {
			l = max(l, v.bits())
		}
	}
	return l
}

// MaxK is 2^MaxLevel(), the largest region size.
func (sp Space) MaxK() int { return 1 << sp.MaxLevel() }

// Ks returns the region sizes 1, 2, 4, …, MaxK().
func (sp Space) Ks() []int {
	ks := make([]int, sp.MaxLevel()+1)
	for l := range ks {
		ks[l] = 1 << l
	}
	return ks
}

// Regions is the total number of regions of S at region size k ≥ 1 (any k, not
// only powers of two): the product of ceil(n_i/k) over numerical variables
// times the product of |Values| over categorical ones. It saturates at
// math.MaxUint64 and is 0 for k < 1.
func (sp Space) Regions(k int) uint64 {
	if k < 1 {
		return 0
	}
	total := uint64(1)
	for _, v := range sp.Vars {
		n := uint64(v.Granules())
		if !v.Categorical() {
			n = (n + uint64(k) - 1) / uint64(k)
		}
		hi, lo := bits.Mul64(total, n)
		if hi != 0 {
			return math.MaxUint64
		}
		total = lo
	}
	return total
}

// InRange reports whether every variable of state lies in its range (and the
// state has one value per variable).
func (sp Space) InRange(state []float64) bool {
	if len(state) != len(sp.Vars) {
		return false
	}
	for i, v := range sp.Vars {
		if _, ok := v.Granule(state[i]); !ok {
			return false
		}
	}
	return true
}

// Equal reports whether sp and o define the same variables.
func (sp Space) Equal(o Space) bool {
	return slices.EqualFunc(sp.Vars, o.Vars, func(a, b Var) bool {
		if a.Categorical() || b.Categorical() {
			return a.Name == b.Name && slices.Equal(a.Values, b.Values)
		}
		return a.Name == b.Name && a.Min == b.Min && a.Max == b.Max && a.Step == b.Step
	})
}

// Level returns l with k = 2^l, or ok=false when k is not a power of two in
// [1, MaxK()].
func (sp Space) Level(k int) (l int, ok bool) {
	l, ok = levelOf(k)
	return l, ok && l <= sp.MaxLevel()
}

// levelOf is the level of a power of two k, without an upper bound.
func levelOf(k int) (int, bool) {
	if k < 1 || k&(k-1) != 0 {
		return 0, false
	}
	return bits.TrailingZeros(uint(k)), true
}

func nan() float64 { return math.NaN() }

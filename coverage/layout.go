package coverage

import (
	"fmt"
	"math"
)

// layout is the compiled form of a Space: where each variable's granule index
// sits in a packed key, and the masks that turn a state key into the key of
// its region at every level (ACT §2.1).
//
// Fields never straddle a 64-bit word. The key of region R(s, 2^l) is the
// state key with the low min(l, bits_i) bits of every numerical field i
// cleared; categorical fields are kept whole (intervals of size 1).
type layout struct {
	sp      Space
	d       int     // number of variables
	w       int     // words per key
	kb      int     // bytes of a key that can be non-zero
	L       int     // max level
	n       []int64 // granules per variable
	nf      []float64
	min     []float64
	step    []float64
	nbits   []int    // bits per variable
	word    []int    // word of each field
	off     []uint   // bit offset of each field in its word
	cat     []bool   // categorical?
	numeric []int    // indices of numerical variables
	lmask   []uint64 // lmask[l*w+i]: level-l mask of word i
	fmask   []uint64 // fmask[j]: mask of field j inside its word
	used    []uint64 // used[i]: the bits of word i that some field holds
}

func newLayout(sp Space) (*layout, error) {
	if err := sp.Validate(); err != nil {
		return nil, err
	}
	d := len(sp.Vars)
	ly := &layout{
		sp: sp.With(), d: d,
		n: make([]int64, d), nf: make([]float64, d), min: make([]float64, d), step: make([]float64, d),
		nbits: make([]int, d), word: make([]int, d),
		off: make([]uint, d), cat: make([]bool, d), fmask: make([]uint64, d),
	}
	word, used := 0, uint(0)
	for i, v := range sp.Vars {
		ly.n[i] = v.Granules()
		ly.nf[i], ly.min[i], ly.step[i] = float64(ly.n[i]), v.Min, v.Step
		ly.nbits[i] = v.bits()
		ly.cat[i] = v.Categorical()
		if !ly.cat[i] {
			ly.numeric = append(ly.numeric, i)
		}
		b := uint(ly.nbits[i])
		if used+b > 64 {
			word, used = word+1, 0
		}
		ly.word[i], ly.off[i] = word, used
		if b > 0 {
			ly.fmask[i] = (1<<b - 1) << used
		}
		used += b
	}
	ly.w = word + 1
	ly.used = make([]uint64, ly.w)
	for i := range d {
		ly.used[ly.word[i]] |= ly.fmask[i]
	}
	ly.kb = 8*word + max(1, int(used+7)/8)
	ly.L = sp.MaxLevel()
	if ly.L > 62 {
		return nil, fmt.Errorf("coverage: too many levels (%d)", ly.L)
	}
	ly.lmask = make([]uint64, (ly.L+1)*ly.w)
	for l := 0; l <= ly.L; l++ {
		m := ly.lmask[l*ly.w : (l+1)*ly.w]
		for i := range m {
			m[i] = math.MaxUint64
		}
		for _, i := range ly.numeric {
			c := min(l, ly.nbits[i])
			if c > 0 {
				m[ly.word[i]] &^= (1<<uint(c) - 1) << ly.off[i]
			}
		}
	}
	return ly, nil
}

// encode packs the granules of an in-range state into key (len w) and
// reports whether the state is in range. key is left partly written when it is
// not.
func (ly *layout) encode(state []float64, key []uint64) bool {
	if len(state) != ly.d {
		panic(fmt.Sprintf("coverage: state has %d values, space has %d variables", len(state), ly.d))
	}
	clear(key)
	for i, x := range state {
		// The same arithmetic as Var.Granule, inlined: q < n and q ≥ 0 are
		// false for NaN.
		var g uint64
		if ly.cat[i] {
			f := math.Floor(x)
			if !(f == x && f >= 0 && f < ly.nf[i]) {
				return false
			}
			g = uint64(f)
		} else {
			q := (x-ly.min[i])/ly.step[i] + granuleEps
			if !(q >= 0 && q < ly.nf[i]) {
				return false
			}
			g = uint64(q)
		}
		key[ly.word[i]] |= g << ly.off[i]
	}
	return true
}

// validKey reports whether key is the key of a state in S: every field
// within its variable's granules and no bit outside the fields.
func (ly *layout) validKey(key []uint64) bool {
	for i := range ly.w {
		if key[i]&^ly.used[i] != 0 {
			return false
		}
	}
	for i := range ly.d {
		if ly.field(key, i) >= uint64(ly.n[i]) {
			return false
		}
	}
	return true
}

// Sentinels of an out-of-range key for values without a granule.
const (
	oorNaN = math.MinInt64
)

// encodeOOR writes the exact out-of-range key of state: one word per
// variable, holding the (possibly negative or huge) granule index, or oorNaN.
func (ly *layout) encodeOOR(state []float64, key []uint64) {
	for i := range ly.d {
		g, _ := ly.sp.Vars[i].Granule(state[i])
		if math.IsNaN(state[i]) {
			g = oorNaN
		}
		key[i] = uint64(g)
	}
}

// field extracts the stored value of field j from key. At level l it is the
// region's position shifted left by l (numerical) or the index (categorical).
func (ly *layout) field(key []uint64, j int) uint64 {
	return (key[ly.word[j]] & ly.fmask[j]) >> ly.off[j]
}

// setField replaces field j of key with val (already shifted for the level).
func (ly *layout) setField(key []uint64, j int, val uint64) {
	wd := ly.word[j]
	key[wd] = key[wd]&^ly.fmask[j] | val<<ly.off[j]
}

// granule returns the granule index of variable j in a state key.
func (ly *layout) granule(key []uint64, j int) int64 { return int64(ly.field(key, j)) }

// regionKey writes the level-l region key of state key src into dst.
func (ly *layout) regionKey(src, dst []uint64, l int) {
	m := ly.lmask[l*ly.w : (l+1)*ly.w]
	for i := range dst {
		dst[i] = src[i] & m[i]
	}
}

// shift is the left shift of a level-l position of variable j inside its
// field: l for numerical variables, 0 for categorical ones.
func (ly *layout) shift(j, l int) uint {
	if ly.cat[j] {
		return 0
	}
	return uint(min(l, ly.nbits[j]))
}

// positions is the number of intervals of variable j at level l:
// ceil(n_j / 2^l) for numerical variables, |Values| for categorical ones.
func (ly *layout) positions(j, l int) uint64 {
	n := uint64(ly.n[j])
	if ly.cat[j] {
		return n
	}
	return (n-1)>>uint(l) + 1
}

// decode writes the representative values of a state key into dst.
func (ly *layout) decode(key []uint64, dst []float64) {
	for i := range ly.d {
		dst[i] = ly.sp.Vars[i].Value(ly.granule(key, i))
	}
}

// decodeOOR writes the values of an out-of-range key into dst.
func (ly *layout) decodeOOR(key []uint64, dst []float64) {
	const lim = 1 << 62
	for i := range ly.d {
		g := int64(key[i])
		switch {
		case g == oorNaN:
			dst[i] = math.NaN()
		case g > lim:
			dst[i] = math.Inf(1)
		case g < -lim:
			dst[i] = math.Inf(-1)
		default:
			dst[i] = ly.sp.Vars[i].Value(g)
		}
	}
}

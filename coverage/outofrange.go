package coverage

import (
	"fmt"
	"math"
)

// oorCodec gives exact, compact keys to states outside S. Each variable's
// value becomes a 32-bit id: its granule index when in range, otherwise n_i
// plus the index of the exact out-of-range granule (or NaN) in a per-variable
// dictionary. Two ids share a word, so an out-of-range state of the default S
// costs 3 words instead of 5. Linux's initial ssthresh (0x7fffffff) or a cwnd
// above 1024 are then one dictionary entry each, shared by all states.
type oorCodec struct {
	ly   *layout
	w    int
	dict []map[int64]uint32
	vals [][]int64
}

func newOORCodec(ly *layout) *oorCodec {
	c := &oorCodec{ly: ly, w: (ly.d + 1) / 2, dict: make([]map[int64]uint32, ly.d), vals: make([][]int64, ly.d)}
	for i := range c.dict {
		c.dict[i] = map[int64]uint32{}
	}
	return c
}

// key converts raw granules (one int64 per variable, as written by
// layout.encodeOOR) into a key of c.w words. Without intern, a value never
// seen before makes it fail (no state can have it).
func (c *oorCodec) key(raw, dst []uint64, intern bool) bool {
	clear(dst)
	for i := range c.ly.d {
		g, n := int64(raw[i]), c.ly.n[i]
		id := uint64(g)
		if g < 0 || g >= n || g == oorNaN {
			x, ok := c.dict[i][g]
			if !ok {
				if !intern {
					return false
				}
				if uint64(n)+uint64(len(c.vals[i])) >= math.MaxUint32 {
					panic(fmt.Sprintf("coverage: too many distinct out-of-range values of %q", c.ly.sp.Vars[i].Name))
				}
				x = uint32(len(c.vals[i]))
				c.dict[i][g] = x
				c.vals[i] = append(c.vals[i], g)
			}
			id = uint64(n) + uint64(x)
		}
		dst[i/2] |= id << (32 * uint(i%2))
	}
	return true
}

// raw converts a key back into raw granules.
func (c *oorCodec) raw(key, dst []uint64) {
	for i := range c.ly.d {
		id := key[i/2] >> (32 * uint(i%2)) & math.MaxUint32
		if n := uint64(c.ly.n[i]); id >= n {
			dst[i] = uint64(c.vals[i][id-n])
		} else {
			dst[i] = id
		}
	}
}

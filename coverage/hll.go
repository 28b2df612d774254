package coverage

import (
	"math"
	"math/bits"
)

// sketch is a HyperLogLog distinct-count sketch (Flajolet et al., 2007) of
// 2^sketchP one-byte registers over 64-bit hashes, with linear counting for
// small counts (Heule et al., "HyperLogLog in Practice", 2013, §4: about
// 1.04/√m relative standard error, 0.8% at m = 16384).
//
// It is written here rather than taken from a library because the store
// needs unions to be exact: a union of sketches (of shards, of a checkpoint
// and what came after) must equal the sketch of all the keys, or coverage
// counts would depend on the shard a key went to or on a resume. With whole
// byte registers the union is the register-wise maximum, which is exact;
// the library we tried packs registers in 4 bits relative to a moving base,
// which loses that property.
type sketch struct{ reg []uint8 }

const (
	sketchP     = 14
	sketchM     = 1 << sketchP
	sketchBytes = sketchM
)

func newSketch() *sketch { return &sketch{reg: make([]uint8, sketchM)} }

// insert adds a key by its (uniformly distributed) 64-bit hash.
func (s *sketch) insert(h uint64) {
	i := h >> (64 - sketchP)
	rho := uint8(bits.LeadingZeros64(h<<sketchP|1<<(sketchP-1))) + 1
	if rho > s.reg[i] {
		s.reg[i] = rho
	}
}

// merge makes s the sketch of the union.
func (s *sketch) merge(o *sketch) {
	for i, r := range o.reg {
		if r > s.reg[i] {
			s.reg[i] = r
		}
	}
}

// estimate is the number of distinct keys inserted, estimated.
func (s *sketch) estimate() uint64 {
	const m = float64(sketchM)
	sum, zeros := 0.0, 0
	for _, r := range s.reg {
		sum += math.Ldexp(1, -int(r))
		if r == 0 {
			zeros++
		}
	}
	e := 0.7213 / (1 + 1.079/m) * m * m / sum
	if e <= 5*m && zeros > 0 {
		// Linear counting is the better estimator up to about 5m (Heule
		// et al. §5.3 put the threshold near there for p = 14).
		e = m * math.Log(m/float64(zeros))
	}
	return uint64(math.Round(e))
}

package coverage

import (
	"math"
	"math/rand/v2"
	"slices"
)

// Visit is one visit of a state by a simulation (ACT §2.4–2.5): Config is an
// opaque id of the simulation configuration G that the caller owns (seed e and
// the schedule of environments), and At is the simulated time of the visit in
// nanoseconds — the t_n at which CONCATENATION switches to the new
// environment.
type Visit struct {
	Config uint64
	At     int64
}

// DefaultPoolSize is the default bound on the pool of visits kept per state.
const DefaultPoolSize = 4

// visit is a Visit as stored: the interned config index in the top cfgBits
// bits and the time in the low atBits bits (8 bytes). A visit that does not
// fit (config index ≥ 2^23-1, time outside [0, 2^41) ns ≈ 36 minutes) is kept
// whole in the codec's escape list, and the visit holds escCfg and its index.
type visit uint64

const (
	atBits  = 41
	cfgBits = 64 - atBits
	escCfg  = 1<<cfgBits - 1
	atMask  = 1<<atBits - 1
)

type escVisit struct {
	cfg uint32
	at  int64
}

// visitCodec packs visits; it owns the escape list of one Store.
type visitCodec struct{ esc []escVisit }

func (c *visitCodec) enc(cfg uint32, at int64) visit {
	if uint64(cfg) < escCfg && at >= 0 && at <= atMask {
		return visit(uint64(cfg)<<atBits | uint64(at))
	}
	c.esc = append(c.esc, escVisit{cfg, at})
	return visit(escCfg<<atBits | uint64(len(c.esc)-1))
}

func (c *visitCodec) dec(v visit) (cfg uint32, at int64) {
	if hi := uint64(v) >> atBits; hi != escCfg {
		return uint32(hi), int64(uint64(v) & atMask)
	}
	e := c.esc[uint64(v)&atMask]
	return e.cfg, e.at
}

// states is a set of visited states with their visit counts and pools. The
// pool of a state is a reservoir sample (Vitter's algorithm R) of at most c
// of its visits. A pool of one visit is stored inline in one[ref]; a larger
// pool lives in a block of a size class (2, 4, 8, … up to c) and one[ref]
// holds the block number.
type states struct {
	t       table
	count   []uint32
	one     []visit
	c       int
	classes []poolClass
	classOf []uint8 // classOf[len]: size class of a pool of len ≥ 2
}

type poolClass struct {
	size int
	slab []visit
	free []uint32
}

func newStates(w, poolSize int) states {
	s := states{t: newTable(w), c: poolSize, classOf: make([]uint8, poolSize+1)}
	for size := 2; size < poolSize; size *= 2 {
		s.classes = append(s.classes, poolClass{size: size})
	}
	if poolSize >= 2 {
		s.classes = append(s.classes, poolClass{size: poolSize})
	}
	for l := 2; l <= poolSize; l++ {
		ci := 0
		for s.classes[ci].size < l {
			ci++
		}
		s.classOf[l] = uint8(ci)
	}
	return s
}

func (s *states) len() int { return s.t.n }

// poolLen is the number of visits in the pool of ref.
func (s *states) poolLen(ref uint32) int { return int(min(uint64(s.count[ref]), uint64(s.c))) }

// pool returns a view of the pool of ref.
func (s *states) pool(ref uint32) []visit { return s.view(ref, s.poolLen(ref)) }

// view returns the pool of ref as if it held n visits.
func (s *states) view(ref uint32, n int) []visit {
	if n <= 1 {
		return s.one[ref : ref+1 : ref+1][:n]
	}
	pc := &s.classes[s.classOf[n]]
	b := int(s.one[ref]) * pc.size
	return pc.slab[b : b+n : b+pc.size]
}

func (s *states) alloc(ci uint8) uint32 {
	pc := &s.classes[ci]
	if k := len(pc.free); k > 0 {
		b := pc.free[k-1]
		pc.free = pc.free[:k-1]
		return b
	}
	b := uint32(len(pc.slab) / pc.size)
	pc.slab = grow(pc.slab, pc.size)
	pc.slab = append(pc.slab, make([]visit, pc.size)...)
	return b
}

// resize moves the pool of ref from length from to length to (both ≤ c),
// keeping the first min(from,to) visits, and returns the new view.
func (s *states) resize(ref uint32, from, to int) []visit {
	var keep [1]visit
	old := s.view(ref, from)
	if from <= 1 {
		copy(keep[:], old[:from])
		old = keep[:from]
	}
	switch {
	case to <= 1:
		if from >= 2 {
			v := old[0]
			s.freeBlock(ref, from)
			s.one[ref] = v
		}
		return s.one[ref : ref+1][:to]
	case from >= 2 && s.classOf[from] == s.classOf[to]:
		pc := &s.classes[s.classOf[to]]
		b := int(s.one[ref]) * pc.size
		return pc.slab[b : b+to]
	}
	ci := s.classOf[to]
	blk := s.alloc(ci)
	pc := &s.classes[ci]
	dst := pc.slab[int(blk)*pc.size : int(blk)*pc.size+to]
	copy(dst, old[:min(from, to)])
	if from >= 2 {
		s.freeBlock(ref, from)
	}
	s.one[ref] = visit(blk)
	return dst
}

func (s *states) freeBlock(ref uint32, n int) {
	pc := &s.classes[s.classOf[n]]
	pc.free = append(pc.free, uint32(s.one[ref]))
}

// insert adds key with one visit, or records a further visit of an existing
// key with reservoir sampling drawn from rng.
func (s *states) insert(key []uint64, v visit, rng *rand.Rand) (uint32, bool) {
	ref, isNew := s.t.insert(key)
	if isNew {
		s.push(v)
		return ref, true
	}
	s.record(ref, v, rng)
	return ref, false
}

// push appends the count and inline pool of a state just added to the table.
func (s *states) push(v visit) {
	s.count = append(grow(s.count, 1), 1)
	s.one = append(grow(s.one, 1), v)
}

// grow makes room for n more elements, growing large slices by 1/8 instead
// of append's 1/4, to keep the slack of a store of millions of states small.
func grow[T any](x []T, n int) []T {
	if len(x)+n <= cap(x) {
		return x
	}
	return slices.Grow(x, max(n, min(len(x), 1<<16), len(x)/8))
}

// record adds a visit of ref to its reservoir.
func (s *states) record(ref uint32, v visit, rng *rand.Rand) {
	c := s.count[ref]
	if c == math.MaxUint32 { // saturated: keep sampling as if at 2^32-1
		c--
	}
	nc := c + 1
	s.count[ref] = nc
	if int(nc) <= s.c {
		p := s.resize(ref, int(c), int(nc))
		p[nc-1] = v
		return
	}
	if j := rng.Uint64N(uint64(nc)); j < uint64(s.c) {
		s.pool(ref)[j] = v
	}
}

// setPool replaces the pool of ref with vs (len ≤ c) and its count with n.
func (s *states) setPool(ref uint32, vs []visit, n uint64) {
	p := s.resize(ref, s.poolLen(ref), len(vs))
	copy(p, vs)
	s.count[ref] = uint32(max(min(n, math.MaxUint32), uint64(len(vs))))
}

// mergeVisits combines the reservoir a (a uniform sample of na visits) with
// the reservoir b (of nb visits) into a uniform sample of min(c, na+nb) of the
// na+nb visits, appended to dst. The number taken from a is hypergeometric.
func mergeVisits(dst, a []visit, na uint64, b []visit, nb uint64, c int, rng *rand.Rand) []visit {
	if na+nb <= uint64(c) {
		return append(append(dst, a...), b...)
	}
	ra, rb, x := na, nb, 0
	for range c {
		if rng.Uint64N(ra+rb) < ra {
			x++
			ra--
		} else {
			rb--
		}
	}
	dst = appendSample(dst, a, x, rng)
	return appendSample(dst, b, c-x, rng)
}

// appendSample appends a uniform sample of m elements of src (m ≤ len(src))
// by a partial Fisher–Yates shuffle over indices.
func appendSample(dst, src []visit, m int, rng *rand.Rand) []visit {
	if m >= len(src) {
		return append(dst, src...)
	}
	var idxBuf [64]int
	idx := idxBuf[:0]
	if len(src) > len(idxBuf) {
		idx = make([]int, 0, len(src))
	}
	for i := range src {
		idx = append(idx, i)
	}
	for i := range m {
		j := i + rng.IntN(len(idx)-i)
		idx[i], idx[j] = idx[j], idx[i]
		dst = append(dst, src[idx[i]])
	}
	return dst
}

// bytes is the memory held by the set.
func (s *states) bytes() int {
	b := s.t.bytes() + 4*cap(s.count) + 8*cap(s.one)
	for _, pc := range s.classes {
		b += 8*cap(pc.slab) + 4*cap(pc.free)
	}
	return b
}

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
const DefaultPoolSize = 2

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

// visitCodec packs visits; it owns the escape list of one shard. An escaped
// visit's entry is released when the visit leaves its pool (the reservoir
// replaces it, or a merge or coarsening drops it) and reused by the next
// escape, so the list is bounded by the pool slots, not by the visits ever
// made.
type visitCodec struct {
	esc  []escVisit
	free []uint64 // released indices of esc
}

func (c *visitCodec) enc(cfg uint32, at int64) visit {
	if uint64(cfg) < escCfg && at >= 0 && at <= atMask {
		return visit(uint64(cfg)<<atBits | uint64(at))
	}
	e := escVisit{cfg, at}
	if n := len(c.free); n > 0 {
		i := c.free[n-1]
		c.free = c.free[:n-1]
		c.esc[i] = e
		return visit(escCfg<<atBits | i)
	}
	c.esc = append(c.esc, e)
	return visit(escCfg<<atBits | uint64(len(c.esc)-1))
}

func (c *visitCodec) dec(v visit) (cfg uint32, at int64) {
	if hi := uint64(v) >> atBits; hi != escCfg {
		return uint32(hi), int64(uint64(v) & atMask)
	}
	e := c.esc[uint64(v)&atMask]
	return e.cfg, e.at
}

// escaped reports whether v lives in the escape list.
func escaped(v visit) bool { return uint64(v)>>atBits == escCfg }

// release frees the escape entry of v, if it has one; v must not be used
// afterwards.
func (c *visitCodec) release(v visit) {
	if escaped(v) {
		c.free = append(c.free, uint64(v)&atMask)
	}
}

// live is the number of escape entries in use.
func (c *visitCodec) live() int { return len(c.esc) - len(c.free) }

func (c *visitCodec) bytes() int { return 16 * c.live() }

// states is a set of visited states with their visit counts and pools. The
// pool of a state is a reservoir sample (Vitter's algorithm R) of at most c of
// its visits, and always holds min(count, c) visits. The first inl = min(c, 2)
// slots of every pool are inline (inl visits per state in one); when c > 2,
// the other c-2 slots live in a block of the slab, allocated when the state's
// third visit arrives, whose number is in blk.
type states struct {
	t     table
	count []uint32
	one   []visit  // inl slots per state
	blk   []uint32 // block of slots inl … c-1 (c > 2 only)
	slab  []visit
	c     int
	inl   int
}

func newStates(w, kb, poolSize int) states {
	return states{t: newTable(w, kb), c: poolSize, inl: min(poolSize, 2)}
}

func (s *states) len() int { return s.t.n }

// poolLen is the number of visits in the pool of ref.
func (s *states) poolLen(ref uint32) int { return int(min(uint64(s.count[ref]), uint64(s.c))) }

// slot returns the i-th pool slot of ref (i < c; the block must exist when
// i ≥ inl).
func (s *states) slot(ref uint32, i int) *visit {
	if i < s.inl {
		return &s.one[int(ref)*s.inl+i]
	}
	return &s.slab[int(s.blk[ref])*(s.c-s.inl)+i-s.inl]
}

// get returns the i-th visit of the pool of ref.
func (s *states) get(ref uint32, i int) visit { return *s.slot(ref, i) }

// appendPool appends the pool of ref to dst.
func (s *states) appendPool(dst []visit, ref uint32) []visit {
	for i := range s.poolLen(ref) {
		dst = append(dst, s.get(ref, i))
	}
	return dst
}

// ensure makes room for a pool of n visits, allocating the block when the
// pool first grows beyond the inline slots.
func (s *states) ensure(ref uint32, from, n int) {
	if from <= s.inl && n > s.inl {
		m := s.c - s.inl
		s.blk[ref] = uint32(len(s.slab) / m)
		s.slab = grow(s.slab, m)
		s.slab = s.slab[:len(s.slab)+m] // never used before: zero
	}
}

// insert adds key with one visit, or records a further visit of an existing
// key with reservoir sampling drawn from rng.
func (s *states) insert(key []uint64, v visit, rng *rand.Rand, vc *visitCodec) (uint32, bool) {
	return s.insertH(key, hashKey(key), v, rng, vc)
}

// insertH is insert for a key whose hash h is known.
func (s *states) insertH(key []uint64, h uint64, v visit, rng *rand.Rand, vc *visitCodec) (uint32, bool) {
	ref, isNew := s.t.insertH(key, h)
	s.addVisit(ref, isNew, v, rng, vc)
	return ref, isNew
}

// addVisit adds visit v of state ref, just inserted into the table
// (isNew: its count and pool are pushed) or already there (recorded).
func (s *states) addVisit(ref uint32, isNew bool, v visit, rng *rand.Rand, vc *visitCodec) {
	if isNew {
		s.push(v)
		return
	}
	s.record(ref, v, rng, vc)
}

// push appends the count and pool of a state just added to the table, with
// one visit.
func (s *states) push(v visit) {
	s.count = append(grow(s.count, 1), 1)
	s.one = grow(s.one, s.inl)
	s.one = append(s.one, v)
	for range s.inl - 1 {
		s.one = append(s.one, 0)
	}
	if s.c > s.inl {
		s.blk = append(grow(s.blk, 1), 0)
	}
}

// grow makes room for n more elements, growing large slices by 1/4 (as
// append does): with sharded tables no slice is large enough for the slack
// to matter, and a smaller step made the copies of growth a third of the
// merge's time.
func grow[T any](x []T, n int) []T {
	if len(x)+n <= cap(x) {
		return x
	}
	return slices.Grow(x, max(n, min(len(x), 1<<16), len(x)/4))
}

// record adds a visit of ref to its reservoir.
func (s *states) record(ref uint32, v visit, rng *rand.Rand, vc *visitCodec) {
	c := s.count[ref]
	if c == math.MaxUint32 { // saturated: keep sampling as if at 2^32-1
		c--
	}
	nc := c + 1
	s.count[ref] = nc
	if int(nc) <= s.c {
		s.ensure(ref, int(c), int(nc))
		*s.slot(ref, int(nc)-1) = v
		return
	}
	if j := rng.Uint64N(uint64(nc)); j < uint64(s.c) {
		sl := s.slot(ref, int(j))
		vc.release(*sl)
		*sl = v
		return
	}
	vc.release(v)
}

// setPool replaces the pool of ref with vs (len(vs) = min(n, c)) and its count
// with n.
func (s *states) setPool(ref uint32, vs []visit, n uint64) {
	s.ensure(ref, s.poolLen(ref), len(vs))
	for i, v := range vs {
		*s.slot(ref, i) = v
	}
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

// bytes is the memory the set needs for what it holds (see table.bytes).
func (s *states) bytes() int {
	n := s.len()
	b := s.t.bytes() + 4*len(s.count) + 8*s.inl*n + 8*len(s.slab)
	if s.c > s.inl {
		b += 4 * n
	}
	return b
}

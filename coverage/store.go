package coverage

import (
	"fmt"
	"iter"
	"math/bits"
	"math/rand/v2"
)

// Options configure a Store.
type Options struct {
	// PoolSize bounds the pool of visits kept per state (ACT §2.4: "each state
	// is associated with a pool of simulation configurations"). 0 means
	// DefaultPoolSize.
	PoolSize int
	// Seed seeds the PCG generator of the reservoir draws, so that the pools
	// are a deterministic function of the seed and the sequence of Adds and
	// Merges.
	Seed uint64
}

// StateRef names a visited state of a Store. Refs of states in S are 0, 1, …
// in the order the states were first added; refs of out-of-range states have
// the top bit set. Refs are stable: they survive growth, Merge into the same
// store, and WriteTo/ReadFrom.
type StateRef uint32

const oorBit StateRef = 1 << 31

// OutOfRange reports whether r names a state outside the ranges of S.
func (r StateRef) OutOfRange() bool { return r&oorBit != 0 }

// Store is the set of visited states of S with their pools, and the visited
// regions of S at every region size k = 2^l (ACT §2.1–2.2). See the package
// documentation for the layout. A Store is not safe for concurrent use.
type Store struct {
	ly  *layout
	opt Options
	src *rand.PCG
	rng *rand.Rand

	in     states  // states in S, keyed by packed granules
	oor    states  // states outside S, keyed by raw granule indices
	levels []table // levels[l] for l ≥ 1: visited regions at k = 2^l

	vc         visitCodec
	oc         *oorCodec
	cfgIDs     []uint64          // interned Visit.Config values
	cfgIdx     map[uint64]uint32 // Config → index in cfgIDs
	lastCfg    uint64
	lastIdx    uint32
	lastOK     bool
	visits     uint64 // visits of states in S
	oVisits    uint64 // visits of states outside S
	oorLimit   int    // distinct out-of-range states kept at most (0: all)
	oorDropped uint64 // out-of-range visits of states not kept
	keyBuf     []uint64
	mergeBuf   []visit
	poolBuf    []visit
	oorBuf     []uint64 // raw granules of an out-of-range state
	oorKey     []uint64
	scr        scratch
	unvCache   unvisitedCache
}

// NewStore returns an empty store over space. It fails when the space is
// invalid (see [Space.Validate]) or PoolSize is negative.
func NewStore(space Space, opt Options) (*Store, error) {
	ly, err := newLayout(space)
	if err != nil {
		return nil, err
	}
	if opt.PoolSize < 0 || opt.PoolSize > 1<<16 {
		return nil, fmt.Errorf("coverage: pool size %d out of [0, 65536]", opt.PoolSize)
	}
	if opt.PoolSize == 0 {
		opt.PoolSize = DefaultPoolSize
	}
	s := &Store{ly: ly, opt: opt}
	s.src = rand.NewPCG(opt.Seed, opt.Seed^0x6a09e667f3bcc909)
	s.rng = rand.New(s.src)
	s.in = newStates(ly.w, ly.kb, opt.PoolSize)
	s.oc = newOORCodec(ly)
	s.oor = newStates(s.oc.w, 4*ly.d, opt.PoolSize)
	s.levels = make([]table, ly.L+1)
	for l := 1; l <= ly.L; l++ {
		s.levels[l] = newTable(ly.w, ly.kb)
	}
	s.cfgIdx = make(map[uint64]uint32)
	s.keyBuf = make([]uint64, ly.w)
	s.oorBuf = make([]uint64, ly.d)
	s.oorKey = make([]uint64, s.oc.w)
	return s, nil
}

// Space returns the state space of the store.
func (s *Store) Space() Space { return s.ly.sp.With() }

// Options returns the options of the store, with defaults filled in.
func (s *Store) Options() Options { return s.opt }

// intern maps a caller's config id to a dense index.
func (s *Store) intern(c uint64) uint32 {
	if s.lastOK && s.lastCfg == c {
		return s.lastIdx
	}
	i, ok := s.cfgIdx[c]
	if !ok {
		if len(s.cfgIDs) == 1<<32-1 {
			panic("coverage: more than 2^32-1 distinct configs")
		}
		i = uint32(len(s.cfgIDs))
		s.cfgIDs = append(s.cfgIDs, c)
		s.cfgIdx[c] = i
	}
	s.lastCfg, s.lastIdx, s.lastOK = c, i, true
	return i
}

// Add records a visit of state (aligned with the space's variables; a
// categorical value is the index into Values). It returns the state's ref,
// whether the state is new, and the region sizes k at which the visit found a
// new region (bit l for k = 2^l; bit 0 is the state itself). Because regions
// nest, the new levels are always 0 … m-1 for some m. A state outside the
// ranges of S is recorded with a ref that has OutOfRange() true and never
// adds regions. Add panics if len(state) differs from the number of
// variables.
func (s *Store) Add(state []float64, v Visit) (ref StateRef, newState bool, newRegions Levels) {
	vis := s.vc.enc(s.intern(v.Config), v.At)
	if !s.ly.encode(state, s.keyBuf) {
		s.ly.encodeOOR(state, s.oorBuf)
		r, isNew := s.addOOR(s.oorBuf, vis)
		return r, isNew, 0
	}
	r, isNew, m := s.addKey(s.keyBuf, vis)
	return StateRef(r), isNew, m
}

// addOOR records a visit of the out-of-range state with raw granules raw.
// Past the out-of-range limit, new distinct states are only counted.
func (s *Store) addOOR(raw []uint64, vis visit) (StateRef, bool) {
	s.oc.key(raw, s.oorKey, true)
	s.oVisits++
	if s.oorLimit > 0 && s.oor.len() >= s.oorLimit {
		if r, ok := s.oor.t.lookup(s.oorKey); ok {
			s.oor.record(r, vis, s.rng)
			return StateRef(r) | oorBit, false
		}
		s.oorDropped++
		return NoState, false
	}
	r, isNew := s.oor.insert(s.oorKey, vis, s.rng)
	return StateRef(r) | oorBit, isNew
}

// NoState is the ref Add returns for an out-of-range state that was counted
// but not kept because the out-of-range limit was reached.
const NoState StateRef = ^StateRef(0)

// LimitOutOfRange keeps at most n distinct states outside S (0: no limit).
// States outside S never count as regions; in a campaign over a wide P they
// can outnumber those inside (every slow-start state has an infinite
// ssthresh), so a long campaign keeps a sample of them and counts the rest:
// see OutOfRangeDropped. The limit is a run setting, not saved by WriteTo.
func (s *Store) LimitOutOfRange(n int) { s.oorLimit = n }

// OutOfRangeDropped is how many distinct-looking out-of-range visits were
// counted but not kept because of the limit (an upper bound on the distinct
// states missed).
func (s *Store) OutOfRangeDropped() uint64 { return s.oorDropped }

// addKey records a visit of the in-range state with the given key.
func (s *Store) addKey(key []uint64, vis visit) (uint32, bool, Levels) {
	r, isNew := s.in.insert(key, vis, s.rng)
	s.visits++
	if !isNew {
		return r, false, 0
	}
	return r, true, s.addRegions(key)
}

// addRegions inserts the regions of a new state at levels 1, 2, … until one
// already exists (all coarser ones then exist too, since R(s,k) ⊂ R(s,2k)).
func (s *Store) addRegions(key []uint64) Levels {
	m := Levels(1)
	var buf [4]uint64
	rk := buf[:0]
	if s.ly.w > len(buf) {
		rk = make([]uint64, 0, s.ly.w)
	}
	rk = rk[:s.ly.w]
	for l := 1; l <= s.ly.L; l++ {
		s.ly.regionKey(key, rk, l)
		if _, isNew := s.levels[l].insert(rk); !isNew {
			break
		}
		m |= 1 << uint(l)
	}
	return m
}

// level converts a region size to a level, panicking on sizes that are not
// powers of two; sizes above MaxK behave like MaxK.
func (s *Store) level(k int) int {
	if k < 1 || k&(k-1) != 0 {
		panic(fmt.Sprintf("coverage: region size %d is not a power of two", k))
	}
	return min(bits.TrailingZeros(uint(k)), s.ly.L)
}

// has reports whether the level-l region (or state, at l = 0) with key rk is
// visited.
func (s *Store) has(l int, rk []uint64) bool {
	if l == 0 {
		return s.in.t.has(rk)
	}
	return s.levels[l].has(rk)
}

// Visited reports whether region R(state, k) has been visited. It is false for
// states outside S. k must be a power of two.
func (s *Store) Visited(state []float64, k int) bool {
	l := s.level(k)
	if !s.ly.encode(state, s.keyBuf) {
		return false
	}
	s.ly.regionKey(s.keyBuf, s.keyBuf, l)
	return s.has(l, s.keyBuf)
}

// VisitedRegions is the number of visited regions of S at region size k (a
// power of two); at k = 1 it is the number of visited states in S. O(1).
func (s *Store) VisitedRegions(k int) uint64 {
	l := s.level(k)
	if l == 0 {
		return uint64(s.in.len())
	}
	return uint64(s.levels[l].n)
}

// Coverage is coverage(S,k) = VisitedRegions(k) / Space.Regions(k), a fraction
// in [0,1] (ACT §2.2).
func (s *Store) Coverage(k int) float64 {
	return float64(s.VisitedRegions(k)) / float64(s.ly.sp.Regions(1<<s.level(k)))
}

// Len is the number of visited states in S.
func (s *Store) Len() int { return s.in.len() }

// Visits is the number of visits of states in S recorded so far.
func (s *Store) Visits() uint64 { return s.visits }

// OutOfRange returns the number of distinct visited states outside the ranges
// of S and the number of their visits. They are not in any region count.
func (s *Store) OutOfRange() (states int, visits uint64) { return s.oor.len(), s.oVisits }

// Configs is the number of distinct Visit.Config values seen.
func (s *Store) Configs() int { return len(s.cfgIDs) }

// Lookup returns the ref of a visited state (in S or not).
func (s *Store) Lookup(state []float64) (StateRef, bool) {
	if s.ly.encode(state, s.keyBuf) {
		r, ok := s.in.t.lookup(s.keyBuf)
		return StateRef(r), ok
	}
	s.ly.encodeOOR(state, s.oorBuf)
	if !s.oc.key(s.oorBuf, s.oorKey, false) {
		return 0, false
	}
	r, ok := s.oor.t.lookup(s.oorKey)
	return StateRef(r) | oorBit, ok
}

// set returns the state set and index of ref, panicking on invalid refs.
func (s *Store) set(ref StateRef) (*states, uint32) {
	st, r := &s.in, uint32(ref)
	if ref.OutOfRange() {
		st, r = &s.oor, uint32(ref&^oorBit)
	}
	if int(r) >= st.len() {
		panic(fmt.Sprintf("coverage: invalid state ref %#x", uint32(ref)))
	}
	return st, r
}

// State decodes ref into a new state vector. For a state in S the values are
// the representatives of its granules (the lower edge Min+g·Step, or the
// categorical index). For an out-of-range state they are the same for finite
// values, NaN for NaN, and ±Inf for values beyond ±2^62 granules.
func (s *Store) State(ref StateRef) []float64 {
	return s.AppendState(nil, ref)
}

// AppendState appends the decoded state of ref to dst.
func (s *Store) AppendState(dst []float64, ref StateRef) []float64 {
	st, r := s.set(ref)
	n := len(dst)
	dst = append(dst, make([]float64, s.ly.d)...)
	if ref.OutOfRange() {
		raw := make([]uint64, s.ly.d)
		s.oc.raw(st.t.key(r), raw)
		s.ly.decodeOOR(raw, dst[n:])
	} else {
		s.ly.decode(st.t.key(r), dst[n:])
	}
	return dst
}

// Count is the number of visits of ref.
func (s *Store) Count(ref StateRef) uint64 {
	st, r := s.set(ref)
	return uint64(st.count[r])
}

// Pool returns a copy of the reservoir-sampled pool of visits of ref: a
// uniform sample of at most PoolSize of its visits.
func (s *Store) Pool(ref StateRef) []Visit {
	return s.AppendPool(nil, ref)
}

// AppendPool appends the pool of ref to dst.
func (s *Store) AppendPool(dst []Visit, ref StateRef) []Visit {
	st, r := s.set(ref)
	for i := range st.poolLen(r) {
		dst = append(dst, s.visit(st.get(r, i)))
	}
	return dst
}

// RandomVisit draws one visit of ref uniformly from its pool (ACT Method 1
// line 8: "randomly and uniformly select one from the pool").
func (s *Store) RandomVisit(rng *rand.Rand, ref StateRef) Visit {
	st, r := s.set(ref)
	return s.visit(st.get(r, rng.IntN(st.poolLen(r))))
}

// visit decodes a stored visit.
func (s *Store) visit(v visit) Visit {
	c, at := s.vc.dec(v)
	return Visit{Config: s.cfgIDs[c], At: at}
}

// States iterates over the refs of the visited states in S, in insertion
// order.
func (s *Store) States() iter.Seq[StateRef] {
	return func(yield func(StateRef) bool) {
		for r := range s.in.len() {
			if !yield(StateRef(r)) {
				return
			}
		}
	}
}

// OutOfRangeStates iterates over the refs of the visited states outside S.
func (s *Store) OutOfRangeStates() iter.Seq[StateRef] {
	return func(yield func(StateRef) bool) {
		for r := range s.oor.len() {
			if !yield(StateRef(r) | oorBit) {
				return
			}
		}
	}
}

// Bytes estimates the heap memory held by the store's data structures.
func (s *Store) Bytes() int {
	b := s.in.bytes() + s.oor.bytes() + 8*cap(s.cfgIDs) + 24*len(s.cfgIdx) + 16*cap(s.vc.esc) + s.oc.bytes()
	for l := range s.levels {
		b += s.levels[l].bytes()
	}
	return b
}

package coverage

import (
	"errors"
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
	// Seed seeds the PCG generators of the reservoir draws, so that the pools
	// are a deterministic function of the seed and the sequence of Adds and
	// Merges.
	Seed uint64
	// Shards is the number of shards of every table (a power of two up to
	// 16; 0 means DefaultShards). Results depend on it, never on the number
	// of cores: see shard.go.
	Shards int
	// Memory is the budget in bytes of the store's data structures (0: none).
	// See the package documentation, "Memory budget".
	Memory int64
}

// StateRef names a visited state of a Store. Refs of states in S hold the
// shard and the index within it, in the order the shard first saw the
// states; refs of out-of-range states have the top bit set. An index's
// refs name a state by its region at k = 2 and its place in it (slim.go).
// Refs are stable: they survive growth, Merge into the same store and
// WriteTo/ReadFrom, until the store coarsens its pools (see
// [Store.PoolK]); the selector uses a ref right after the query that
// returned it. Refs are a store's own: the same state has another ref in
// an index than in the whole store.
type StateRef uint64

const oorBit StateRef = 1 << 63

// OutOfRange reports whether r names a state outside the ranges of S.
func (r StateRef) OutOfRange() bool { return r&oorBit != 0 }

func makeRef(sh int, r uint32) StateRef { return StateRef(uint32(sh)<<localBits | r) }

// local reports whether r is a ref of a state in S of a whole store or a
// part (shard and index): not out of range, not an index's.
func (r StateRef) local() bool { return r < 1<<31 }

func (r StateRef) split() (sh int, local uint32) {
	return int(r>>localBits) & (maxShards - 1), uint32(r) & localMask
}

// Store is the set of visited states of S with their pools, and the visited
// regions of S at every region size k = 2^l (ACT §2.1–2.2). See the package
// documentation for the layout. A Store is not safe for concurrent use; its
// merges use all cores internally.
type Store struct {
	ly   *layout
	opt  Options
	mask uint64 // shards - 1

	// pooled[i] is shard i of the pooled states: the visited regions at
	// level pool (the states themselves while pool = 0) with counts and
	// pools.
	pooled []*shard
	pool   int
	// floor is the finest level with an exact set; levels below it are
	// estimated by the shards' HyperLogLog sketches.
	floor int
	// levels[l] for floor ≤ l ≤ L, l ≠ pool: visited regions at k = 2^l
	// (for l < pool, the exact sets that pools no longer key).
	levels []sset
	// coarsened counts the coarsenings done to keep to the budget;
	// overBudget is set when nothing more could be coarsened.
	coarsened  int
	overBudget bool
	estValid   bool
	estCache   []uint64 // estimate of every level below the floor

	src *rand.PCG // out-of-range pools and nothing else
	rng *rand.Rand

	oor        states // states outside S, keyed by raw granules
	ovc        visitCodec
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
	poolBuf    []visit
	oorBuf     []uint64 // raw granules of an out-of-range state
	oorKey     []uint64
	scr        scratch
	unvCache   unvisitedCache
	mg         merger

	// A store split into parts (parts.go): its role, the part count and,
	// for a part, its number; for an index, the source of its pools, its
	// first error, and the out-of-range states its parts found.
	role    role
	parts   int
	part    int
	pools   PoolSource
	poolErr error
	oorNew  uint64
	visBuf  []Visit
	broken  error // an index whose parts' news contradicted it
	// sl holds an index's states as bits of their regions at k = 2
	// (slim.go), when sl.on.
	sl slim
}

// NewStore returns an empty store over space. It fails when the space is
// invalid (see [Space.Validate]), PoolSize is negative, Shards is not a power
// of two up to 16 or Memory is negative.
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
	if opt.Shards == 0 {
		opt.Shards = DefaultShards
	}
	if opt.Shards < 1 || opt.Shards > maxShards || opt.Shards&(opt.Shards-1) != 0 {
		return nil, fmt.Errorf("coverage: shards %d: want a power of two from 1 to %d", opt.Shards, maxShards)
	}
	if opt.Memory < 0 {
		return nil, fmt.Errorf("coverage: memory budget %d is negative", opt.Memory)
	}
	s := &Store{ly: ly, opt: opt, mask: uint64(opt.Shards - 1)}
	s.src = rand.NewPCG(opt.Seed, opt.Seed^0x3c6ef372fe94f82b)
	s.rng = rand.New(s.src)
	for i := range opt.Shards {
		s.pooled = append(s.pooled, newShard(i, opt.Seed, ly.w, ly.kb, opt.PoolSize))
	}
	s.oc = newOORCodec(ly)
	s.oor = newStates(s.oc.w, 4*ly.d, opt.PoolSize)
	s.levels = make([]sset, ly.L+1)
	for l := 1; l <= ly.L; l++ {
		s.levels[l] = newSSet(opt.Shards, ly.w, ly.kb)
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
// variables. Once the store has coarsened (see the package documentation),
// the ref and newState are those of the state's pooled region, and
// newRegions holds only the exact levels (k ≥ FloorK).
func (s *Store) Add(state []float64, v Visit) (ref StateRef, newState bool, newRegions Levels) {
	if s.role != roleWhole {
		panic("coverage: Add on a store part or index (use AddShares and AddNews)")
	}
	if !s.ly.encode(state, s.keyBuf) {
		s.ly.encodeOOR(state, s.oorBuf)
		r, isNew := s.addOOR(s.oorBuf, s.ovc.enc(s.intern(v.Config), v.At))
		return r, isNew, 0
	}
	m := &s.mg
	m.reset(s, 1)
	m.add(s.keyBuf, v.At, s.intern(v.Config), 0)
	m.run(s)
	s.checkBudget()
	return m.ref, m.news[0]&(1<<uint(s.pool)) != 0, m.news[0]
}

// addOOR records a visit of the out-of-range state with raw granules raw.
// Past the out-of-range limit, new distinct states are only counted.
func (s *Store) addOOR(raw []uint64, vis visit) (StateRef, bool) {
	s.oc.key(raw, s.oorKey, true)
	s.oVisits++
	if s.oorLimit > 0 && s.oor.len() >= s.oorLimit {
		if r, ok := s.oor.t.lookup(s.oorKey); ok {
			s.oor.record(r, vis, s.rng, &s.ovc)
			return StateRef(r) | oorBit, false
		}
		s.ovc.release(vis)
		s.oorDropped++
		return NoState, false
	}
	r, isNew := s.oor.insert(s.oorKey, vis, s.rng, &s.ovc)
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

// level converts a region size to a level, panicking on sizes that are not
// powers of two; sizes above MaxK behave like MaxK.
func (s *Store) level(k int) int {
	if k < 1 || k&(k-1) != 0 {
		panic(fmt.Sprintf("coverage: region size %d is not a power of two", k))
	}
	return min(bits.TrailingZeros(uint(k)), s.ly.L)
}

// table returns the table of shard sh at level lv ≥ floor.
func (s *Store) table(lv, sh int) *table {
	if lv == s.pool {
		return &s.pooled[sh].st.t
	}
	return &s.levels[lv].t[sh]
}

// has reports whether the level-l region (or state, at l = 0) with key rk is
// visited; l must be at least the floor.
func (s *Store) has(l int, rk []uint64) bool {
	if l == 0 && s.sl.on {
		_, ok := s.slimLookup(rk)
		return ok
	}
	h := hashKey(rk)
	_, ok := s.table(l, shardOf(h, s.mask)).lookupH(rk, h)
	return ok
}

// Visited reports whether region R(state, k) has been visited. It is false for
// states outside S. k must be a power of two. Below the exact floor (see
// [Store.FloorK]) it reports whether the enclosing region at the floor is
// visited: a visited region is never reported unvisited there, but an
// unvisited one may be reported visited.
func (s *Store) Visited(state []float64, k int) bool {
	l := max(s.level(k), s.floor)
	if !s.ly.encode(state, s.keyBuf) {
		return false
	}
	s.ly.regionKey(s.keyBuf, s.keyBuf, l)
	return s.has(l, s.keyBuf)
}

// VisitedRegions is the number of visited regions of S at region size k (a
// power of two); at k = 1 it is the number of visited states in S. It is
// exact at k ≥ FloorK() and a HyperLogLog estimate (relative standard error
// about 0.8%) below.
func (s *Store) VisitedRegions(k int) uint64 {
	l := s.level(k)
	if l < s.floor {
		return s.estimate(l)
	}
	if l == s.pool {
		if s.sl.on {
			return uint64(s.slimLen())
		}
		n := 0
		for _, sh := range s.pooled {
			n += sh.st.len()
		}
		return uint64(n)
	}
	return uint64(s.levels[l].len())
}

// Exact reports whether VisitedRegions(k) is exact (k ≥ FloorK()).
func (s *Store) Exact(k int) bool { return s.level(k) >= s.floor }

// FloorK is the smallest region size with an exact visited set: 1 until the
// memory budget made the store drop its finest sets.
func (s *Store) FloorK() int { return 1 << s.floor }

// PoolK is the region size whose regions hold the pools: 1 (every state has
// its pool) until the memory budget made the store merge the pools of
// neighbouring states.
func (s *Store) PoolK() int { return 1 << s.pool }

// SetMemory sets the memory budget (0: none), a run setting that
// checkpoints do not keep, and coarsens at once if the store is over it.
func (s *Store) SetMemory(budget int64) {
	s.opt.Memory = max(budget, 0)
	s.checkBudget()
}

// OverBudget reports whether the store is above its memory budget with
// nothing left to coarsen (the budget is then exceeded, and reported so).
func (s *Store) OverBudget() bool { return s.overBudget }

// Coverage is coverage(S,k) = VisitedRegions(k) / Space.Regions(k), a fraction
// in [0,1] (ACT §2.2).
func (s *Store) Coverage(k int) float64 {
	return float64(s.VisitedRegions(k)) / float64(s.ly.sp.Regions(1<<s.level(k)))
}

// Len is the number of pooled states in S: the visited states while PoolK
// is 1, the visited regions at PoolK after coarsening.
func (s *Store) Len() int { return int(s.VisitedRegions(1 << s.pool)) }

// Visits is the number of visits of states in S recorded so far.
func (s *Store) Visits() uint64 { return s.visits }

// OutOfRange returns the number of distinct visited states outside the ranges
// of S and the number of their visits. They are not in any region count.
func (s *Store) OutOfRange() (states int, visits uint64) {
	if s.role == roleIndex {
		return int(s.oorNew), s.oVisits
	}
	return s.oor.len(), s.oVisits
}

// Configs is the number of distinct Visit.Config values the pools refer to
// (all those seen, until a coarsening drops the ones no pool keeps).
func (s *Store) Configs() int { return len(s.cfgIDs) }

// Lookup returns the ref of a visited state (in S or not); after coarsening,
// the ref of its pooled region.
func (s *Store) Lookup(state []float64) (StateRef, bool) {
	if s.ly.encode(state, s.keyBuf) {
		s.ly.regionKey(s.keyBuf, s.keyBuf, s.pool)
		return s.lookupPooled(s.keyBuf)
	}
	s.ly.encodeOOR(state, s.oorBuf)
	if !s.oc.key(s.oorBuf, s.oorKey, false) {
		return 0, false
	}
	r, ok := s.oor.t.lookup(s.oorKey)
	return StateRef(r) | oorBit, ok
}

// lookupPooled finds the pooled region with key rk (at level pool).
func (s *Store) lookupPooled(rk []uint64) (StateRef, bool) {
	if s.sl.on {
		return s.slimLookup(rk)
	}
	h := hashKey(rk)
	sh := shardOf(h, s.mask)
	r, ok := s.pooled[sh].st.t.lookupH(rk, h)
	return makeRef(sh, r), ok
}

// set returns the state set, codec and index of ref, panicking on invalid
// refs.
func (s *Store) set(ref StateRef) (*states, *visitCodec, uint32) {
	if ref.OutOfRange() {
		r := uint32(ref &^ oorBit)
		if int(r) >= s.oor.len() {
			panic(fmt.Sprintf("coverage: invalid state ref %#x", uint64(ref)))
		}
		return &s.oor, &s.ovc, r
	}
	sh, r := ref.split()
	if !ref.local() || sh >= len(s.pooled) || int(r) >= s.pooled[sh].st.len() {
		panic(fmt.Sprintf("coverage: invalid state ref %#x", uint64(ref)))
	}
	return &s.pooled[sh].st, &s.pooled[sh].vc, r
}

// State decodes ref into a new state vector. For a state in S the values are
// the representatives of its granules (the lower edge Min+g·Step, or the
// categorical index); after coarsening, those of the lower corner of its
// pooled region. For an out-of-range state they are the same for finite
// values, NaN for NaN, and ±Inf for values beyond ±2^62 granules.
func (s *Store) State(ref StateRef) []float64 {
	return s.AppendState(nil, ref)
}

// AppendState appends the decoded state of ref to dst.
func (s *Store) AppendState(dst []float64, ref StateRef) []float64 {
	n := len(dst)
	dst = append(dst, make([]float64, s.ly.d)...)
	switch {
	case ref.OutOfRange():
		st, _, r := s.set(ref)
		raw := make([]uint64, s.ly.d)
		s.oc.raw(st.t.key(r), raw)
		s.ly.decodeOOR(raw, dst[n:])
	case s.role == roleIndex:
		// An index's refs are its own (slim.go).
		key, err := s.stateKey(ref)
		if err != nil {
			panic(err.Error())
		}
		s.ly.decode(key, dst[n:])
	default:
		st, _, r := s.set(ref)
		s.ly.decode(st.t.key(r), dst[n:])
	}
	return dst
}

// Count is the number of visits of ref.
func (s *Store) Count(ref StateRef) uint64 {
	if s.role == roleIndex {
		if s.pools == nil {
			s.poolFail(errors.New("coverage: index without a pool source"))
			return 0
		}
		key, err := s.stateKey(ref)
		var n uint64
		if err == nil {
			n, err = s.pools.Count(s.partOfKey(key), key)
		}
		if err != nil {
			s.poolFail(err)
		}
		return n
	}
	st, _, r := s.set(ref)
	return uint64(st.count[r])
}

// Pool returns a copy of the reservoir-sampled pool of visits of ref: a
// uniform sample of at most PoolSize of its visits.
func (s *Store) Pool(ref StateRef) []Visit {
	return s.AppendPool(nil, ref)
}

// AppendPool appends the pool of ref to dst.
func (s *Store) AppendPool(dst []Visit, ref StateRef) []Visit {
	if s.role == roleIndex {
		var pools [1][]Visit
		s.remotePools(pools[:], []StateRef{ref})
		return append(dst, pools[0]...)
	}
	st, vc, r := s.set(ref)
	for i := range st.poolLen(r) {
		dst = append(dst, s.visit(vc, st.get(r, i)))
	}
	return dst
}

// Pools returns the pools of refs, each as [Store.Pool] returns it. An
// index asks each part that keeps some of the states for their pools in
// one request, the parts at once: a selection that draws many visits
// costs one round trip to the parts, not one a state (it fails as Pool
// does: [Store.PoolErr]).
func (s *Store) Pools(refs []StateRef) [][]Visit {
	out := make([][]Visit, len(refs))
	if s.role == roleIndex {
		s.remotePools(out, refs)
		return out
	}
	for i, ref := range refs {
		out[i] = s.AppendPool(nil, ref)
	}
	return out
}

// RandomVisit draws one visit of ref uniformly from its pool (ACT Method 1
// line 8: "randomly and uniformly select one from the pool").
func (s *Store) RandomVisit(rng *rand.Rand, ref StateRef) Visit {
	if s.role == roleIndex {
		// The same draw as the whole store's, from the part's answer.
		s.visBuf = s.AppendPool(s.visBuf[:0], ref)
		if len(s.visBuf) == 0 {
			return Visit{}
		}
		return s.visBuf[rng.IntN(len(s.visBuf))]
	}
	st, vc, r := s.set(ref)
	return s.visit(vc, st.get(r, rng.IntN(st.poolLen(r))))
}

// visit decodes a stored visit.
func (s *Store) visit(vc *visitCodec, v visit) Visit {
	c, at := vc.dec(v)
	return Visit{Config: s.cfgIDs[c], At: at}
}

// States iterates over the refs of the pooled states in S, shard by shard,
// each in insertion order.
func (s *Store) States() iter.Seq[StateRef] {
	if s.sl.on {
		return s.slimStates
	}
	return func(yield func(StateRef) bool) {
		for i, sh := range s.pooled {
			for r := range sh.st.len() {
				if !yield(makeRef(i, uint32(r))) {
					return
				}
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

// Bytes is the memory the store's data structures need for what they hold
// (keys, indexes, counts, pools, escaped visits, interned configs, sketches);
// it is what the memory budget bounds. It is computed from the contents, not
// from the allocations, so that a campaign and its resumption coarsen at the
// same merge; the heap holds up to a quarter more in slices' growth slack.
// The out-of-range value dictionaries (a few entries per variable) are left
// out: they hold values of states the out-of-range limit dropped, which a
// checkpoint does not keep.
func (s *Store) Bytes() int {
	b := s.oor.bytes() + 48*len(s.cfgIDs) + s.ovc.bytes()
	for _, sh := range s.pooled {
		b += sh.st.bytes() + sh.vc.bytes() + sketchBytes*len(sh.est)
	}
	for l := range s.levels {
		b += s.levels[l].bytes()
	}
	return b + s.slimBytes()
}

// RegionCorners iterates over the visited regions of S at region size k (a
// power of two) in no particular order, each as the state at its lower
// corner (decoded as State decodes a state). The slice it yields is reused:
// copy what must outlive the step. It costs one step per visited region at
// k, not per state. ok is false below FloorK, where the store keeps no
// exact set.
func (s *Store) RegionCorners(k int) (seq iter.Seq[[]float64], ok bool) {
	l := s.level(k)
	if l < s.floor {
		return nil, false
	}
	return func(yield func([]float64) bool) {
		dst := make([]float64, s.ly.d)
		if l == 0 && s.sl.on {
			s.slimKeys(func(key []uint64) bool {
				s.ly.decode(key, dst)
				return yield(dst)
			})
			return
		}
		for sh := range s.pooled {
			t := s.table(l, sh)
			for r := range t.n {
				s.ly.decode(t.key(uint32(r)), dst)
				if !yield(dst) {
					return
				}
			}
		}
	}, true
}

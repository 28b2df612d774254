package coverage

import (
	"errors"
	"fmt"
	"sync/atomic"
)

// An index's states as bits of their regions at k = 2.
//
// An index needs its states only to tell whether a state is visited (a
// probe at k = 1: the lines of the selector's queries, the last step of
// descend, SampleUnvisited at k = 1) and to name one in a pool request;
// its parts keep the states themselves. So it keeps no state key: on each
// visited region at k = 2 it keeps a bitmap of the region's visited
// sub-regions at k = 1, bit c standing for the sub-region whose low bit of
// variable vars[b] is bit b of c, the order in which descend lists a
// region's sub-regions. A state new to the store costs a bit set on the
// region at k = 2 that the merge inserts or finds anyway, and a probe at
// k = 1 a lookup at k = 2 and a bit. The index kept every state's key in
// tables of its own before: the largest tables of the coordinator (51 to
// 73 million keys in the aged bench campaign, about 0.6 GB of its peak
// memory: bench/results/index-without-keys-20261124.md).
//
// A region at k = 2 has 2^len(vars) sub-regions at k = 1, so the bitmap
// fits one word for at most maxSlimVars numerical variables of more than
// one granule (4 in the default S). An index over a space with more keeps
// its states' keys as before.
//
// The index names a state by its region's ref at k = 2 and its bit
// (slimRef), and asks its parts for pools by the state's key, which it
// rebuilds from the region's key and the bit.

// maxSlimVars is the most variables split at k = 2 for which an index
// keeps its states as bits.
const maxSlimVars = 6

// slim is an index's states as bits (see above); on is false for a whole
// store, a part, or an index that keeps its states' keys.
type slim struct {
	on   bool
	vars []int     // the variables split at k = 2, in descend's order
	kids []bitmaps // kids[sh].word(r): the visited sub-regions of region r of shard sh at k = 2
	n    []int     // visited states by the shard of their own key (their part's shard)
	pk   []uint64  // key buffer of the queries' probes
}

// slimBit marks an index's ref: a region at k = 2 (its shard and index,
// shifted left by maxSlimVars) and a sub-region's bit.
const slimBit StateRef = 1 << 62

func slimRef(sh int, r uint32, kid uint) StateRef {
	return slimBit | makeRef(sh, r)<<maxSlimVars | StateRef(kid)
}

// slimParts splits an index's ref; ok is false for any other.
func (r StateRef) slimParts() (sh int, local uint32, kid uint, ok bool) {
	if r&(slimBit|oorBit) != slimBit || r>>(31+maxSlimVars) != slimBit>>(31+maxSlimVars) {
		return 0, 0, 0, false
	}
	x := r &^ slimBit
	sh, local = (x >> maxSlimVars).split()
	return sh, local, uint(x & (1<<maxSlimVars - 1)), true
}

// initSlim makes index s keep its states as bits, if its space allows.
func (s *Store) initSlim() {
	var vars []int
	for _, i := range s.ly.numeric {
		if s.ly.nbits[i] > 0 {
			vars = append(vars, i)
		}
	}
	if len(vars) == 0 || len(vars) > maxSlimVars || s.ly.L < 1 {
		return
	}
	s.sl = slim{on: true, vars: vars, kids: make([]bitmaps, len(s.pooled)),
		n: make([]int, len(s.pooled)), pk: make([]uint64, s.ly.w)}
}

// kidOf is the bit of state key among the sub-regions of its region at
// k = 2.
func (s *Store) kidOf(key []uint64) uint {
	var c uint
	for b, i := range s.sl.vars {
		c |= uint(key[s.ly.word[i]]>>s.ly.off[i]&1) << uint(b)
	}
	return c
}

// kidKey writes into dst the key of sub-region kid of the region at k = 2
// with key rk.
func (s *Store) kidKey(dst, rk []uint64, kid uint) {
	copy(dst, rk)
	for b, i := range s.sl.vars {
		if kid>>uint(b)&1 != 0 {
			dst[s.ly.word[i]] |= 1 << s.ly.off[i]
		}
	}
}

// slimLookup finds the visited state with key key in a slim index.
func (s *Store) slimLookup(key []uint64) (StateRef, bool) {
	pk := s.sl.pk
	kid := s.kidOf(key)
	s.ly.regionKey(key, pk, 1)
	h := hashKey(pk)
	sh := shardOf(h, s.mask)
	r, ok := s.levels[1].t[sh].lookupH(pk, h)
	if !ok || *s.sl.kids[sh].word(r)>>kid&1 == 0 {
		return 0, false
	}
	return slimRef(sh, r, kid), true
}

// slimKey writes the key of an index's ref into dst; ok is false for a
// ref the index does not have.
func (s *Store) slimKey(dst []uint64, ref StateRef) bool {
	sh, r, kid, ok := ref.slimParts()
	if !ok || sh >= len(s.sl.kids) || int(r) >= s.sl.kids[sh].n || *s.sl.kids[sh].word(r)>>kid&1 == 0 {
		return false
	}
	s.kidKey(dst, s.levels[1].t[sh].key(r), kid)
	return true
}

// stateKey is the key of ref, a state in S of index s, in a new slice.
func (s *Store) stateKey(ref StateRef) ([]uint64, error) {
	key := make([]uint64, s.ly.w)
	if s.sl.on {
		if !s.slimKey(key, ref) {
			return nil, fmt.Errorf("coverage: invalid state ref %#x", uint64(ref))
		}
		return key, nil
	}
	if !ref.local() || !s.validRef(ref) {
		return nil, fmt.Errorf("coverage: invalid state ref %#x", uint64(ref))
	}
	sh, r := ref.split()
	copy(key, s.pooled[sh].st.t.key(r))
	return key, nil
}

// slimStates iterates over a slim index's states, region by region at
// k = 2 (shard by shard, each in insertion order), each region's in bit
// order.
func (s *Store) slimStates(yield func(StateRef) bool) {
	for sh := range s.sl.kids {
		for r, m := range s.sl.kids[sh].all {
			for c := uint(0); m != 0; c, m = c+1, m>>1 {
				if m&1 != 0 && !yield(slimRef(sh, r, c)) {
					return
				}
			}
		}
	}
}

// slimKeys calls f with the key of each of a slim index's states, in the
// order of slimStates; key is reused.
func (s *Store) slimKeys(f func(key []uint64) bool) {
	key := make([]uint64, s.ly.w)
	s.slimStates(func(ref StateRef) bool {
		s.slimKey(key, ref)
		return f(key)
	})
}

// slimLen is the number of states of a slim index.
func (s *Store) slimLen() int {
	n := 0
	for _, x := range s.sl.n {
		n += x
	}
	return n
}

// slimFromKeys sets the bits of a slim index whose regions are in place
// from the keys of its states, tabs[sh] holding those of shard sh (a
// whole store's tables, being split), and checks that they are of one
// store: every state's region at k = 2 is there, and every region there
// holds a state. The shards are done on every core (the bits are set
// atomically: a region's states are in many shards).
func (s *Store) slimFromKeys(tabs []*table) error {
	s.slimClear()
	bad := make([]error, len(tabs))
	counts := make([][]int, len(tabs))
	parallel(len(tabs), false, func(sh int) {
		t := tabs[sh]
		ld := s.newSlimLoader(0, 1)
		// Into this goroutine's buffer, not t.key's: a table given twice
		// (a state in two shards) is read by two goroutines.
		key := make([]uint64, s.ly.w)
		for r := range t.n {
			for wi := range key {
				key[wi] = t.word(uint32(r), wi)
			}
			if bad[sh] = ld.add(sh, key); bad[sh] != nil {
				return
			}
		}
		bad[sh] = ld.flush()
		counts[sh] = ld.n
	})
	if err := errors.Join(bad...); err != nil {
		return err
	}
	return s.slimDone(counts)
}

// slimClear gives every region of a slim index at k = 2 an empty bitmap,
// for a slimLoader to fill.
func (s *Store) slimClear() {
	for sh := range s.sl.kids {
		s.sl.kids[sh] = zeroBitmaps(s.levels[1].t[sh].n)
	}
}

// slimDone checks a slim index's bits once every state is loaded (every
// region at k = 2 holds a state) and sets its counts of states, the sums
// of the loaders' counts.
func (s *Store) slimDone(counts [][]int) error {
	for sh := range s.sl.kids {
		for _, m := range s.sl.kids[sh].all {
			if m == 0 {
				return errors.New("the index has regions without states in the parts")
			}
		}
		s.sl.n[sh] = 0
		for _, c := range counts {
			s.sl.n[sh] += c[sh]
		}
	}
	return nil
}

// slimLoader sets the bits of a slim index (after slimClear) from states
// given one at a time, by a whole store's tables (slimFromKeys) or by the
// decoder of a part of a split checkpoint as it reads them (indexOfParts:
// the parts' keys are never held, and never put in tables of their own).
// A state sets its bit on its region at k = 2, which must be there, and a
// bit set twice is a state given twice. The lookups are done touchAhead at
// a time, their slots touched first so that the cache misses of a large
// index overlap (as merger.shardLevel does); loaders on several
// goroutines may share an index.
type slimLoader struct {
	s           *Store
	part, parts int      // the part whose states it is given (0 of 1: any)
	n           []int    // states given, by shard
	rks         []uint64 // the queued states' regions at k = 2
	kid         [touchAhead]uint
	hs          [touchAhead]uint64
	queued      int
	sink        uint32 // keeps the touches
}

func (s *Store) newSlimLoader(part, parts int) *slimLoader {
	return &slimLoader{s: s, part: part, parts: parts, n: make([]int, len(s.pooled)),
		rks: make([]uint64, touchAhead*s.ly.w)}
}

// add loads the state of shard sh with key key (not kept).
func (ld *slimLoader) add(sh int, key []uint64) error {
	if partOf(sh, ld.parts) != ld.part {
		return fmt.Errorf("part %d of %d has states of shard %d", ld.part, ld.parts, sh)
	}
	ld.n[sh]++
	s, i, w := ld.s, ld.queued, ld.s.ly.w
	rk := ld.rks[i*w : (i+1)*w]
	ld.kid[i] = s.kidOf(key)
	s.ly.regionKey(key, rk, 1)
	ld.hs[i] = hashKey(rk)
	if ld.queued++; ld.queued == touchAhead {
		return ld.flush()
	}
	return nil
}

// flush sets the bits of the states queued. It touches their slots in a
// loop of its own first: touched as they come, between a decoder's reads
// of the next states, the misses did not overlap, and the touches cost
// twice as much (bench/results/resume-without-keys-20261125.md).
func (ld *slimLoader) flush() error {
	s, w := ld.s, ld.s.ly.w
	for i := range ld.queued {
		ld.sink += s.levels[1].t[shardOf(ld.hs[i], s.mask)].touch(ld.hs[i])
	}
	for i := range ld.queued {
		psh := shardOf(ld.hs[i], s.mask)
		r, ok := s.levels[1].t[psh].lookupH(ld.rks[i*w:(i+1)*w], ld.hs[i])
		if !ok {
			return errors.New("a part's state has no region in the index")
		}
		bit := uint64(1) << ld.kid[i]
		if atomic.OrUint64(s.sl.kids[psh].word(r), bit)&bit != 0 {
			return errors.New("a state is in two shards")
		}
	}
	ld.queued = 0
	return nil
}

// slimBytes is what a slim index's bits take.
func (s *Store) slimBytes() int {
	b := 0
	for _, kids := range s.sl.kids {
		b += 8 * kids.n
	}
	return b
}

// bitmaps is one shard's bitmaps of a slim index, a word a region at
// k = 2, in chunks of 2^bitmapShift words. A slice would be copied
// whenever it grew: each word about four times over a campaign's life,
// into fresh memory, and all of them at the first merge after a resume,
// which made the slice exactly as long as needed (0.50 s of a 2.16 s
// merge in the stretch after an aged campaign's resume:
// bench/results/bitmaps-in-chunks-20261124.md). A chunk is never moved
// once full, so words are written once, and the memory is a function of
// the number of regions alone, in a campaign and in its resumption.
// The first chunk grows as a slice, so that a small index stays small.
type bitmaps struct {
	chunks [][]uint64
	n      int // words
}

const bitmapShift = 16 // 512 KiB a chunk

// zeroBitmaps returns n zero words.
func zeroBitmaps(n int) bitmaps {
	const full = 1 << bitmapShift
	b := bitmaps{n: n}
	for off := 0; off < n; off += full {
		l := min(n-off, full)
		if n < full { // the first chunk alone, as a slice
			b.chunks = append(b.chunks, make([]uint64, l))
		} else {
			b.chunks = append(b.chunks, make([]uint64, l, full))
		}
	}
	return b
}

// word is the address of word r (r < n).
func (b *bitmaps) word(r uint32) *uint64 {
	return &b.chunks[r>>bitmapShift][r&(1<<bitmapShift-1)]
}

// push appends a zero word.
func (b *bitmaps) push() {
	c := b.n >> bitmapShift
	if c == len(b.chunks) {
		var chunk []uint64 // the first grows as a slice
		if c > 0 {
			chunk = make([]uint64, 0, 1<<bitmapShift)
		}
		b.chunks = append(b.chunks, chunk)
	}
	b.chunks[c] = append(b.chunks[c], 0)
	b.n++
}

// all yields every word with its index, in order.
func (b *bitmaps) all(yield func(uint32, uint64) bool) {
	r := uint32(0)
	for _, c := range b.chunks {
		for _, m := range c {
			if !yield(r, m) {
				return
			}
			r++
		}
	}
}

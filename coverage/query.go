package coverage

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// scratch holds the buffers of the queries, so that a query allocates nothing
// once they have grown.
type scratch struct {
	star, base, probe, child []uint64
	a, b                     []uint32 // candidate positions, ping-pong
	lines                    []uint32 // visited positions of every variable
	off                      []int    // lines[off[j]:off[j+1]] belong to variable j
	split                    []int
	pick                     []uint64
	all                      []uint32   // lines of every level (levelLines)
	iota, ch                 []uint32   // 0…n-1; children of candidates
	keys, hs                 []uint64   // probe keys and their hashes
	kids                     []uint8    // a slim index's probes' bits
	sink                     uint32     // keeps the touches of filter alive
	span                     [][2]int32 // span[j*(L+1)+lv]: line of j at lv in all
}

func (s *Store) initScratch() {
	w := s.ly.w
	if len(s.scr.star) == w {
		return
	}
	s.scr.star = make([]uint64, w)
	s.scr.base = make([]uint64, w)
	s.scr.probe = make([]uint64, w)
	s.scr.child = make([]uint64, w)
	s.scr.pick = make([]uint64, w)
	s.scr.off = make([]int, s.ly.d+1)
}

// line appends to out the positions, in increasing order, of the visited
// level-l regions that differ from the region of star only in variable j:
// the line through R(star, 2^l) along j.
//
// For a numerical variable it walks down from level bits_j, where the line is
// a single region, refining only visited regions: the region of position c at
// level lv is inside the region of position c/2 at level lv+1 (all of its
// other intervals are inside the coarser ones too), so an unvisited coarse
// region prunes its whole subtree. The cost is about twice the number of
// visited regions met on the way, at most 4·positions(j,l) lookups.
func (s *Store) line(star []uint64, j, l int, out []uint32) []uint32 {
	ly := s.ly
	if ly.cat[j] {
		return s.filter(star, j, l, s.allValues(j), out)
	}
	top := ly.nbits[j]
	if top <= l {
		return s.filter(star, j, l, s.allValues(j), out)
	}
	cur := s.filter(star, j, top, s.allValues(j), s.scr.a[:0])
	next := s.scr.b[:0]
	for lv := top - 1; lv >= l && len(cur) > 0; lv-- {
		next = s.filter(star, j, lv, s.children(cur, j, lv), next[:0])
		cur, next = next, cur
	}
	out = append(out, cur...)
	s.scr.a, s.scr.b = cur[:0], next[:0]
	return out
}

// allValues returns the positions of the top of a line along j: 0, 1, …,
// n_j-1 for a categorical variable, 0 for a numerical one.
func (s *Store) allValues(j int) []uint32 {
	n := 1
	if s.ly.cat[j] {
		n = int(s.ly.n[j])
	}
	for len(s.scr.iota) < n {
		s.scr.iota = append(s.scr.iota, uint32(len(s.scr.iota)))
	}
	return s.scr.iota[:n]
}

// children returns the level-lv positions of variable j below the level-lv+1
// positions cur, in increasing order.
func (s *Store) children(cur []uint32, j, lv int) []uint32 {
	m := uint32(s.ly.positions(j, lv))
	ch := s.scr.ch[:0]
	for _, c := range cur {
		if 2*c < m {
			ch = append(ch, 2*c)
		}
		if 2*c+1 < m {
			ch = append(ch, 2*c+1)
		}
	}
	s.scr.ch = ch
	return ch
}

// filter appends to out the positions p of cands, in order, for which the
// level-lv region of star with variable j moved to p is visited. It probes in
// two passes, first touching every index slot and then looking up, so that
// the cache misses of the independent lookups overlap.
func (s *Store) filter(star []uint64, j, lv int, cands []uint32, out []uint32) []uint32 {
	if lv == 0 && s.sl.on {
		return s.filterSlim(star, j, cands, out)
	}
	ly, w := s.ly, s.ly.w
	base := s.scr.base
	ly.regionKey(star, base, lv)
	sh := ly.shift(j, lv)
	n := len(cands)
	keys := grow(s.scr.keys[:0], n*w)[:n*w]
	hs := grow(s.scr.hs[:0], n)[:n]
	sink := s.scr.sink
	for i, c := range cands {
		k := keys[i*w : (i+1)*w]
		copy(k, base)
		ly.setField(k, j, uint64(c)<<sh)
		hs[i] = hashKey(k)
		sink += s.table(lv, shardOf(hs[i], s.mask)).touch(hs[i])
	}
	s.scr.sink = sink
	for i, c := range cands {
		if s.table(lv, shardOf(hs[i], s.mask)).lookupHashed(keys[i*w:(i+1)*w], hs[i]) {
			out = append(out, c)
		}
	}
	s.scr.keys, s.scr.hs = keys, hs
	return out
}

// filterSlim is filter at k = 1 for a slim index (slim.go): it probes the
// candidates' regions at k = 2 and their bits.
func (s *Store) filterSlim(star []uint64, j int, cands []uint32, out []uint32) []uint32 {
	ly, w := s.ly, s.ly.w
	base := s.scr.base
	ly.regionKey(star, base, 0)
	n := len(cands)
	keys := grow(s.scr.keys[:0], n*w)[:n*w]
	hs := grow(s.scr.hs[:0], n)[:n]
	kids := grow(s.scr.kids[:0], n)[:n]
	sink := s.scr.sink
	for i, c := range cands {
		k := keys[i*w : (i+1)*w]
		copy(k, base)
		ly.setField(k, j, uint64(c))
		kids[i] = uint8(s.kidOf(k))
		ly.regionKey(k, k, 1)
		hs[i] = hashKey(k)
		sink += s.levels[1].t[shardOf(hs[i], s.mask)].touch(hs[i])
	}
	s.scr.sink = sink
	for i, c := range cands {
		sh := shardOf(hs[i], s.mask)
		if r, ok := s.levels[1].t[sh].lookupH(keys[i*w:(i+1)*w], hs[i]); ok && *s.sl.kids[sh].word(r)>>kids[i]&1 != 0 {
			out = append(out, c)
		}
	}
	s.scr.keys, s.scr.hs, s.scr.kids = keys, hs, kids
	return out
}

// lines fills s.scr.lines/off with the line of every variable through the
// level-l region of star (already encoded in s.scr.star).
func (s *Store) lines(l int) {
	s.scr.lines = s.scr.lines[:0]
	for j := range s.ly.d {
		s.scr.off[j] = len(s.scr.lines)
		s.scr.lines = s.line(s.scr.star, j, l, s.scr.lines)
	}
	s.scr.off[s.ly.d] = len(s.scr.lines)
}

// pos is the level-l position of variable j in a state or region key.
func (s *Store) pos(key []uint64, j, l int) uint32 {
	return uint32(s.ly.field(key, j) >> s.ly.shift(j, l))
}

// split returns the position of r in the sorted line: the number of visited
// positions below r and whether r itself is visited.
func split(line []uint32, r uint32) (below int, at bool) {
	below = sort.Search(len(line), func(i int) bool { return line[i] >= r })
	return below, below < len(line) && line[below] == r
}

// Bracket is a pair of visited states whose regions bracket R(s*,k) along one
// variable (ACT Method 1, line 5).
type Bracket struct {
	A, B StateRef // R(A,k) is below R(s*,k) in variable Var, R(B,k) above
	Var  int      // index of the variable in which they differ
}

// prepare encodes star and the level of k (at least the floor: below it the
// queries answer at the floor); ok is false for states outside S.
func (s *Store) prepare(star []float64, k int) (l int, ok bool) {
	s.initScratch()
	l = max(s.level(k), s.floor)
	return l, s.ly.encode(star, s.scr.star)
}

// Brackets counts the pairs of visited regions (R_a, R_b) at region size k
// that differ from R(star,k) only in one variable j and lie on both sides of
// it in that variable (R_a below, R_b above; categorical variables are ordered
// by index, as §4.1 numbers ca_state). It is 0 for states outside S.
func (s *Store) Brackets(star []float64, k int) uint64 {
	l, ok := s.prepare(star, k)
	if !ok {
		return 0
	}
	s.lines(l)
	var total uint64
	for j := range s.ly.d {
		total += s.bracketsAlong(j, l)
	}
	return total
}

func (s *Store) bracketsAlong(j, l int) uint64 {
	ln := s.scr.lines[s.scr.off[j]:s.scr.off[j+1]]
	below, at := split(ln, s.pos(s.scr.star, j, l))
	above := len(ln) - below
	if at {
		above--
	}
	return min(uint64(below)*uint64(above), 1<<56)
}

// RandomBracket implements the search of ACT Method 1, lines 5–7, at region
// size k: it draws uniformly one of the region pairs counted by [Brackets],
// then in each region a visited state by a random walk down the levels (a
// uniformly chosen visited sub-region at each level). ok is false when there
// is no pair (or star is outside S). Interpolation then draws p* between the
// environments of pool visits of A and B ([Store.RandomVisit]).
//
// "R(s*,k) lies in between R(s^a,k) and R(s^b,k)" is read along one variable:
// the three regions differ only in variable Var, with s* strictly in between.
func (s *Store) RandomBracket(rng *rand.Rand, star []float64, k int) (br Bracket, ok bool) {
	l, ok := s.prepare(star, k)
	if !ok {
		return br, false
	}
	s.lines(l)
	return s.pickBracket(rng, l)
}

// pickVar draws a variable j with probability proportional to its weight
// at level l, and u, uniform below weight(j, l); ok is false when every
// weight is 0.
func (s *Store) pickVar(rng *rand.Rand, l int, weight func(j, l int) uint64) (j int, u uint64, ok bool) {
	var total uint64
	for j := range s.ly.d {
		total += weight(j, l)
	}
	if total == 0 {
		return 0, 0, false
	}
	u = rng.Uint64N(total)
	for ; ; j++ {
		w := weight(j, l)
		if u < w {
			return j, u, true
		}
		u -= w
	}
}

// pickBracket draws a bracket from the lines in s.scr.lines at level l.
func (s *Store) pickBracket(rng *rand.Rand, l int) (br Bracket, ok bool) {
	j, _, ok := s.pickVar(rng, l, s.bracketsAlong)
	if !ok {
		return br, false
	}
	ln := s.scr.lines[s.scr.off[j]:s.scr.off[j+1]]
	r := s.pos(s.scr.star, j, l)
	below, at := split(ln, r)
	skip := below
	if at {
		skip++
	}
	pa := ln[rng.IntN(below)]
	pb := ln[skip+rng.IntN(len(ln)-skip)]
	return Bracket{A: s.stateIn(rng, j, l, pa), B: s.stateIn(rng, j, l, pb), Var: j}, true
}

// Neighbour is a visited state whose region differs from R(s*,k) in exactly
// one variable (ACT Method 1 line 15, Method 2 line 3), with a visit drawn
// from its pool.
type Neighbour struct {
	Ref   StateRef
	Var   int   // index of the variable in which the regions differ
	Visit Visit // uniformly drawn from the pool of Ref (by RandomNeighbour; the searches leave it zero)
}

// Neighbours counts the visited regions at region size k that differ from
// R(star,k) in exactly one variable. It is 0 for states outside S.
func (s *Store) Neighbours(star []float64, k int) uint64 {
	l, ok := s.prepare(star, k)
	if !ok {
		return 0
	}
	s.lines(l)
	var total uint64
	for j := range s.ly.d {
		total += s.neighboursAlong(j, l)
	}
	return total
}

func (s *Store) neighboursAlong(j, l int) uint64 {
	ln := s.scr.lines[s.scr.off[j]:s.scr.off[j+1]]
	_, at := split(ln, s.pos(s.scr.star, j, l))
	if at {
		return uint64(len(ln) - 1)
	}
	return uint64(len(ln))
}

// RandomNeighbour implements ACT Method 1 lines 15–19 and Method 2 lines 3–8
// at region size k: it draws uniformly one of the regions counted by
// [Neighbours], a visited state in it by a random walk down the levels, and a
// visit from that state's pool. ok is false when there is none (or star is
// outside S).
func (s *Store) RandomNeighbour(rng *rand.Rand, star []float64, k int) (nb Neighbour, ok bool) {
	l, ok := s.prepare(star, k)
	if !ok {
		return nb, false
	}
	s.lines(l)
	return s.pickNeighbour(rng, l, true)
}

// pickNeighbour draws a neighbour from the lines in s.scr.lines at level l,
// and with visit a visit from its pool.
func (s *Store) pickNeighbour(rng *rand.Rand, l int, visit bool) (nb Neighbour, ok bool) {
	j, u, ok := s.pickVar(rng, l, s.neighboursAlong)
	if !ok {
		return nb, false
	}
	ln := s.scr.lines[s.scr.off[j]:s.scr.off[j+1]]
	below, at := split(ln, s.pos(s.scr.star, j, l))
	i := int(u)
	if at && i >= below {
		i++
	}
	nb = Neighbour{Ref: s.stateIn(rng, j, l, ln[i]), Var: j}
	if visit {
		nb.Visit = s.RandomVisit(rng, nb.Ref)
	}
	return nb, true
}

// stateIn picks a visited state in the level-l region of star with variable j
// moved to position p.
func (s *Store) stateIn(rng *rand.Rand, j, l int, p uint32) StateRef {
	rk := s.scr.base
	s.ly.regionKey(s.scr.star, rk, l)
	s.ly.setField(rk, j, uint64(p)<<s.ly.shift(j, l))
	return s.descend(rng, l, rk)
}

// descend walks from the visited level-l region rk down to a visited pooled
// region (a state while the pool level is 0), choosing uniformly among the
// visited sub-regions at each level; from a region below the pool level it
// goes up to the pooled region that holds it. rk is overwritten.
func (s *Store) descend(rng *rand.Rand, l int, rk []uint64) StateRef {
	ly := s.ly
	child := s.scr.child
	if l < s.pool {
		ly.regionKey(rk, rk, s.pool)
	}
	for lv := l; lv > s.pool; lv-- {
		sp := s.scr.split[:0]
		for _, i := range ly.numeric {
			if ly.nbits[i] > lv-1 {
				sp = append(sp, i)
			}
		}
		s.scr.split = sp
		found := false
		nc := uint64(1) << uint(len(sp))
		if len(sp) > 8 { // too many children to list: probe at random first
			for range 1024 {
				if s.child(rk, sp, lv, rng.Uint64N(nc)) {
					found = true
					break
				}
			}
		}
		if !found {
			pick := s.scr.pick
			seen := uint64(0)
			for c := range nc {
				if s.child(rk, sp, lv, c) {
					seen++
					if rng.Uint64N(seen) == 0 {
						copy(pick, child)
					}
				}
			}
			if seen == 0 {
				panic("coverage: visited region without visited sub-region")
			}
			copy(child, pick)
		}
		copy(rk, child)
	}
	ref, ok := s.lookupPooled(rk)
	if !ok {
		panic("coverage: visited region without pooled region")
	}
	return ref
}

// child writes into s.scr.child the level lv-1 sub-region of the level-lv
// region rk chosen by the bits of combo (one per variable of sp) and reports
// whether it is visited.
func (s *Store) child(rk []uint64, sp []int, lv int, combo uint64) bool {
	ly, child := s.ly, s.scr.child
	copy(child, rk)
	for b, i := range sp {
		if combo>>uint(b)&1 != 0 {
			child[ly.word[i]] |= 1 << (ly.off[i] + uint(lv-1))
		}
	}
	return s.has(lv-1, child)
}

// unvisitedCache keeps the sorted linear indices of the visited regions of one
// level, for SampleUnvisited when coverage is high.
type unvisitedCache struct {
	level, n int
	sorted   []uint64
}

// rejectionTries bounds the rejection sampling of SampleUnvisited before it
// falls back to rank selection.
const rejectionTries = 4096

// SampleUnvisited draws a region uniformly among the unvisited regions of S
// at region size k, and returns a state drawn uniformly among the granules of
// that region (the s* of ACT §3.2 steps 2 and 3; use k = 1 for a uniformly
// selected unvisited state). ok is false when every region is visited.
//
// It samples by rejection, and after rejectionTries misses (coverage above
// about 99.8%) it ranks the unvisited regions among the sorted visited ones,
// which costs O(V log V) once per change of the store.
func (s *Store) SampleUnvisited(rng *rand.Rand, k int) (state []float64, ok bool) {
	s.initScratch()
	ly := s.ly
	l := max(s.level(k), s.floor)
	total := ly.sp.Regions(1 << l)
	visited := s.VisitedRegions(1 << l)
	if total != math.MaxUint64 && visited >= total {
		return nil, false
	}
	pos := make([]uint64, ly.d)
	key := s.scr.probe
	for t := 0; t < rejectionTries || total == math.MaxUint64; t++ {
		clear(key)
		for j := range ly.d {
			pos[j] = rng.Uint64N(ly.positions(j, l))
			ly.setField(key, j, pos[j]<<ly.shift(j, l))
		}
		if !s.has(l, key) {
			return s.stateAt(rng, pos, l), true
		}
	}
	return s.sampleByRank(rng, l), true
}

// sampleByRank draws an unvisited level-l region uniformly by ranking it among
// the sorted linear indices of the visited regions (at least one region must
// be unvisited, and the total must fit in a uint64).
func (s *Store) sampleByRank(rng *rand.Rand, l int) []float64 {
	ly := s.ly
	total := ly.sp.Regions(1 << l)
	visited := s.VisitedRegions(1 << l)
	c := &s.unvCache
	if c.sorted == nil || c.level != l || c.n != int(visited) {
		c.level, c.n, c.sorted = l, int(visited), c.sorted[:0]
		if l == 0 && s.sl.on {
			s.slimKeys(func(key []uint64) bool {
				c.sorted = append(c.sorted, s.linear(key, 0))
				return true
			})
		} else {
			for j := range s.pooled {
				tb := s.table(l, j)
				for r := range tb.n {
					c.sorted = append(c.sorted, s.linear(tb.key(uint32(r)), l))
				}
			}
		}
		slices.Sort(c.sorted)
	}
	u := rng.Uint64N(total - visited)
	i := sort.Search(len(c.sorted), func(i int) bool { return c.sorted[i]-uint64(i) > u })
	x := u + uint64(i)
	pos := make([]uint64, ly.d)
	for j := ly.d - 1; j >= 0; j-- {
		m := ly.positions(j, l)
		pos[j] = x % m
		x /= m
	}
	return s.stateAt(rng, pos, l)
}

// linear is the mixed-radix index of a level-l region key (variable 0 most
// significant).
func (s *Store) linear(key []uint64, l int) uint64 {
	var x uint64
	for j := range s.ly.d {
		x = x*s.ly.positions(j, l) + s.ly.field(key, j)>>s.ly.shift(j, l)
	}
	return x
}

// stateAt draws a state uniformly among the granules of the level-l region
// with the given positions.
func (s *Store) stateAt(rng *rand.Rand, pos []uint64, l int) []float64 {
	ly := s.ly
	st := make([]float64, ly.d)
	for j, v := range ly.sp.Vars {
		g := pos[j]
		if !ly.cat[j] {
			lo := g << uint(l)
			g = lo + rng.Uint64N(min(uint64(1)<<uint(l), uint64(ly.n[j])-lo))
		}
		st[j] = v.Value(int64(g))
	}
	return st
}

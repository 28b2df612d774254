package coverage

import (
	"runtime"
	"sync"
)

// merger records visits of states in S level by level. At each level it
// computes the region keys of the visits that level must see and their
// hashes, buckets them by shard (keeping their order) and lets every shard
// insert its bucket, all shards at once. A level sees:
//
//   - at the floor and at the pool level, every visit (the floor's exact
//     set, and the counts and reservoirs of the pooled regions);
//   - elsewhere, the visits whose region was new one level below (regions
//     nest, so an old region has only old parents).
//
// Keys equal at a level hash to the same shard, and each shard takes its
// bucket in the visits' order, so the outcome (sets, counts, pools drawn from
// each shard's PRNG, and which visit found which region) is the same as one
// goroutine adding the visits in order, whatever the number of cores.
type merger struct {
	w, L int
	keys []uint64 // state key of visit i: keys[i*w:(i+1)*w]
	at   []int64
	cfg  []uint32
	src  []int32 // the batch (simulation) of visit i
	n    int     // visits
	nb   int     // batches

	news   []Levels // per batch: levels at which it found a region
	counts []uint64 // per batch and level: regions found, counts[b*(L+1)+l]
	// last is, per batch and level, the latest visit time among the
	// visits that found a region (−1: none), laid out as counts.
	last []int64
	ref  StateRef // the pooled ref of visit 0 (for Add)

	active, next []int32  // visits of the current and the next level
	rk, hs       []uint64 // region keys and hashes of the active visits
	isNew        []bool   // per active position
	refs         []uint32 // per active position at the pool level
	bucket       [][]int32

	// For a store part (parts.go): pos[i] is visit i's position in its
	// simulation's batch, and found lists the visits that found a state
	// new to the store, in visit order.
	pos   []uint32
	found []int32
	// conflict[sh] is set when an index is told a state of shard sh is
	// new that it has (one flag per shard: shards merge at once).
	conflict []bool
	// sink keeps shardLevel's touches of table slots from being
	// optimised away.
	sink []uint32
}

// parallelMin is the number of visits below which a level is merged on the
// calling goroutine: the shards' goroutines cost more than they save.
const parallelMin = 4096

func (m *merger) reset(s *Store, batches int) {
	m.w, m.L = s.ly.w, s.ly.L
	m.keys, m.at, m.cfg, m.src = m.keys[:0], m.at[:0], m.cfg[:0], m.src[:0]
	m.n, m.nb = 0, batches
	m.news = grow(m.news[:0], batches)[:batches]
	clear(m.news)
	m.counts = grow(m.counts[:0], batches*(m.L+1))[:batches*(m.L+1)]
	clear(m.counts)
	m.last = grow(m.last[:0], batches*(m.L+1))[:batches*(m.L+1)]
	for i := range m.last {
		m.last[i] = -1
	}
	if len(m.bucket) != len(s.pooled) {
		m.bucket = make([][]int32, len(s.pooled))
		m.sink = make([]uint32, len(s.pooled))
	}
}

// add queues a visit of the state with key key, at time at, by interned
// config cfg, from batch b.
func (m *merger) add(key []uint64, at int64, cfg uint32, b int) {
	m.keys = append(m.keys, key...)
	m.at = append(m.at, at)
	m.cfg = append(m.cfg, cfg)
	m.src = append(m.src, int32(b))
	m.n++
}

// run merges the queued visits into s.
func (m *merger) run(s *Store) {
	if m.n == 0 {
		return
	}
	s.visits += uint64(m.n)
	s.unvCache.n = -1
	m.active = m.active[:0]
	for i := range m.n {
		m.active = append(m.active, int32(i))
	}
	for l := s.floor; l <= m.L; l++ {
		if l == s.pool || l == s.floor {
			if len(m.active) != m.n {
				m.active = m.active[:0]
				for i := range m.n {
					m.active = append(m.active, int32(i))
				}
			}
		} else if len(m.active) == 0 {
			if l > s.pool {
				break
			}
			continue
		}
		if l == 0 && s.sl.on {
			// A slim index's states are bits of their regions at
			// k = 2 (slim.go): its parts found these new, and the
			// next level sets their bits.
			m.isNew = grow(m.isNew[:0], len(m.active))[:len(m.active)]
			for a := range m.isNew {
				m.isNew[a] = true
			}
			m.refs = m.refs[:0]
		} else {
			m.level(s, l)
		}
		m.next = m.next[:0]
		for a, i := range m.active {
			if m.isNew[a] {
				m.next = append(m.next, i)
				b := m.src[i]
				m.news[b] |= 1 << uint(l)
				j := int(b)*(m.L+1) + l
				m.counts[j]++
				m.last[j] = max(m.last[j], m.at[i])
			}
		}
		if l == s.pool && len(m.refs) > 0 {
			m.ref = makeRef(shardOf(m.hs[0], s.mask), m.refs[0])
		}
		if s.role == rolePart && l == s.pool {
			// A part keeps no region above its states: the index does.
			m.found = append(m.found[:0], m.next...)
			break
		}
		m.active, m.next = m.next, m.active
	}
	if s.floor > 0 {
		s.estValid = false
	}
}

// results fills out[b] with what batch b found in the last run: the
// regions it found at every level, when it last found one, and (added to
// what out[b] holds, the states outside S) its states new at the pool
// level.
func (m *merger) results(out []BatchResult, pool int) {
	for bi := range out {
		res := &out[bi]
		res.Found = append([]uint64(nil), m.counts[bi*(m.L+1):(bi+1)*(m.L+1)]...)
		res.LastAt = append([]int64(nil), m.last[bi*(m.L+1):(bi+1)*(m.L+1)]...)
		res.NewRegions = m.news[bi]
		res.NewStates += int(res.Found[pool])
	}
}

// runBeside runs the merge and, at once when both are large, f: the merge
// of the oor states outside S, which touch nothing the merge does (their
// own table, codec and PRNG), so each keeps its order.
func (m *merger) runBeside(s *Store, oor int, f func()) {
	if oor > 0 && m.n >= parallelMin && runtime.GOMAXPROCS(0) > 1 {
		var wg sync.WaitGroup
		wg.Go(f)
		m.run(s)
		wg.Wait()
		return
	}
	m.run(s)
	f()
}

// level inserts the active visits at level l.
func (m *merger) level(s *Store, l int) {
	na, w := len(m.active), m.w
	small := na < parallelMin
	m.rk = grow(m.rk[:0], na*w)[:na*w]
	m.hs = grow(m.hs[:0], na)[:na]
	m.isNew = grow(m.isNew[:0], na)[:na]
	if l == s.pool {
		m.refs = grow(m.refs[:0], na)[:na]
	}
	const chunk = 8192
	parallel((na+chunk-1)/chunk, small, func(c int) {
		for a := c * chunk; a < min(na, (c+1)*chunk); a++ {
			i := int(m.active[a])
			rk := m.rk[a*w : (a+1)*w]
			s.ly.regionKey(m.keys[i*w:(i+1)*w], rk, l)
			m.hs[a] = hashKey(rk)
		}
	})
	for sh := range m.bucket {
		m.bucket[sh] = m.bucket[sh][:0]
	}
	for a := range na {
		sh := shardOf(m.hs[a], s.mask)
		m.bucket[sh] = append(m.bucket[sh], int32(a))
	}
	parallel(len(m.bucket), small, func(sh int) {
		m.shardLevel(s, l, sh)
	})
}

// shardLevel inserts shard sh's bucket of the active visits at level l.
func (m *merger) shardLevel(s *Store, l, sh int) {
	w := m.w
	p := s.pooled[sh]
	var tb *table
	if l != s.pool {
		tb = &s.levels[l].t[sh]
	}
	var estBuf [8]uint64 // region key buffer for the estimated levels
	est := estBuf[:0]
	if w > len(estBuf) {
		est = make([]uint64, 0, w)
	}
	target := tb
	if target == nil {
		target = &p.st.t
	}
	// A large table's cache misses (its tags and slots, a pool's count)
	// would each stall the merge. Keys are merged touchAhead at a time,
	// each step for all of them before the next: touching their slots
	// first lets the misses of independent keys overlap, as filter does
	// for lookups. Touching changes nothing, and the steps keep every
	// key's order, so the merge is the same.
	bucket := m.bucket[sh]
	sink := uint32(0)
	for g := 0; g < len(bucket); g += touchAhead {
		group := bucket[g:min(len(bucket), g+touchAhead)]
		for _, a := range group {
			sink += target.touch(m.hs[a])
		}
		// Then, in a table larger than the caches, the keys their
		// tags point at (a key the table has: most of a store's
		// revisits, and of the regions above the pool level), and a
		// slim index's bitmap word of it, which insert and the bit
		// would each wait for in turn. In a smaller one the second
		// walk costs more than it saves.
		if target.n >= touchKeyMin {
			for _, a := range group {
				r, x, ok := target.touchKey(m.hs[a])
				sink += x
				if ok && l == 1 && s.sl.on && int(r) < s.sl.kids[sh].n {
					sink += uint32(*s.sl.kids[sh].word(r))
				}
			}
		}
		if l == s.floor && s.floor > 0 {
			buf := est[:w]
			for _, a := range group {
				i := m.active[a]
				key := m.keys[int(i)*w : (int(i)+1)*w]
				for lv := range s.floor {
					s.ly.regionKey(key, buf, lv)
					p.est[lv].insert(hashKey(buf))
				}
			}
		}
		switch {
		case l == 1 && s.sl.on:
			// A slim index: each state new to the store sets its bit
			// on its region (slim.go); a bit set already is a state
			// the index has.
			kids := &s.sl.kids[sh]
			for _, a := range group {
				var r uint32
				r, m.isNew[a] = tb.insertH(m.rk[int(a)*w:(int(a)+1)*w], m.hs[a])
				if m.isNew[a] {
					kids.push()
				}
				i := int(m.active[a])
				bit := uint64(1) << s.kidOf(m.keys[i*w:(i+1)*w])
				km := kids.word(r)
				if *km&bit != 0 {
					m.conflict[sh] = true
				}
				*km |= bit
			}
		case tb != nil:
			for _, a := range group {
				_, m.isNew[a] = tb.insertH(m.rk[int(a)*w:(int(a)+1)*w], m.hs[a])
			}
		case s.role == roleIndex:
			// The parts found these states new (AddNews checked it): the
			// index keeps their keys alone.
			for _, a := range group {
				m.refs[a], m.isNew[a] = p.st.t.insertH(m.rk[int(a)*w:(int(a)+1)*w], m.hs[a])
				if !m.isNew[a] {
					m.conflict[sh] = true
				}
			}
		default:
			// The keys first, then the counts and pools in the same
			// order (a state new in this group has its pool pushed
			// before a later visit of it is recorded).
			for _, a := range group {
				m.refs[a], m.isNew[a] = p.st.t.insertH(m.rk[int(a)*w:(int(a)+1)*w], m.hs[a])
			}
			for _, a := range group {
				if r := m.refs[a]; !m.isNew[a] && int(r) < len(p.st.count) {
					sink += p.st.count[r]
				}
			}
			for _, a := range group {
				i := m.active[a]
				p.st.addVisit(m.refs[a], m.isNew[a], p.vc.enc(m.cfg[i], m.at[i]), p.rng, &p.vc)
			}
		}
	}
	m.sink[sh] = sink
}

// touchAhead is how many inserts' slots shardLevel touches at once.
const touchAhead = 16

// touchKeyMin is the number of keys from which shardLevel touches the keys
// its inserts will compare: 2^18 keys of 5 bytes and their index are
// about 3 MB, more than a core's share of the caches.
const touchKeyMin = 1 << 18

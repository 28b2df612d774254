package coverage

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// Merge adds everything recorded in other to s, as if other's visits had been
// added to s: afterwards s has exactly the union of the visited states (in S
// and outside it) and therefore exactly the same visited regions at every k as
// one store that received all the visits (ACT's coverage counts do not depend
// on the order of visits). Visit counts add up. Pools stay bounded by s's pool
// size: for a state in both stores the merged pool is a uniform sample of the
// union of the two reservoirs, weighted by the visit counts, drawn from s's
// PRNG, so it is a deterministic function of the seeds and the operations.
// other is not modified. Both stores must have the same Space and PoolSize
// (their seeds may differ).
func (s *Store) Merge(other *Store) error {
	if other == s {
		return errors.New("coverage: merge of a store with itself")
	}
	if s.role != roleWhole || other.role != roleWhole {
		return errors.New("coverage: merge of a store part or index (join it first)")
	}
	if !s.ly.sp.Equal(other.ly.sp) {
		return errors.New("coverage: merge of stores over different spaces")
	}
	if s.opt.PoolSize != other.opt.PoolSize {
		return fmt.Errorf("coverage: merge of stores with pool sizes %d and %d", s.opt.PoolSize, other.opt.PoolSize)
	}
	// Coarsen s to other's levels first (other.floor ≤ other.pool).
	for s.pool < other.pool {
		s.coarsenPools()
		s.coarsened++
	}
	for s.floor < other.floor {
		s.raiseFloor()
		s.coarsened++
	}
	cm := make([]uint32, len(other.cfgIDs))
	for i, c := range other.cfgIDs {
		cm[i] = s.intern(c)
	}
	rk := make([]uint64, s.ly.w)
	// Exact sets: every level of other at or above s's floor.
	for l := s.floor; l <= s.ly.L; l++ {
		if l == s.pool {
			continue
		}
		for j := range other.pooled {
			tb := other.table(l, j)
			for r := range tb.n {
				k := tb.key(uint32(r))
				h := hashKey(k)
				s.levels[l].t[shardOf(h, s.mask)].insertH(k, h)
			}
		}
	}
	// Estimated levels: sketches, or other's exact keys.
	for l := range s.floor {
		dst := s.pooled[0].est[l]
		if l < other.floor {
			for _, sh := range other.pooled {
				dst.merge(sh.est[l])
			}
			continue
		}
		for j := range other.pooled {
			tb := other.table(l, j)
			for r := range tb.n {
				dst.insert(hashKey(tb.key(uint32(r))))
			}
		}
	}
	// Pools, moved up to s's pool level.
	for _, sh := range other.pooled {
		for r := range sh.st.len() {
			s.ly.regionKey(sh.st.t.key(uint32(r)), rk, s.pool)
			h := hashKey(rk)
			dst := s.pooled[shardOf(h, s.mask)]
			s.mergeState(&dst.st, &dst.vc, dst.rng, rk, h, &sh.vc, &sh.st, uint32(r), cm)
		}
	}
	for r := range other.oor.len() {
		other.oc.raw(other.oor.t.key(uint32(r)), s.oorBuf)
		s.oc.key(s.oorBuf, s.oorKey, true)
		s.mergeState(&s.oor, &s.ovc, s.rng, s.oorKey, hashKey(s.oorKey), &other.ovc, &other.oor, uint32(r), cm)
	}
	s.visits += other.visits
	s.oVisits += other.oVisits
	s.estValid = false
	s.unvCache.n = -1
	s.checkBudget()
	return nil
}

// mergeState merges state r of src (decoded with ovc) into dst under key
// (of hash h) and reports whether it was new.
func (s *Store) mergeState(dst *states, vc *visitCodec, rng *rand.Rand, key []uint64, h uint64, ovc *visitCodec, src *states, r uint32, cm []uint32) bool {
	var buf []visit
	for i := range src.poolLen(r) {
		c, at := ovc.dec(src.get(r, i))
		buf = append(buf, vc.enc(cm[c], at))
	}
	n := uint64(src.count[r])
	ref, isNew := dst.t.insertH(key, h)
	if isNew {
		dst.push(buf[0])
		dst.setPool(ref, buf, n)
		return true
	}
	na := uint64(dst.count[ref])
	s.poolBuf = dst.appendPool(s.poolBuf[:0], ref)
	out := mergeVisits(nil, s.poolBuf, na, buf, n, dst.c, rng)
	releaseDropped(vc, out, s.poolBuf, buf)
	dst.setPool(ref, out, min(na+n, math.MaxUint32))
	return false
}

package coverage

import (
	"errors"
	"fmt"
	"math"
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
	if !s.ly.sp.Equal(other.ly.sp) {
		return errors.New("coverage: merge of stores over different spaces")
	}
	if s.opt.PoolSize != other.opt.PoolSize {
		return fmt.Errorf("coverage: merge of stores with pool sizes %d and %d", s.opt.PoolSize, other.opt.PoolSize)
	}
	cm := make([]uint32, len(other.cfgIDs))
	for i, c := range other.cfgIDs {
		cm[i] = s.intern(c)
	}
	for r := range other.in.len() {
		key := other.in.t.key(uint32(r))
		if s.mergeState(&s.in, key, other, &other.in, uint32(r), cm) {
			s.addRegions(key)
		}
	}
	for r := range other.oor.len() {
		other.oc.raw(other.oor.t.key(uint32(r)), s.oorBuf)
		s.oc.key(s.oorBuf, s.oorKey, true)
		s.mergeState(&s.oor, s.oorKey, other, &other.oor, uint32(r), cm)
	}
	s.visits += other.visits
	s.oVisits += other.oVisits
	return nil
}

// mergeState merges state r of src (in store o) into dst under key and
// reports whether it was new.
func (s *Store) mergeState(dst *states, key []uint64, o *Store, src *states, r uint32, cm []uint32) bool {
	buf := s.mergeBuf[:0]
	for i := range src.poolLen(r) {
		c, at := o.vc.dec(src.get(r, i))
		buf = append(buf, s.vc.enc(cm[c], at))
	}
	n := uint64(src.count[r])
	ref, isNew := dst.t.insert(key)
	if isNew {
		dst.push(buf[0])
		dst.setPool(ref, buf, n)
	} else {
		na := uint64(dst.count[ref])
		s.poolBuf = dst.appendPool(s.poolBuf[:0], ref)
		out := mergeVisits(buf[len(buf):], s.poolBuf, na, buf, n, dst.c, s.rng)
		dst.setPool(ref, out, min(na+n, math.MaxUint32))
	}
	s.mergeBuf = buf[:0]
	return isNew
}

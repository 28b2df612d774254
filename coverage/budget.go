package coverage

import "math"

// budgetTarget is the share of the budget a coarsening brings the store down
// to, so that it does not coarsen again at the next merge.
const budgetTargetNum, budgetTargetDen = 3, 4

// checkBudget coarsens the store until its data structures fit the memory
// budget again. Two things coarsen, alternately, so that neither the pools
// nor the finest exact set lags the other by more than a factor 4 of region
// size:
//
//  1. the pools: the pooled regions move one level up (k doubles), merging
//     the counts and reservoirs of the sub-regions, which become an exact
//     key-only set;
//  2. the floor: the finest exact set is replaced by a HyperLogLog sketch of
//     its keys, which every later visit feeds.
//
// When the pools are at the top level and the floor has reached them,
// nothing is left to coarsen: the store reports OverBudget and grows.
func (s *Store) checkBudget() {
	if s.role != roleWhole || s.opt.Memory <= 0 || int64(s.Bytes()) <= s.opt.Memory {
		return
	}
	target := s.opt.Memory / budgetTargetDen * budgetTargetNum
	for int64(s.Bytes()) > target {
		switch {
		case s.pool-s.floor < 2 && s.pool < s.ly.L:
			s.coarsenPools()
		case s.floor < s.pool:
			s.raiseFloor()
		default:
			s.overBudget = true
			return
		}
		s.coarsened++
	}
	s.compactConfigs()
}

// Coarsenings is the number of coarsening steps the budget has forced.
func (s *Store) Coarsenings() int { return s.coarsened }

// coarsenPools moves the pools from level pool to pool+1: every region of
// level pool+1 (already in the level set) gets the merged count and a
// uniform sample of the union of its sub-regions' reservoirs, drawn from its
// shard's PRNG in the order of the old shards and refs, so the result is
// deterministic. The old pooled tables stay as the exact set of their
// level.
func (s *Store) coarsenPools() {
	p := s.pool
	up := p + 1
	old := s.pooled
	fresh := make([]*shard, len(old))
	for j := range fresh {
		sh := &shard{st: states{t: s.levels[up].t[j], c: s.opt.PoolSize, inl: min(s.opt.PoolSize, 2)},
			src: old[j].src, rng: old[j].rng, est: old[j].est}
		n := sh.st.t.n
		sh.st.count = make([]uint32, n)
		sh.st.one = make([]visit, n*sh.st.inl)
		if sh.st.c > sh.st.inl {
			sh.st.blk = make([]uint32, n)
		}
		fresh[j] = sh
	}
	rk := make([]uint64, s.ly.w)
	var buf, pool []visit
	for _, o := range old {
		for r := range o.st.len() {
			s.ly.regionKey(o.st.t.key(uint32(r)), rk, up)
			h := hashKey(rk)
			dst := fresh[shardOf(h, s.mask)]
			ref, ok := dst.st.t.lookupH(rk, h)
			if !ok {
				panic("coverage: pooled region without its parent region")
			}
			buf = buf[:0]
			for i := range o.st.poolLen(uint32(r)) {
				c, at := o.vc.dec(o.st.get(uint32(r), i))
				buf = append(buf, dst.vc.enc(c, at))
			}
			n := uint64(o.st.count[r])
			if dst.st.count[ref] == 0 {
				dst.st.setPool(ref, buf, n)
				continue
			}
			na := uint64(dst.st.count[ref])
			pool = dst.st.appendPool(pool[:0], ref)
			out := mergeVisits(nil, pool, na, buf, n, dst.st.c, dst.rng)
			releaseDropped(&dst.vc, out, pool, buf)
			dst.st.setPool(ref, out, min(na+n, math.MaxUint32))
		}
	}
	kept := newSSet(0, s.ly.w, s.ly.kb)
	for _, o := range old {
		kept.t = append(kept.t, o.st.t)
	}
	s.levels[p] = kept
	s.levels[up] = sset{}
	s.pooled = fresh
	s.pool = up
	s.unvCache.n = -1
}

// releaseDropped releases the escape entries of the visits of a and b that
// out no longer holds.
func releaseDropped(vc *visitCodec, out []visit, a, b []visit) {
	for _, src := range [][]visit{a, b} {
		for _, v := range src {
			if escaped(v) && !containsVisit(out, v) {
				vc.release(v)
			}
		}
	}
}

func containsVisit(vs []visit, v visit) bool {
	for _, x := range vs {
		if x == v {
			return true
		}
	}
	return false
}

// raiseFloor replaces the exact set of level floor by HyperLogLog sketches
// of its keys (one per shard; their union is the estimate) and drops it.
func (s *Store) raiseFloor() {
	f := s.floor
	for j, sh := range s.pooled {
		sk := newSketch()
		tb := &s.levels[f].t[j]
		for r := range tb.n {
			sk.insert(hashKey(tb.key(uint32(r))))
		}
		sh.est = append(sh.est, sk)
	}
	s.levels[f] = sset{}
	s.floor = f + 1
	s.estValid = false
	s.unvCache.n = -1
}

// estimate is the HyperLogLog estimate of the visited regions at level
// l < floor: the union of the shards' sketches.
func (s *Store) estimate(l int) uint64 {
	if !s.estValid || len(s.estCache) != s.floor {
		// A level has at least as many regions as the next coarser one.
		s.estCache = s.estCache[:0]
		for lv := range s.floor {
			u := newSketch()
			for _, sh := range s.pooled {
				u.merge(sh.est[lv])
			}
			s.estCache = append(s.estCache, u.estimate())
		}
		next := s.VisitedRegions(1 << s.floor) // exact
		for lv := s.floor - 1; lv >= 0; lv-- {
			s.estCache[lv] = max(s.estCache[lv], next)
			next = s.estCache[lv]
		}
		s.estValid = true
	}
	return s.estCache[l]
}

// compactConfigs drops the interned configs that no pool refers to any more
// and renumbers the rest, so the config table stays bounded by the pool
// slots rather than by the simulations ever merged.
func (s *Store) compactConfigs() {
	used := make([]bool, len(s.cfgIDs))
	mark := func(st *states, vc *visitCodec) {
		for r := range st.len() {
			for i := range st.poolLen(uint32(r)) {
				c, _ := vc.dec(st.get(uint32(r), i))
				used[c] = true
			}
		}
	}
	for _, sh := range s.pooled {
		mark(&sh.st, &sh.vc)
	}
	mark(&s.oor, &s.ovc)
	remap := make([]uint32, len(s.cfgIDs))
	var ids []uint64
	for i, u := range used {
		if u {
			remap[i] = uint32(len(ids))
			ids = append(ids, s.cfgIDs[i])
		}
	}
	if len(ids) == len(s.cfgIDs) {
		return
	}
	rewrite := func(st *states, vc *visitCodec) {
		for r := range st.len() {
			for i := range st.poolLen(uint32(r)) {
				sl := st.slot(uint32(r), i)
				if escaped(*sl) {
					e := &vc.esc[uint64(*sl)&atMask]
					e.cfg = remap[e.cfg]
					continue
				}
				c, at := vc.dec(*sl)
				*sl = vc.enc(remap[c], at)
			}
		}
	}
	for _, sh := range s.pooled {
		rewrite(&sh.st, &sh.vc)
	}
	rewrite(&s.oor, &s.ovc)
	s.cfgIDs = ids
	s.cfgIdx = make(map[uint64]uint32, len(ids))
	for i, c := range ids {
		s.cfgIdx[c] = uint32(i)
	}
	s.lastOK = false
}

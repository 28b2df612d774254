package coverage

import (
	"errors"
	"fmt"
	"math"
)

// The sections of a checkpoint's body that hold the store's sets, read by
// decoder.read in this order after the space, the options, the PRNGs and
// the configurations (codec.go): the pooled states, the region sets of the
// other levels, the cardinality sketches (in read) and the states outside S.

// readPooled reads the pooled states of every shard (the states at the
// pool level, each with its pool of visits), of nc configurations.
func (d *decoder) readPooled(s *Store, pool, nc int) error {
	ly, opt := s.ly, s.opt
	key := make([]uint64, ly.w)
	rk := make([]uint64, ly.w)
	buf := make([]visit, 0, opt.PoolSize)
	for j, sh := range s.pooled {
		n := d.count(1<<localBits, "state")
		clear(key)
		if d.skip != nil && d.skip(j) {
			d.skipPooled(n, key, opt.PoolSize)
			continue
		}
		if d.pooledKey == nil {
			sh.st.t.reserve(d.reserveFor(n, 4))
		}
		var pc, pat int64
		for range n {
			if d.err != nil {
				return d.err
			}
			d.keyDelta(key)
			cnt := d.uvarint()
			if cnt == 0 || cnt > math.MaxUint32 {
				d.fail("visit count %d", cnt)
			}
			buf = buf[:0]
			for range min(cnt, uint64(opt.PoolSize)) {
				pc += d.varint()
				pat += d.varint()
				if pc < 0 || pc >= int64(nc) {
					d.fail("config index %d out of range", pc)
					break
				}
				buf = append(buf, sh.vc.enc(uint32(pc), pat))
			}
			if d.err != nil {
				return d.err
			}
			ly.regionKey(key, rk, pool)
			h := hashKey(key)
			if !ly.validKey(key) || !equalKeys(rk, key) || shardOf(h, s.mask) != j {
				return errors.New("coverage: reading checkpoint: pooled key outside the space, its level or its shard")
			}
			if d.pooledKey != nil {
				if err := d.pooledKey(j, key); err != nil {
					return fmt.Errorf("coverage: reading checkpoint: %w", err)
				}
				continue
			}
			ref, isNew := sh.st.t.insertH(key, h)
			if !isNew {
				return errors.New("coverage: reading checkpoint: duplicate state")
			}
			if !d.keysOnly {
				sh.st.push(buf[0])
				sh.st.setPool(ref, buf, cnt)
			}
		}
	}
	return d.err
}

// readRegions reads the region sets of the levels from floor up, the pool
// level's excepted (its states are the pooled ones).
func (d *decoder) readRegions(s *Store, floor, pool int) error {
	ly := s.ly
	key := make([]uint64, ly.w)
	rk := make([]uint64, ly.w)
	for l := floor; l <= ly.L; l++ {
		if l == pool {
			continue
		}
		for j := range s.pooled {
			tb := &s.levels[l].t[j]
			n := d.count(1<<localBits, "region")
			tb.reserve(d.reserveFor(n, 1))
			clear(key)
			for range n {
				if d.err != nil {
					return d.err
				}
				d.keyDelta(key)
				ly.regionKey(key, rk, l)
				h := hashKey(key)
				if !ly.validKey(key) || !equalKeys(rk, key) || shardOf(h, s.mask) != j {
					return errors.New("coverage: reading checkpoint: region key outside the space, its level or its shard")
				}
				if _, isNew := tb.insertH(key, h); !isNew {
					return errors.New("coverage: reading checkpoint: duplicate region")
				}
			}
		}
	}
	return d.err
}

// readOutside reads the visited states outside S with their pools of
// visits: from version 4 on, delta-encoded.
func (d *decoder) readOutside(s *Store, version uint16, nc int) error {
	buf := make([]visit, 0, s.opt.PoolSize)
	n := d.count(1<<31, "state")
	s.oor.t.reserve(d.reserveFor(n, 4))
	delta := version >= 4 // granule indices, configs and times as δ
	if delta {
		clear(s.oorBuf)
	}
	var pc, pat int64
	for range n {
		if d.err != nil {
			return d.err
		}
		if delta {
			d.keyDelta(s.oorBuf)
		} else {
			for i := range s.oorBuf {
				s.oorBuf[i] = uint64(d.varint())
			}
		}
		cnt := d.uvarint()
		if cnt == 0 || cnt > math.MaxUint32 {
			d.fail("visit count %d", cnt)
		}
		buf = buf[:0]
		for range min(cnt, uint64(s.opt.PoolSize)) {
			if delta {
				pc += d.varint()
				pat += d.varint()
			} else {
				pc, pat = int64(d.uvarint()), d.varint()
			}
			if pc < 0 || pc >= int64(nc) {
				d.fail("config index %d out of range", pc)
				break
			}
			buf = append(buf, s.ovc.enc(uint32(pc), pat))
		}
		if d.err != nil {
			return d.err
		}
		s.oc.key(s.oorBuf, s.oorKey, true)
		ref, isNew := s.oor.t.insert(s.oorKey)
		if !isNew {
			return errors.New("coverage: reading checkpoint: duplicate state")
		}
		if !d.keysOnly {
			s.oor.push(buf[0])
			s.oor.setPool(ref, buf, cnt)
		}
	}
	return d.err
}

func equalKeys(a, b []uint64) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

package coverage

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
)

// Store parts and their index. A store's merge costs its owner about
// 200 ns for every visit of every simulation: the visited state's count
// and reservoir pool, one lookup in a table of millions of keys (ACT §2.4's
// pools; measured in act/cluster's BenchmarkCoordinatorRevisit). New
// regions, which the selector's queries need, grow rare as a campaign ages.
// So a store can be split into:
//
//   - parts ([NewPart]): part j of n keeps the pooled states of the shards
//     sh with sh mod n = j (their counts, pools and reservoir PRNGs; part 0
//     also keeps the states outside S) and merges every visit of them;
//   - an index ([NewIndex]): the visited regions of every level, and its
//     states as bits of their regions at k = 2 (slim.go; the keys alone
//     in a space with more than 6 variables split at k = 2), fed only
//     with the states the parts found new ([Store.AddNews]). It answers
//     every query of a store; the draw of a visit from a pool asks the
//     part that keeps the state, by its key, through a [PoolSource]
//     ([Store.Pools] asks for many states at once, one call a part).
//
// Shards are split by the hash of their keys (shard.go), each shard sees
// its keys in the order a whole store would, with the same PRNG, and the
// index receives the new states in the whole store's visit order, so
// parts and index together are exactly the whole store: the same regions,
// pools and query answers (the same states; an index's refs are its own),
// and [Join] makes the whole store (a view
// that WriteTo writes byte for byte as the whole store would). The split
// is a deployment choice that results never depend on.
//
// The flow, per group of simulations merged at once (act.Run merges 64):
// [Batch.Share] gives each part its share of every simulation's states
// with their positions; each part merges its shares ([Store.AddShares])
// and returns per simulation the states new to it ([PartNews]); the index
// merges the parts' news of the group ([Store.AddNews]) and returns what a
// whole store's AddBatches would. Shares and news have binary encodings
// whose decoders check them, because they travel between processes. A
// checkpoint of a split store ([WriteSplit]) holds the index's regions and
// the parts' encodings as they are; [ReadCheckpoint] reads it (or a whole
// store's) as the whole store, and [ReadSplit] as the index and the parts'
// encodings again, without the whole store (a resumed coordinator's).
//
// Not yet with parts: the memory budget (coarsening moves pools between
// shards, and the floor's sketches need every visit), and Store.Merge.

type role uint8

const (
	roleWhole role = iota
	rolePart
	roleIndex
)

// PoolSource answers an index's questions about pools, which its parts
// keep. A state is named by the part that keeps it and its key (the
// store's packed encoding of its granules, as [PartNews] carry it): an
// index's refs are its own.
//
// An index calls Pools for different parts at once (one goroutine each),
// so that a selection's draws cost one round trip to the parts.
type PoolSource interface {
	// Pools returns the pools of the states in S with keys keys, which
	// part part keeps, each in the part's pool order.
	Pools(part int, keys [][]uint64) ([][]Visit, error)
	// Count is the number of visits of the state in S with key key,
	// which part part keeps.
	Count(part int, key []uint64) (uint64, error)
}

// partOf is the part that owns shard sh among n parts.
func partOf(sh, n int) int { return sh % n }

// partOfKey is the part that keeps the state in S with key key.
func (s *Store) partOfKey(key []uint64) int {
	return partOf(shardOf(hashKey(key), s.mask), max(s.parts, 1))
}

func checkParts(opt Options, part, parts int) error {
	shards := opt.Shards
	if shards == 0 {
		shards = DefaultShards
	}
	if parts < 1 || parts > shards {
		return fmt.Errorf("coverage: %d store parts: want 1 to the shard count %d", parts, shards)
	}
	if part < 0 || part >= parts {
		return fmt.Errorf("coverage: store part %d of %d", part, parts)
	}
	if opt.Memory != 0 {
		return errors.New("coverage: a store split into parts has no memory budget yet")
	}
	return nil
}

// NewPart returns part part of parts of a store over space with opt (the
// whole store's options; Memory must be 0). Parts is at most the shard
// count.
func NewPart(space Space, opt Options, part, parts int) (*Store, error) {
	if err := checkParts(opt, part, parts); err != nil {
		return nil, err
	}
	s, err := NewStore(space, opt)
	if err != nil {
		return nil, err
	}
	s.role, s.part, s.parts = rolePart, part, parts
	return s, nil
}

// NewIndex returns the index of a store over space with opt split into
// parts parts; src answers its pool questions (nil: the store's pool
// methods then fail, see [Store.PoolErr]).
func NewIndex(space Space, opt Options, parts int, src PoolSource) (*Store, error) {
	if err := checkParts(opt, 0, parts); err != nil {
		return nil, err
	}
	s, err := NewStore(space, opt)
	if err != nil {
		return nil, err
	}
	s.role, s.parts, s.pools = roleIndex, parts, src
	for _, sh := range s.pooled {
		sh.st.c, sh.st.inl = 0, 0 // keys alone, unless slim
	}
	s.initSlim()
	return s, nil
}

// SetPoolSource sets the source of an index's pools.
func (s *Store) SetPoolSource(src PoolSource) { s.pools = src }

// PoolErr is the first error of an index's pool source. A query that met
// it answered a zero Visit; the caller must stop using the index's answers
// once it is set.
func (s *Store) PoolErr() error { return s.poolErr }

func (s *Store) poolFail(err error) {
	if s.poolErr == nil {
		s.poolErr = err
	}
}

// remotePools sets out[i] to the pool of refs[i], from the index's
// source: one Pools call per part that keeps some of them, the parts at
// once. An error (a pool source's, an invalid ref, an empty pool: a
// visited state has at least one visit) is the index's PoolErr.
func (s *Store) remotePools(out [][]Visit, refs []StateRef) {
	if s.pools == nil {
		s.poolFail(errors.New("coverage: index without a pool source"))
		return
	}
	n := max(s.parts, 1)
	keys, at := make([][][]uint64, n), make([][]int, n)
	for i, ref := range refs {
		key, err := s.stateKey(ref)
		if err != nil {
			s.poolFail(err)
			return
		}
		p := s.partOfKey(key)
		keys[p], at[p] = append(keys[p], key), append(at[p], i)
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for p := range n {
		if len(keys[p]) == 0 {
			continue
		}
		wg.Go(func() {
			pools, err := s.pools.Pools(p, keys[p])
			if err == nil && len(pools) != len(keys[p]) {
				err = fmt.Errorf("coverage: pool source: %d pools for %d states of part %d", len(pools), len(keys[p]), p)
			}
			for i := 0; err == nil && i < len(pools); i++ {
				if len(pools[i]) == 0 {
					err = fmt.Errorf("coverage: pool source: empty pool for state ref %#x", uint64(refs[at[p][i]]))
				}
				out[at[p][i]] = pools[i]
			}
			errs[p] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		s.poolFail(err)
	}
}

// Share fills dst (a batch over the same space) with the share of b that
// part part of parts owns in a store of the given shard count: b's states
// in S whose pooled shard the part keeps, in b's order, and for part 0
// also b's states outside S. It returns the positions of the states in S
// of dst among b's states in S, appended to pos[:0].
func (b *Batch) Share(dst *Batch, pos []uint32, part, parts, shards int) []uint32 {
	dst.Reset()
	mask := uint64(shards - 1)
	pos = pos[:0]
	for r := range b.in.n {
		k := b.in.key(uint32(r))
		if partOf(shardOf(hashKey(k), mask), parts) != part {
			continue
		}
		pos = append(pos, uint32(r))
		dst.in.append(k)
		dst.inAt = append(dst.inAt, b.inAt[r])
	}
	if part == 0 {
		for r := range b.oor.n {
			dst.oor.append(b.oor.key(uint32(r)))
			dst.oorAt = append(dst.oorAt, b.oorAt[r])
		}
	}
	dst.unindexed = true
	return pos
}

// AppendShare appends the encoding of a share (a batch filled by
// [Batch.Share]) and its positions to dst: the count and the positions'
// differences as varints, then the batch's own encoding.
func AppendShare(dst []byte, share *Batch, pos []uint32) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(pos)))
	var prev uint32
	for _, p := range pos {
		dst = binary.AppendUvarint(dst, uint64(p-prev))
		prev = p
	}
	dst, _ = share.AppendBinary(dst)
	return dst
}

// UnmarshalShare replaces b's contents with an encoded share and returns
// its positions, appended to pos[:0]. It checks the encoding (positions
// that increase, one per state in S); [Store.AddShares] checks the share
// against its part.
func (b *Batch) UnmarshalShare(data []byte, pos []uint32) ([]uint32, error) {
	n, m := binary.Uvarint(data)
	if m <= 0 || n > uint64(len(data)) {
		return nil, errors.New("coverage: share encoding: bad count")
	}
	data = data[m:]
	pos = pos[:0]
	var p uint64
	for i := range n {
		d, m := binary.Uvarint(data)
		if m <= 0 || (i > 0 && d == 0) || p+d > 1<<32-1 {
			return nil, errors.New("coverage: share encoding: bad position")
		}
		p, data = p+d, data[m:]
		pos = append(pos, uint32(p))
	}
	if err := b.UnmarshalBinary(data); err != nil {
		return nil, err
	}
	if b.in.n != len(pos) {
		return nil, fmt.Errorf("coverage: share encoding: %d positions for %d states", len(pos), b.in.n)
	}
	return pos, nil
}

// PartNews is what a part found in one simulation's share: the states new
// to the store (in the order of their positions in the simulation's
// batch, with their first visit times) and the counts the index keeps.
type PartNews struct {
	Part int
	// Pos are the positions of the new states among the simulation's
	// states in S, increasing.
	Pos  []uint32
	keys []uint64 // w words per new state
	At   []int64
	// Visits is the number of the share's states in S (one visit each).
	Visits uint64
	// OutOfRange counts, for part 0, the share's states outside S, those
	// new to the store, and those the out-of-range limit left out.
	OutOfRange, OutOfRangeNew, OutOfRangeDropped uint64
}

// AddShares merges into part s the shares of a group of simulations: bs[i]
// is simulation i's share ([Batch.Share]), pos[i] its positions, configs[i]
// its config. Every simulation of the group must be given, with an empty
// share if the part owns none of its states, so that every part interns
// the configs as the whole store does. It returns each simulation's news.
// A share with a state another part owns, positions that do not increase
// or do not match the share, or states outside S given to a part other
// than 0, is an error, and nothing is merged.
func (s *Store) AddShares(bs []*Batch, pos [][]uint32, configs []uint64) ([]PartNews, error) {
	if s.role != rolePart {
		return nil, errors.New("coverage: AddShares on a store that is not a part")
	}
	if len(bs) != len(configs) || len(pos) != len(bs) {
		return nil, errors.New("coverage: AddShares needs one share, positions and config per simulation")
	}
	for i, b := range bs {
		if err := s.checkShare(b, pos[i]); err != nil {
			return nil, fmt.Errorf("coverage: part %d, share %d: %w", s.part, i, err)
		}
	}
	m := &s.mg
	m.reset(s, len(bs))
	m.pos, m.found = m.pos[:0], m.found[:0]
	out := make([]PartNews, len(bs))
	cis := make([]uint32, len(bs))
	for bi, b := range bs {
		ci := s.intern(configs[bi])
		cis[bi] = ci
		for r := range b.in.n {
			m.add(b.in.key(uint32(r)), b.inAt[r], ci, bi)
			m.pos = append(m.pos, pos[bi][r])
		}
		out[bi] = PartNews{Part: s.part, Visits: uint64(b.in.n), OutOfRange: uint64(b.oor.n)}
	}
	// The states outside S touch nothing the others do (as in
	// AddBatches): both merges run at once.
	oorNew := make([]uint64, len(bs))
	oorDropped := make([]uint64, len(bs))
	mergeOOR := func() {
		for bi, b := range bs {
			d0 := s.oorDropped
			for r := range b.oor.n {
				if _, isNew := s.addOOR(b.oor.key(uint32(r)), s.ovc.enc(cis[bi], b.oorAt[r])); isNew {
					oorNew[bi]++
				}
			}
			oorDropped[bi] = s.oorDropped - d0
		}
	}
	oor := 0
	for _, b := range bs {
		oor += b.oor.n
	}
	m.runBeside(s, oor, mergeOOR)
	w := s.ly.w
	for _, i := range m.found {
		o := &out[m.src[i]]
		o.Pos = append(o.Pos, m.pos[i])
		o.keys = append(o.keys, m.keys[int(i)*w:(int(i)+1)*w]...)
		o.At = append(o.At, m.at[i])
	}
	for bi := range out {
		out[bi].OutOfRangeNew, out[bi].OutOfRangeDropped = oorNew[bi], oorDropped[bi]
	}
	return out, nil
}

// checkShare checks a share against the part that is to merge it.
func (s *Store) checkShare(b *Batch, pos []uint32) error {
	if b.ly != s.ly && !b.ly.sp.Equal(s.ly.sp) {
		return errors.New("over another space")
	}
	if len(pos) != b.in.n {
		return fmt.Errorf("%d positions for %d states", len(pos), b.in.n)
	}
	if b.oor.n > 0 && s.part != 0 {
		return errors.New("states outside S for a part other than 0")
	}
	for r := range b.in.n {
		if r > 0 && pos[r] <= pos[r-1] {
			return fmt.Errorf("position %d does not increase", r)
		}
		if p := partOf(shardOf(hashKey(b.in.key(uint32(r))), s.mask), s.parts); p != s.part {
			return fmt.Errorf("state %d belongs to part %d", r, p)
		}
	}
	return nil
}

// AddNews merges into index s the news of its parts for a group of
// simulations, news[i][j] being part j's for simulation i (configs[i]),
// and returns what a whole store's AddBatches would. News that are
// inconsistent (a missing or repeated part, a state the part does not own,
// two parts claiming one position) are an error, and nothing is merged. A
// state the index already has is found during the merge: the index is
// then broken, and this and every later AddNews fail.
func (s *Store) AddNews(news [][]PartNews, configs []uint64) ([]BatchResult, error) {
	if s.role != roleIndex {
		return nil, errors.New("coverage: AddNews on a store that is not an index")
	}
	if len(news) != len(configs) {
		return nil, errors.New("coverage: AddNews needs one config per simulation")
	}
	if s.broken != nil {
		return nil, s.broken
	}
	w := s.ly.w
	var perShard []int // a slim index's new states by their shard
	if s.sl.on {
		perShard = make([]int, len(s.pooled))
	}
	for i, ns := range news {
		if len(ns) != s.parts {
			return nil, fmt.Errorf("coverage: simulation %d: news of %d parts, want %d", i, len(ns), s.parts)
		}
		for j := range ns {
			n := &ns[j]
			if n.Part != j {
				return nil, fmt.Errorf("coverage: simulation %d: news %d are part %d's", i, j, n.Part)
			}
			if len(n.keys) != w*len(n.Pos) || len(n.At) != len(n.Pos) || uint64(len(n.Pos)) > n.Visits ||
				n.OutOfRangeNew+n.OutOfRangeDropped > n.OutOfRange || (j != 0 && n.OutOfRange != 0) {
				return nil, fmt.Errorf("coverage: simulation %d, part %d: inconsistent counts", i, j)
			}
			for r := range n.Pos {
				k := n.keys[r*w : (r+1)*w]
				if r > 0 && n.Pos[r] <= n.Pos[r-1] {
					return nil, fmt.Errorf("coverage: simulation %d, part %d: position %d does not increase", i, j, r)
				}
				if !s.ly.validKey(k) {
					return nil, fmt.Errorf("coverage: simulation %d, part %d: state %d is outside the space", i, j, r)
				}
				h := hashKey(k)
				sh := shardOf(h, s.mask)
				if partOf(sh, s.parts) != j {
					return nil, fmt.Errorf("coverage: simulation %d, part %d: state %d belongs to part %d", i, j, r, partOf(sh, s.parts))
				}
				if perShard != nil {
					perShard[sh]++
				}
			}
		}
	}
	m := &s.mg
	m.reset(s, len(news))
	out := make([]BatchResult, len(news))
	var visits uint64
	heads := make([]int, s.parts)
	for bi, ns := range news {
		clear(heads)
		last := int64(-1)
		for {
			// The next new state in the simulation's order: the smallest
			// head position of the parts.
			best := -1
			for j := range ns {
				if heads[j] < len(ns[j].Pos) && (best < 0 || ns[j].Pos[heads[j]] < ns[best].Pos[heads[best]]) {
					best = j
				}
			}
			if best < 0 {
				break
			}
			n, r := &ns[best], heads[best]
			if int64(n.Pos[r]) == last {
				return nil, fmt.Errorf("coverage: simulation %d: two parts claim position %d", bi, last)
			}
			last = int64(n.Pos[r])
			m.add(n.keys[r*w:(r+1)*w], n.At[r], 0, bi)
			heads[best]++
		}
	}
	// Nothing is merged before every check passed.
	for bi, ns := range news {
		s.intern(configs[bi]) // as a whole store counts its configs
		for j := range ns {
			visits += ns[j].Visits
			out[bi].NewStates += int(ns[j].OutOfRangeNew)
			s.oVisits += ns[j].OutOfRange
			s.oorNew += ns[j].OutOfRangeNew
			s.oorDropped += ns[j].OutOfRangeDropped
		}
	}
	m.conflict = make([]bool, len(s.pooled))
	m.run(s)
	if slices.Contains(m.conflict, true) {
		// Found only now (a lookup before the merge cost as much as the
		// merge): the index is no longer the parts'.
		s.broken = errors.New("coverage: a part reported as new a state the index has: the index and its parts disagree")
		return nil, s.broken
	}
	s.visits += visits - uint64(m.n)
	for sh, n := range perShard {
		s.sl.n[sh] += n
	}
	m.results(out, s.pool)
	return out, nil
}

// Parts answers an index's pool questions from parts in this process.
type Parts []*Store

// Pools implements PoolSource.
func (ps Parts) Pools(part int, keys [][]uint64) ([][]Visit, error) {
	if part < 0 || part >= len(ps) {
		return nil, fmt.Errorf("coverage: no store part %d of %d", part, len(ps))
	}
	return ps[part].KeyPools(keys)
}

// Count implements PoolSource.
func (ps Parts) Count(part int, key []uint64) (uint64, error) {
	if part < 0 || part >= len(ps) {
		return 0, fmt.Errorf("coverage: no store part %d of %d", part, len(ps))
	}
	return ps[part].KeyCount(key)
}

// KeyPools returns the pools of the states in S with keys keys (see
// [PoolSource]), which part s must keep: what an index's pool request
// asks.
func (s *Store) KeyPools(keys [][]uint64) ([][]Visit, error) {
	out := make([][]Visit, len(keys))
	for i, key := range keys {
		ref, err := s.keyRef(key)
		if err != nil {
			return nil, err
		}
		out[i] = s.AppendPool(nil, ref)
	}
	return out, nil
}

// KeyCount is the number of visits of the state in S with key key, which
// part s must keep.
func (s *Store) KeyCount(key []uint64) (uint64, error) {
	ref, err := s.keyRef(key)
	if err != nil {
		return 0, err
	}
	return s.Count(ref), nil
}

// keyRef is the ref of the state with key key in part s, checked: the key
// comes from another process.
func (s *Store) keyRef(key []uint64) (StateRef, error) {
	if s.role != rolePart {
		return 0, errors.New("coverage: a pool request by key to a store that is not a part")
	}
	if len(key) != s.ly.w || !s.ly.validKey(key) {
		return 0, fmt.Errorf("coverage: store part %d: a pool request for a key outside the space", s.part)
	}
	if j := s.partOfKey(key); j != s.part {
		return 0, fmt.Errorf("coverage: store part %d: a pool request for a state of part %d", s.part, j)
	}
	ref, ok := s.lookupPooled(key)
	if !ok {
		return 0, fmt.Errorf("coverage: store part %d: no state %#x", s.part, key)
	}
	return ref, nil
}

// validRef reports whether ref names a state of s.
func (s *Store) validRef(ref StateRef) bool {
	if ref.OutOfRange() {
		return int(ref&^oorBit) < s.oor.len()
	}
	sh, r := ref.split()
	return ref.local() && sh < len(s.pooled) && int(r) < s.pooled[sh].st.len()
}

// stateCount is the number of states of shard sh of index s.
func (s *Store) stateCount(sh int) int {
	if s.sl.on {
		return s.sl.n[sh]
	}
	return s.pooled[sh].st.len()
}

// Join returns the whole store that index and its parts (in part order)
// make: a view that shares their tables, to write (WriteTo) or report on;
// merging into it, or into index or parts while it is used, is not
// allowed. Its WriteTo writes what the whole store would have written.
func Join(index *Store, parts []*Store) (*Store, error) {
	if index.role != roleIndex || len(parts) != index.parts {
		return nil, fmt.Errorf("coverage: join: an index of %d parts and %d parts", index.parts, len(parts))
	}
	for j, p := range parts {
		for sh, x := range p.pooled {
			if partOf(sh, len(parts)) == j && x.st.len() != index.stateCount(sh) {
				return nil, fmt.Errorf("coverage: join: part %d's shard %d has %d states, the index %d", j, sh, x.st.len(), index.stateCount(sh))
			}
		}
	}
	w := &Store{ly: index.ly, opt: index.opt, mask: index.mask, pool: index.pool, floor: index.floor,
		levels: index.levels, pooled: make([]*shard, len(index.pooled)), cfgIDs: index.cfgIDs,
		visits: index.visits, oVisits: index.oVisits, oorDropped: index.oorDropped,
		keyBuf: make([]uint64, index.ly.w), oorBuf: make([]uint64, index.ly.d)}
	if err := w.adoptParts(parts); err != nil {
		return nil, fmt.Errorf("coverage: join: %w", err)
	}
	return w, nil
}

// adoptParts makes w, a whole store that holds an index's regions and
// counts (and no pooled state), the whole store of the index's parts: it
// takes their pooled shards, and part 0's states outside S, PRNG and
// configs. The parts must be w's, in part order: w's space, options and
// configs.
func (w *Store) adoptParts(parts []*Store) error {
	p0 := parts[0]
	if err := w.checkPartsOf(parts); err != nil {
		return err
	}
	for sh := range w.pooled {
		w.pooled[sh] = parts[partOf(sh, len(parts))].pooled[sh]
	}
	w.src, w.rng, w.oor, w.ovc, w.oc, w.oorLimit = p0.src, p0.rng, p0.oor, p0.ovc, p0.oc, p0.oorLimit
	w.cfgIDs, w.cfgIdx = p0.cfgIDs, p0.cfgIdx
	w.oorKey = make([]uint64, w.oc.w)
	return nil
}

// checkPartsOf checks that parts are the parts of w (an index, or a
// whole store that holds an index's regions), in part order: w's space,
// options and configs.
func (w *Store) checkPartsOf(parts []*Store) error {
	for j, p := range parts {
		switch {
		case p.role != rolePart || p.part != j || p.parts != len(parts):
			return fmt.Errorf("part %d is not part %d of %d", j, j, len(parts))
		case !p.ly.sp.Equal(w.ly.sp) || p.opt != w.opt:
			return fmt.Errorf("part %d has another space or options than the index", j)
		case !slices.Equal(p.cfgIDs, w.cfgIDs):
			return fmt.Errorf("part %d saw other simulations than the index", j)
		}
	}
	return nil
}

// Split splits whole store s (no memory budget, pools at k = 1) into an
// index and n parts that continue it exactly; s must not be used
// afterwards. The index's pool source is the parts (in this process).
func Split(s *Store, n int) (index *Store, parts []*Store, err error) {
	if s.role != roleWhole {
		return nil, nil, errors.New("coverage: split: the store is already split")
	}
	if err := checkParts(s.opt, 0, n); err != nil {
		return nil, nil, err
	}
	if s.pool != 0 || s.floor != 0 {
		return nil, nil, errors.New("coverage: split: the store has coarsened")
	}
	index, err = NewIndex(s.Space(), s.opt, n, nil)
	if err != nil {
		return nil, nil, err
	}
	index.levels = s.levels
	index.visits, index.oVisits, index.oorDropped = s.visits, s.oVisits, s.oorDropped
	index.cfgIDs, index.cfgIdx = s.cfgIDs, s.cfgIdx // the parts get copies
	index.oorNew = uint64(s.oor.len())
	if index.sl.on {
		tabs := make([]*table, len(s.pooled))
		for sh, x := range s.pooled {
			tabs[sh] = &x.st.t
		}
		if err := index.slimFromKeys(tabs); err != nil {
			return nil, nil, fmt.Errorf("coverage: split: %w", err)
		}
	} else {
		for sh, x := range s.pooled {
			t := newTable(s.ly.w, s.ly.kb)
			t.reserve(x.st.len())
			for r := range x.st.len() {
				t.insert(x.st.t.key(uint32(r)))
			}
			index.pooled[sh].st.t = t
		}
	}
	for j := range n {
		p, err := assemblePart(s, j, n, s.pooled, s)
		if err != nil {
			return nil, nil, err
		}
		parts = append(parts, p)
	}
	index.pools = Parts(parts)
	return index, parts, nil
}

// assemblePart returns part j of n of the whole store that like (a whole
// store, or an index read from a checkpoint) stands for: its space,
// options, configs and counts of visits outside S. The part takes the
// shards of pooled that it keeps, and part 0 the states outside S and
// their PRNG from oor (the whole store, or part 0 of another split).
func assemblePart(like *Store, j, n int, pooled []*shard, oor *Store) (*Store, error) {
	p, err := NewPart(like.Space(), like.opt, j, n)
	if err != nil {
		return nil, err
	}
	p.cfgIDs = slices.Clone(like.cfgIDs)
	p.cfgIdx = make(map[uint64]uint32, len(like.cfgIdx))
	for c, i := range like.cfgIdx {
		p.cfgIdx[c] = i
	}
	for sh := range p.pooled {
		if partOf(sh, n) == j {
			p.pooled[sh] = pooled[sh]
			// A part counts the visits of its states, as its merges
			// do (a count saturated at 2^32-1 counts as that).
			for _, c := range pooled[sh].st.count {
				p.visits += uint64(c)
			}
		}
	}
	if j == 0 {
		p.src, p.rng, p.oor, p.ovc, p.oc = oor.src, oor.rng, oor.oor, oor.ovc, oor.oc
		p.oVisits, p.oorLimit, p.oorDropped = like.oVisits, oor.oorLimit, like.oorDropped
		p.oorKey = make([]uint64, p.oc.w)
	}
	return p, nil
}

// ReadPart reads part part of parts, written by its WriteTo (the whole
// store's format, with only the part's shards, no region above the pooled
// states, and states outside S in part 0 only), and checks that it is one.
func ReadPart(r io.Reader, part, parts int) (*Store, error) {
	s, err := ReadStore(r)
	if err != nil {
		return nil, err
	}
	if err := s.checkPart(part, parts); err != nil {
		return nil, err
	}
	return s, nil
}

// checkPart checks that s, as read, is part part of parts, and makes it
// one.
func (s *Store) checkPart(part, parts int) error {
	if err := checkParts(s.opt, part, parts); err != nil {
		return err
	}
	if s.pool != 0 || s.floor != 0 {
		return errors.New("coverage: reading a store part: it has coarsened")
	}
	for l := 1; l < len(s.levels); l++ {
		if s.levels[l].len() != 0 {
			return fmt.Errorf("coverage: reading a store part: it has regions at k=%d", 1<<l)
		}
	}
	for sh, x := range s.pooled {
		if partOf(sh, parts) != part && x.st.len() != 0 {
			return fmt.Errorf("coverage: reading store part %d of %d: it has states of shard %d", part, parts, sh)
		}
	}
	if part != 0 && s.oor.len() != 0 {
		return fmt.Errorf("coverage: reading store part %d: it has states outside S", part)
	}
	s.role, s.part, s.parts = rolePart, part, parts
	return nil
}

// newsVersion is the first byte of encoded PartNews.
const newsVersion = 1

// AppendBinary appends the encoding of the news to buf: a version byte,
// the part, the counts, the key width in words, and per new state the
// varints of its position's, key words' and time's differences from the
// previous one's.
func (n *PartNews) AppendBinary(buf []byte) ([]byte, error) {
	buf = append(buf, newsVersion)
	for _, x := range []uint64{uint64(n.Part), n.Visits, n.OutOfRange, n.OutOfRangeNew, n.OutOfRangeDropped, uint64(len(n.Pos))} {
		buf = binary.AppendUvarint(buf, x)
	}
	if len(n.Pos) == 0 {
		return buf, nil
	}
	w := len(n.keys) / len(n.Pos)
	buf = binary.AppendUvarint(buf, uint64(w))
	prev := make([]uint64, w)
	var pp uint32
	var pat int64
	for r, p := range n.Pos {
		buf = binary.AppendUvarint(buf, uint64(p-pp))
		pp = p
		for j, x := range n.keys[r*w : (r+1)*w] {
			buf = binary.AppendVarint(buf, int64(x-prev[j]))
			prev[j] = x
		}
		buf = binary.AppendVarint(buf, n.At[r]-pat)
		pat = n.At[r]
	}
	return buf, nil
}

// UnmarshalBinary decodes news encoded by AppendBinary. It checks the
// encoding only; [Store.AddNews] checks the news against the index.
func (n *PartNews) UnmarshalBinary(data []byte) error {
	if len(data) == 0 || data[0] != newsVersion {
		return errors.New("coverage: part news: unknown version")
	}
	data = data[1:]
	var hdr [6]uint64
	for i := range hdr {
		x, m := binary.Uvarint(data)
		if m <= 0 {
			return errors.New("coverage: part news: bad header")
		}
		hdr[i], data = x, data[m:]
	}
	if hdr[0] > maxShards || hdr[5] > uint64(len(data)) {
		return errors.New("coverage: part news: bad part or count")
	}
	*n = PartNews{Part: int(hdr[0]), Visits: hdr[1], OutOfRange: hdr[2], OutOfRangeNew: hdr[3], OutOfRangeDropped: hdr[4]}
	cnt := int(hdr[5])
	if cnt == 0 {
		if len(data) != 0 {
			return errors.New("coverage: part news: trailing bytes")
		}
		return nil
	}
	w64, m := binary.Uvarint(data)
	if m <= 0 || w64 == 0 || w64 > 64 || uint64(cnt)*(w64+2) > uint64(len(data)) {
		return errors.New("coverage: part news: bad key width")
	}
	data = data[m:]
	w := int(w64)
	n.Pos = make([]uint32, 0, cnt)
	n.keys = make([]uint64, 0, cnt*w)
	n.At = make([]int64, 0, cnt)
	prev := make([]uint64, w)
	var pp uint64
	var pat int64
	for range cnt {
		d, m := binary.Uvarint(data)
		if m <= 0 || pp+d > 1<<32-1 {
			return errors.New("coverage: part news: bad position")
		}
		data, pp = data[m:], pp+d
		n.Pos = append(n.Pos, uint32(pp))
		for j := range w {
			d, m := binary.Varint(data)
			if m <= 0 {
				return errors.New("coverage: part news: bad key")
			}
			data = data[m:]
			prev[j] += uint64(d)
		}
		n.keys = append(n.keys, prev...)
		d2, m := binary.Varint(data)
		if m <= 0 {
			return errors.New("coverage: part news: bad time")
		}
		data, pat = data[m:], pat+d2
		n.At = append(n.At, pat)
	}
	if len(data) != 0 {
		return errors.New("coverage: part news: trailing bytes")
	}
	return nil
}

// splitMagic starts the checkpoint of a store split into parts
// (WriteSplit).
const (
	splitMagic   = "ACTSPL"
	splitVersion = 1
)

// WriteSplit writes the checkpoint of the store that index and its parts
// make, the parts given as their encodings (partBlobs[j]: part j's
// WriteTo); see [WriteSplitFrom].
func WriteSplit(w io.Writer, index *Store, partBlobs [][]byte) (int64, error) {
	return WriteSplitFrom(w, index, BytesSources(partBlobs))
}

// PartSource is a store part's encoding (its WriteTo), to copy without
// holding it: its size, and its bytes, read from the start at each Open. A
// reader that finds them not to be the part's (a checksum it verifies at
// the end) returns an error instead of io.EOF.
type PartSource struct {
	Size int64
	Open func() (io.ReadCloser, error)
}

// WriteSplitFrom writes the checkpoint of the store that index and its
// parts make: "ACTSPL", a version (u16), the part count, each part's
// length and bytes, copied from its source as they come, then the index's
// regions and counts in the whole store's format (WriteTo) with no pooled
// state. It decodes no part, and holds none: a coordinator with store
// parts writes its checkpoint without holding their encodings, which
// together are about the size of the whole store's. Each source must give
// exactly its Size bytes. [ReadCheckpoint] reads the whole store,
// [ReadSplit] the index and the parts' encodings.
func WriteSplitFrom(w io.Writer, index *Store, parts []PartSource) (int64, error) {
	if index.role != roleIndex || len(parts) != index.parts {
		return 0, fmt.Errorf("coverage: split checkpoint: an index of %d parts and %d parts", index.parts, len(parts))
	}
	buf := append([]byte(splitMagic), 0, 0)
	binary.LittleEndian.PutUint16(buf[len(splitMagic):], splitVersion)
	buf = binary.AppendUvarint(buf, uint64(len(parts)))
	n, err := w.Write(buf)
	total := int64(n)
	for j, p := range parts {
		if err != nil {
			return total, err
		}
		n, err = w.Write(binary.AppendUvarint(nil, uint64(p.Size)))
		total += int64(n)
		if err == nil {
			var m int64
			m, err = copyPart(w, p)
			total += m
			if err != nil {
				err = fmt.Errorf("coverage: split checkpoint: part %d: %w", j, err)
			}
		}
	}
	if err != nil {
		return total, err
	}
	// The index as a whole store without pooled states: its regions,
	// counts and configs.
	view := &Store{ly: index.ly, opt: index.opt, mask: index.mask, levels: index.levels, src: index.src, rng: index.rng,
		oc: index.oc, oor: newStates(index.oc.w, 4*index.ly.d, index.opt.PoolSize), cfgIDs: index.cfgIDs,
		visits: index.visits, oVisits: index.oVisits, oorDropped: index.oorDropped}
	for i := range index.pooled {
		view.pooled = append(view.pooled, newShard(i, index.opt.Seed, index.ly.w, index.ly.kb, index.opt.PoolSize))
	}
	m, err := view.WriteTo(w)
	return total + m, err
}

// copyPart copies p's Size bytes to w, and reads on to its end, where its
// reader checks what it gave.
//
// It writes copyChunk bytes at a time. io.CopyN would not: a checkpoint's
// w is a file behind a bufio.Writer, whose ReadFrom hands the copy to the
// file's, which writes 32 KiB at a time. In an aged campaign (parts of
// 927 MB in all), the coordinator's checkpoints over a resumed stretch
// of 5,000 simulations cost it 6.2–9.7 CPU-seconds with those writes and
// 4.0–4.4 with these (bench/results/README.md, "Checkpoints in large
// writes").
func copyPart(w io.Writer, p PartSource) (int64, error) {
	if p.Size < 0 || p.Size > maxPartBlob {
		return 0, fmt.Errorf("size %d", p.Size)
	}
	r, err := p.Open()
	if err != nil {
		return 0, err
	}
	defer r.Close()
	buf := make([]byte, min(p.Size, copyChunk))
	var n int64
	for n < p.Size {
		m, err := io.ReadFull(r, buf[:min(int64(len(buf)), p.Size-n)])
		if m > 0 {
			k, werr := w.Write(buf[:m])
			n += int64(k)
			if werr != nil {
				return n, werr
			}
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return n, fmt.Errorf("%d bytes of %d", n, p.Size)
		}
		if err != nil {
			return n, err
		}
	}
	var one [1]byte
	switch m, err := io.ReadFull(r, one[:]); {
	case m > 0:
		return n, fmt.Errorf("more than its %d bytes", p.Size)
	case err != io.EOF:
		return n, err
	}
	return n, nil
}

// copyChunk is the size of copyPart's reads and writes.
const copyChunk = 8 << 20

// maxPartBlob bounds a part's encoding in a split checkpoint.
const maxPartBlob = 1 << 40

// ReadCheckpoint reads a whole store from a checkpoint written by
// Store.WriteTo or by WriteSplit (whose parts and index it joins). It
// buffers, so it may read past the end of the checkpoint.
func ReadCheckpoint(r io.Reader) (*Store, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	n, err := readSplitHeader(br)
	if err != nil {
		return nil, err
	}
	return readWhole(br, n)
}

// readWhole reads the rest of a checkpoint whose split header said n
// parts (0: a whole store's, which has none) as the whole store.
func readWhole(br *bufio.Reader, n int) (*Store, error) {
	if n == 0 {
		return ReadStore(br)
	}
	return readSplitWhole(br, n)
}

// ReadSplit reads the checkpoint in ra's bytes [0, size) (Store.WriteTo's
// or WriteSplit's) as the index of n store parts and the parts' encodings
// (each as Store.WriteTo writes a part), for a coordinator that resumes a
// campaign with store parts. Of a split checkpoint of n parts it decodes
// the index's regions and the parts' keys, checking their counts and
// pools but keeping neither (a slim index's bits are set as the keys are
// read: indexOfParts), and returns the parts' encodings as sources
// that read them from ra when opened: the caller never holds the whole
// store, which a store split into parts may not fit in one process, nor
// the parts' encodings. A split checkpoint of another part count is read
// the same way, then split again one new part at a time (resplit): the
// caller holds the new parts' encodings, never the whole store. A whole
// store's checkpoint is read whole and split (Split), and its parts
// encoded in memory. Either way the index and parts are those Split makes
// of the store ReadCheckpoint reads; the index has no pool source yet. ra
// must stay readable, and unchanged, until the sources have been read.
func ReadSplit(ra io.ReaderAt, size int64, n int) (index *Store, parts []PartSource, err error) {
	index, parts, _, err = ReadSplitIn(ra, size, n, "")
	return index, parts, err
}

// ResplitPattern is the pattern of the names of the files ReadSplitIn
// writes (filepath.Match's and os.CreateTemp's).
const ResplitPattern = ".resplit-*"

// ReadSplitIn is [ReadSplit], except that the parts it makes again from a
// split checkpoint of another part count are written to files in dir
// (hidden, named by ResplitPattern), so that the caller holds neither the
// whole store nor those parts' encodings. remove deletes the files once
// the sources have been read; it is never nil without an error. With dir
// "", the parts are encoded in memory, as ReadSplit's.
func ReadSplitIn(ra io.ReaderAt, size int64, n int, dir string) (index *Store, parts []PartSource, remove func(), err error) {
	var files []string
	remove = func() {
		for _, f := range files {
			os.Remove(f)
		}
	}
	index, parts, err = readSplitPut(ra, size, n, func(i int, p *Store) (PartSource, error) {
		if dir == "" {
			var buf bytes.Buffer
			if _, err := p.WriteTo(&buf); err != nil {
				return PartSource{}, err
			}
			return BytesSources([][]byte{buf.Bytes()})[0], nil
		}
		f, err := os.CreateTemp(dir, ResplitPattern)
		if err != nil {
			return PartSource{}, err
		}
		files = append(files, f.Name())
		sz, err := p.WriteTo(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return PartSource{}, err
		}
		name := f.Name()
		return PartSource{Size: sz, Open: func() (io.ReadCloser, error) { return os.Open(name) }}, nil
	})
	if err != nil {
		remove()
		return nil, nil, nil, err
	}
	return index, parts, remove, nil
}

// readSplitPut is ReadSplitIn, with put to keep the parts a re-split makes.
func readSplitPut(ra io.ReaderAt, size int64, n int, put func(i int, p *Store) (PartSource, error)) (index *Store, parts []PartSource, err error) {
	sr := io.NewSectionReader(ra, 0, size)
	br := bufio.NewReaderSize(sr, 1<<16)
	// at is the offset in ra of br's next byte.
	at := func() int64 {
		pos, _ := sr.Seek(0, io.SeekCurrent)
		return pos - int64(br.Buffered())
	}
	m, err := readSplitHeader(br)
	if err != nil {
		return nil, nil, err
	}
	if m == 0 {
		whole, err := readWhole(br, m)
		if err != nil {
			return nil, nil, err
		}
		index, blobs, err := SplitEncoded(whole, n)
		if err != nil {
			return nil, nil, err
		}
		return index, BytesSources(blobs), nil
	}
	parts = make([]PartSource, m)
	for j := range m {
		sz, err := readPartSize(br, j)
		if err != nil {
			return nil, nil, err
		}
		off := at()
		if off+sz > size {
			return nil, nil, fmt.Errorf("coverage: reading a split checkpoint: part %d: truncated", j)
		}
		parts[j] = PartSource{Size: sz, Open: func() (io.ReadCloser, error) {
			return io.NopCloser(io.NewSectionReader(ra, off, sz)), nil
		}}
		if _, err := sr.Seek(off+sz, io.SeekStart); err != nil {
			return nil, nil, err
		}
		br.Reset(sr)
	}
	index, err = indexOfParts(br, parts, n)
	if err != nil {
		return nil, nil, err
	}
	if m == n {
		return index, parts, nil
	}
	parts, err = resplit(index, parts, m, n, put)
	if err != nil {
		return nil, nil, fmt.Errorf("coverage: reading a split checkpoint of %d parts as %d: %w", m, n, err)
	}
	return index, parts, nil
}

// resplit makes the encodings of the n parts of the store that index
// stands for from the encodings of its m parts (another split of it;
// their keys are checked), as Split would make them from the whole
// store: a shard moves whole from the part that keeps it among m to the
// one that keeps it among n. It holds one new part at a time: for each,
// it reads the old parts that keep some of its shards, skipping their
// other shards, so that a coordinator resumed with another part count
// never holds the whole store. put keeps each new part's encoding.
func resplit(index *Store, old []PartSource, m, n int, put func(i int, p *Store) (PartSource, error)) ([]PartSource, error) {
	parts := make([]PartSource, n)
	for i := range n {
		pooled := make([]*shard, len(index.pooled))
		var oor *Store // old part 0, for new part 0's states outside S
		for j := range m {
			needed := i == 0 && j == 0
			for sh := range pooled {
				needed = needed || partOf(sh, n) == i && partOf(sh, m) == j
			}
			if !needed {
				continue
			}
			p, err := readPartSkipping(old[j], j, m, func(sh int) bool { return partOf(sh, n) != i })
			if err != nil {
				return nil, fmt.Errorf("part %d: %w", j, err)
			}
			for sh := range pooled {
				if partOf(sh, n) == i && partOf(sh, m) == j {
					pooled[sh] = p.pooled[sh]
				}
			}
			if j == 0 {
				oor = p
			}
		}
		p, err := assemblePart(index, i, n, pooled, oor)
		if err != nil {
			return nil, err
		}
		if parts[i], err = put(i, p); err != nil {
			return nil, fmt.Errorf("encoding store part %d: %w", i, err)
		}
	}
	return parts, nil
}

// readPartSkipping reads part j of m from src, without the states of the
// shards skip names.
func readPartSkipping(src PartSource, j, m int, skip func(sh int) bool) (*Store, error) {
	rc, err := src.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	d := newDecoder(rc)
	d.skip, d.limit = skip, max(src.Size, 1)
	p, err := d.read()
	if err != nil {
		return nil, err
	}
	if err := p.checkPart(j, m); err != nil {
		return nil, err
	}
	return p, nil
}

// BytesSources returns parts' encodings as sources.
func BytesSources(blobs [][]byte) []PartSource {
	srcs := make([]PartSource, len(blobs))
	for j, b := range blobs {
		srcs[j] = PartSource{Size: int64(len(b)), Open: func() (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(b)), nil
		}}
	}
	return srcs
}

// SplitEncoded splits whole store s as Split does, and returns the parts'
// encodings (Store.WriteTo) instead of the parts; the index has no pool
// source. s must not be used afterwards.
func SplitEncoded(s *Store, n int) (index *Store, parts [][]byte, err error) {
	index, ps, err := Split(s, n)
	if err != nil {
		return nil, nil, err
	}
	parts = make([][]byte, n)
	for j, p := range ps {
		var buf bytes.Buffer
		if _, err := p.WriteTo(&buf); err != nil {
			return nil, nil, fmt.Errorf("coverage: encoding store part %d: %w", j, err)
		}
		parts[j], ps[j] = buf.Bytes(), nil
	}
	index.pools = nil
	return index, parts, nil
}

// readSplitHeader reads the header of a split checkpoint and returns its
// part count, or 0, reading nothing, when the checkpoint is a whole
// store's.
func readSplitHeader(br *bufio.Reader) (int, error) {
	head, err := br.Peek(len(splitMagic))
	if err != nil || string(head) != splitMagic {
		return 0, nil
	}
	var hdr [len(splitMagic) + 2]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return 0, fmt.Errorf("coverage: reading a split checkpoint: %w", err)
	}
	if v := binary.LittleEndian.Uint16(hdr[len(splitMagic):]); v != splitVersion {
		return 0, fmt.Errorf("coverage: split checkpoint version %d, want %d", v, splitVersion)
	}
	n, err := binary.ReadUvarint(br)
	if err != nil || n < 1 || n > maxShards {
		return 0, errors.New("coverage: reading a split checkpoint: bad part count")
	}
	return int(n), nil
}

// readPartSize reads the length of part j's encoding.
func readPartSize(br *bufio.Reader, j int) (int64, error) {
	size, err := binary.ReadUvarint(br)
	if err != nil || size > maxPartBlob {
		return 0, fmt.Errorf("coverage: reading a split checkpoint: part %d: bad length", j)
	}
	return int64(size), nil
}

// readSplitWhole reads the rest of a split checkpoint of n parts as the
// whole store.
func readSplitWhole(br *bufio.Reader, n int) (*Store, error) {
	parts := make([]*Store, n)
	for j := range parts {
		size, err := readPartSize(br, j)
		if err != nil {
			return nil, err
		}
		lr := io.LimitReader(br, size)
		if parts[j], err = ReadPart(lr, j, n); err != nil {
			return nil, fmt.Errorf("coverage: reading a split checkpoint: part %d: %w", j, err)
		}
		if _, err := io.Copy(io.Discard, lr); err != nil {
			return nil, fmt.Errorf("coverage: reading a split checkpoint: part %d: %w", j, err)
		}
	}
	w, err := readSplitView(br)
	if err != nil {
		return nil, err
	}
	if err := w.adoptParts(parts); err != nil {
		return nil, fmt.Errorf("coverage: reading a split checkpoint: %w", err)
	}
	if err := w.checkPooledRegions(); err != nil {
		return nil, err
	}
	return w, nil
}

// readSplitView reads the index's part of a split checkpoint: a whole
// store with no pooled state.
func readSplitView(br *bufio.Reader) (*Store, error) {
	w, err := ReadStore(br)
	if err != nil {
		return nil, fmt.Errorf("coverage: reading a split checkpoint: the index: %w", err)
	}
	if w.pool != 0 || w.floor != 0 {
		return nil, errors.New("coverage: reading a split checkpoint: the index has coarsened")
	}
	return w, nil
}

// indexOfParts reads the index's part of a split checkpoint (br, after
// the parts) and makes the index of n parts Split would make, with the
// pooled keys of the checkpoint's parts, read from parts as keys alone.
//
// A slim index needs the parts' keys only to set its bits: each part's
// decoder hands them to a slimLoader as it reads them, the parts at once
// on every core, so that they are never held. Held in tables, as they
// were, they cost a resumed coordinator of the aged bench campaign most
// of its loading's CPU (their inserts) and the top of its memory
// (bench/results/README.md, "A resume that does not hold the parts'
// keys").
func indexOfParts(br *bufio.Reader, parts []PartSource, n int) (*Store, error) {
	m := len(parts)
	view, err := readSplitView(br)
	if err != nil {
		return nil, err
	}
	index, err := NewIndex(view.Space(), view.opt, n, nil)
	if err != nil {
		return nil, fmt.Errorf("coverage: reading a split checkpoint: %w", err)
	}
	index.levels = view.levels
	index.visits, index.oVisits, index.oorDropped = view.visits, view.oVisits, view.oorDropped
	index.cfgIDs, index.cfgIdx = view.cfgIDs, view.cfgIdx
	var loaders []*slimLoader
	if index.sl.on {
		index.slimClear()
		loaders = make([]*slimLoader, m)
		for j := range loaders {
			loaders[j] = index.newSlimLoader(j, m)
		}
	}
	keys := make([]*Store, m) // each part's states as keys alone (none for a slim index)
	bad := make([]error, m)
	parallel(m, !index.sl.on, func(j int) {
		rc, err := parts[j].Open()
		if err != nil {
			bad[j] = fmt.Errorf("coverage: reading a split checkpoint: part %d: %w", j, err)
			return
		}
		defer rc.Close()
		d := newDecoder(rc)
		d.keysOnly, d.limit = true, max(parts[j].Size, 1)
		if loaders != nil {
			d.pooledKey = loaders[j].add
		}
		if keys[j], err = d.read(); err == nil && loaders != nil {
			err = loaders[j].flush()
		}
		if err == nil {
			err = keys[j].checkPart(j, m)
		}
		if err != nil {
			bad[j] = fmt.Errorf("coverage: reading a split checkpoint: part %d: %w", j, err)
		}
	})
	if err := errors.Join(bad...); err != nil {
		return nil, err
	}
	if err := view.checkPartsOf(keys); err != nil {
		return nil, fmt.Errorf("coverage: reading a split checkpoint: %w", err)
	}
	index.oorNew = uint64(keys[0].oor.len())
	if index.sl.on {
		counts := make([][]int, m)
		for j, ld := range loaders {
			counts[j] = ld.n
		}
		if err := index.slimDone(counts); err != nil {
			return nil, fmt.Errorf("coverage: reading a split checkpoint: %w", err)
		}
		return index, nil
	}
	for sh := range index.pooled {
		index.pooled[sh].st.t = keys[partOf(sh, m)].pooled[sh].st.t
	}
	if err := index.checkPooledRegions(); err != nil {
		return nil, err
	}
	return index, nil
}

// checkPooledRegions checks that every region at k = 2 holds a pooled
// state, and every pooled state's region is there: that the index's
// regions and the parts' states, read from a split checkpoint, are of one
// store.
//
// It looks up every pooled state's region: tens of millions of lookups in
// tables larger than the caches in an aged campaign. So the shards are
// checked on every core, and each shard's regions touchAhead at a time,
// touching their slots first so that the cache misses overlap (as
// merger.shardLevel does).
func (w *Store) checkPooledRegions() error {
	if len(w.levels) < 2 {
		return nil
	}
	missing := make([]bool, len(w.pooled))
	sinks := make([]uint32, len(w.pooled)) // keeps the touches
	parallel(len(w.pooled), false, func(sh int) {
		st := &w.pooled[sh].st
		var rks [touchAhead][]uint64
		var hs [touchAhead]uint64
		var tbs [touchAhead]*table
		for i := range rks {
			rks[i] = make([]uint64, w.ly.w)
		}
		var sink uint32
		for g := 0; g < st.len(); g += touchAhead {
			n := min(touchAhead, st.len()-g)
			for i := range n {
				w.ly.regionKey(st.t.key(uint32(g+i)), rks[i], 1)
				hs[i] = hashKey(rks[i])
				tbs[i] = w.table(1, shardOf(hs[i], w.mask))
				sink += tbs[i].touch(hs[i])
			}
			for i := range n {
				if !tbs[i].lookupHashed(rks[i], hs[i]) {
					missing[sh] = true
					return
				}
			}
		}
		sinks[sh] = sink
	})
	if slices.Contains(missing, true) {
		return errors.New("coverage: reading a split checkpoint: a part's state has no region in the index")
	}
	pooled := 0
	for _, sh := range w.pooled {
		pooled += sh.st.len()
	}
	if pooled < int(w.levels[1].len()) {
		return errors.New("coverage: reading a split checkpoint: the index has regions without states in the parts")
	}
	return nil
}

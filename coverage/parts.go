package coverage

import (
	"errors"
	"fmt"
	"io"
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

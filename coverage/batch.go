package coverage

// Batch collects the distinct states visited by one simulation with the time
// of their first visit. A worker fills it without touching the Store (Observe
// only reads the Space), and [Store.AddBatch] then records each state once for
// that simulation, so pools hold distinct simulations rather than many visits
// of the same one. A Batch is not safe for concurrent use; give each worker
// its own and Reset it between simulations.
type Batch struct {
	// ly is immutable and may be the store's, read by other goroutines:
	// a snapshot shares it.
	ly    *layout `snapshot:"shared"`
	in    table
	inAt  []int64
	oor   table
	oorAt []int64
	key   []uint64
	okey  []uint64
	// unindexed: the tables hold decoded keys without their hash index
	// (UnmarshalBinary); Observe builds it first.
	unindexed bool
	seen      keySet // decoding scratch: the duplicate check
}

// NewBatch returns an empty batch over space.
func NewBatch(space Space) (*Batch, error) {
	ly, err := newLayout(space)
	if err != nil {
		return nil, err
	}
	return newBatch(ly), nil
}

// NewBatch returns an empty batch over the store's space.
func (s *Store) NewBatch() *Batch { return newBatch(s.ly) }

func newBatch(ly *layout) *Batch {
	return &Batch{ly: ly, in: newTable(ly.w, ly.kb), oor: newTable(ly.d, 8*ly.d),
		key: make([]uint64, ly.w), okey: make([]uint64, ly.d)}
}

// Observe records that the simulation visited state at time at (ns). It
// reports whether the state is new to the batch; a repeated state keeps its
// first visit time, the t_n of ACT §2.5. It panics if len(state) differs from
// the number of variables.
func (b *Batch) Observe(state []float64, at int64) bool {
	if b.unindexed {
		b.in.rehash(max(16, b.in.n*maxLoadDen/maxLoadNum*9/8))
		b.oor.rehash(max(16, b.oor.n*maxLoadDen/maxLoadNum*9/8))
		b.unindexed = false
	}
	if b.ly.encode(state, b.key) {
		_, isNew := b.in.insert(b.key)
		if isNew {
			b.inAt = append(b.inAt, at)
		}
		return isNew
	}
	b.ly.encodeOOR(state, b.okey)
	_, isNew := b.oor.insert(b.okey)
	if isNew {
		b.oorAt = append(b.oorAt, at)
	}
	return isNew
}

// Bytes is the memory the batch holds, at the size of the largest
// simulation it has held since it was made (Reset keeps the memory).
func (b *Batch) Bytes() int {
	return b.in.keyCap() + cap(b.in.tags) + 4*cap(b.in.slots) + 8*cap(b.inAt) +
		b.oor.keyCap() + cap(b.oor.tags) + 4*cap(b.oor.slots) + 8*cap(b.oorAt)
}

// Len is the number of distinct states observed.
func (b *Batch) Len() int { return b.in.n + b.oor.n }

// Reset empties the batch, keeping its memory.
func (b *Batch) Reset() {
	b.in.reset()
	b.oor.reset()
	b.inAt, b.oorAt = b.inAt[:0], b.oorAt[:0]
	b.unindexed = false
}

// AddBatch records one visit by simulation config of every state in b, at its
// first visit time. It returns the number of states new to the store and the
// union of the region sizes at which some state found a new region. The
// batch must be over the same space as the store.
func (s *Store) AddBatch(b *Batch, config uint64) (newStates int, newRegions Levels) {
	r := s.AddBatches([]*Batch{b}, []uint64{config})
	return r[0].NewStates, r[0].NewRegions
}

// BatchResult is what one batch of [Store.AddBatches] found.
type BatchResult struct {
	NewStates  int    // states (or, after coarsening, pooled regions) new to the store
	NewRegions Levels // region sizes at which it found a new region (exact levels)
	// Found[l] is the number of regions at k = 2^l that this batch visited
	// first (0 below the exact floor).
	Found []uint64
	// LastAt[l] is the latest first-visit time (ns) among this batch's
	// states that found a region at k = 2^l, −1 when none did: the last
	// moment the simulation went where no earlier one had (ACT's symbolic
	// step ends its window there).
	LastAt []int64
}

// AddBatches records the batches as if AddBatch were called for each in
// order with its config, and returns what each found; the merge runs on all
// cores (see merger) with exactly the sequential outcome. It then enforces
// the memory budget.
func (s *Store) AddBatches(bs []*Batch, configs []uint64) []BatchResult {
	if len(bs) != len(configs) {
		panic("coverage: AddBatches needs one config per batch")
	}
	if s.role != roleWhole {
		panic("coverage: AddBatches on a store part or index (use AddShares and AddNews)")
	}
	m := &s.mg
	m.reset(s, len(bs))
	out := make([]BatchResult, len(bs))
	cis := make([]uint32, len(bs))
	oor := 0
	for bi, b := range bs {
		if b.ly != s.ly && !b.ly.sp.Equal(s.ly.sp) {
			panic("coverage: batch and store have different spaces")
		}
		ci := s.intern(configs[bi])
		cis[bi] = ci
		for r := range b.in.n {
			m.add(b.in.key(uint32(r)), b.inAt[r], ci, bi)
		}
		oor += b.oor.n
	}
	// The states outside S touch nothing the merge of those inside does
	// (their own table, codec and PRNG), so each keeps its order and
	// both run at once.
	mergeOOR := func() {
		for bi, b := range bs {
			for r := range b.oor.n {
				if _, isNew := s.addOOR(b.oor.key(uint32(r)), s.ovc.enc(cis[bi], b.oorAt[r])); isNew {
					out[bi].NewStates++
				}
			}
		}
	}
	m.runBeside(s, oor, mergeOOR)
	m.results(out, s.pool)
	s.checkBudget()
	return out
}

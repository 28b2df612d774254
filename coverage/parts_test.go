package coverage

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
)

// splitStore is a store split into an index and parts, fed as processes would
// feed them: every share and every news through its binary encoding.
type splitStore struct {
	index *Store
	parts []*Store
	opt   Options
	share *Batch
	pos   []uint32
}

func newSplit(t testing.TB, sp Space, opt Options, n int) *splitStore {
	x := &splitStore{opt: opt}
	for j := range n {
		p, err := NewPart(sp, opt, j, n)
		if err != nil {
			t.Fatal(err)
		}
		x.parts = append(x.parts, p)
	}
	idx, err := NewIndex(sp, opt, n, Parts(x.parts))
	if err != nil {
		t.Fatal(err)
	}
	x.index = idx
	x.share = idx.NewBatch()
	return x
}

// add merges a group of simulations as AddBatches would.
func (x *splitStore) add(t testing.TB, bs []*Batch, ids []uint64) []BatchResult {
	shards := x.index.Options().Shards
	news := make([][]PartNews, len(bs))
	for j, p := range x.parts {
		shares := make([]*Batch, len(bs))
		pos := make([][]uint32, len(bs))
		for i, b := range bs {
			x.pos = b.Share(x.share, x.pos, j, len(x.parts), shards)
			enc := AppendShare(nil, x.share, x.pos)
			shares[i] = p.NewBatch()
			var err error
			if pos[i], err = shares[i].UnmarshalShare(enc, nil); err != nil {
				t.Fatal(err)
			}
		}
		got, err := p.AddShares(shares, pos, ids)
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			enc, _ := got[i].AppendBinary(nil)
			var dec PartNews
			if err := dec.UnmarshalBinary(enc); err != nil {
				t.Fatal(err)
			}
			news[i] = append(news[i], dec)
		}
	}
	res, err := x.index.AddNews(news, ids)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// sameQueries asks whole and index the selector's questions with equal
// PRNGs and fails on the first answer that differs.
func sameQueries(t *testing.T, whole, index *Store, seed uint64) (found int) {
	t.Helper()
	rw, ri := rand.New(rand.NewPCG(seed, 1)), rand.New(rand.NewPCG(seed, 1))
	for q := range 40 {
		sw, okw := whole.SampleUnvisited(rw, 1)
		si, oki := index.SampleUnvisited(ri, 1)
		if okw != oki || !reflect.DeepEqual(sw, si) {
			t.Fatalf("query %d: SampleUnvisited %v %v, index %v %v", q, sw, okw, si, oki)
		}
		if !okw {
			return
		}
		ew, okw := whole.SearchEstimation(rw, sw)
		ei, oki := index.SearchEstimation(ri, si)
		if okw != oki || !reflect.DeepEqual(estimationStates(whole, ew), estimationStates(index, ei)) {
			t.Fatalf("query %d: SearchEstimation %+v %v, index %+v %v", q, ew, okw, ei, oki)
		}
		if okw {
			found++
		}
		if okw && ew.Interpolate {
			vw, vi := whole.RandomVisit(rw, ew.Bracket.A), index.RandomVisit(ri, ei.Bracket.A)
			if vw != vi {
				t.Fatalf("query %d: RandomVisit %+v, index %+v", q, vw, vi)
			}
			if cw, ci := whole.Count(ew.Bracket.B), index.Count(ei.Bracket.B); cw != ci {
				t.Fatalf("query %d: Count %d, index %d", q, cw, ci)
			}
		}
		kw, nw, okw := whole.SearchConcatenation(rw, sw)
		ki, ni, oki := index.SearchConcatenation(ri, si)
		if okw != oki || kw != ki || !reflect.DeepEqual(neighbourState(whole, nw, okw), neighbourState(index, ni, oki)) {
			t.Fatalf("query %d: SearchConcatenation %d %+v %v, index %d %+v %v", q, kw, nw, okw, ki, ni, oki)
		}
		if okw && !reflect.DeepEqual(whole.State(nw.Ref), index.State(ni.Ref)) {
			t.Fatalf("query %d: State differs", q)
		}
		if okw {
			// The pools of the states found, read at once (an index
			// asks each part for its states').
			refw, refi := []StateRef{nw.Ref}, []StateRef{ni.Ref}
			if ew.Interpolate {
				refw = append(refw, ew.Bracket.A, ew.Bracket.B, ew.Bracket.A)
				refi = append(refi, ei.Bracket.A, ei.Bracket.B, ei.Bracket.A)
			}
			if pw, pi := whole.Pools(refw), index.Pools(refi); !reflect.DeepEqual(pw, pi) {
				t.Fatalf("query %d: Pools %v, index %v", q, pw, pi)
			}
		}
		if okw {
			found++
		}
	}
	if err := index.PoolErr(); err != nil {
		t.Fatal(err)
	}
	return found
}

// stateOf is the state of ref, or nil for the zero ref of an answer that
// has none. An index's refs are its own (slim.go): answers are compared by
// the states they name.
func stateOf(s *Store, ref StateRef, set bool) []float64 {
	if !set {
		return nil
	}
	return s.State(ref)
}

// estimationStates is est with its refs as states.
func estimationStates(s *Store, est Estimation) any {
	return []any{est.K, est.Interpolate, stateOf(s, est.Bracket.A, est.Interpolate), stateOf(s, est.Bracket.B, est.Interpolate),
		est.Bracket.Var, neighbourState(s, est.Neighbour, !est.Interpolate)}
}

// neighbourState is nb, if set, with its ref as a state.
func neighbourState(s *Store, nb Neighbour, set bool) any {
	return []any{stateOf(s, nb.Ref, set), nb.Var, nb.Visit}
}

func checkpoint(t testing.TB, s *Store) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := s.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestPartsEqualWhole: a store split into an index and parts, fed through
// the encodings processes use, is the whole store: the same results of
// every merge, the same query answers for equal PRNGs, the same counts,
// and a Join that writes the whole store's checkpoint byte for byte; a
// whole store Split halfway goes on exactly as well.
func TestPartsEqualWhole(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		parts, shards, pool  int
		oorLimit, splitAfter int
		// wide adds numerical variables: with more than maxSlimVars
		// split at k = 2, the index keeps its states' keys.
		wide int
	}{
		{"1 part", 1, 16, 2, 0, 0, 0},
		{"2 parts", 2, 16, 2, 0, 0, 0},
		{"3 parts, pool 5", 3, 16, 5, 0, 0, 0},
		{"4 parts of 4 shards", 4, 4, 2, 50, 0, 0},
		{"5 parts, split at 30", 5, 16, 3, 40, 30, 0},
		{"2 parts, 6 split variables", 2, 16, 2, 0, 0, 2},
		{"3 parts, 7 split variables (keys)", 3, 16, 2, 0, 0, 3},
		{"2 parts, 7 split variables, split at 30 (keys)", 2, 16, 2, 0, 30, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := DefaultSpace()
			for v := range tc.wide {
				sp = sp.With(Var{Name: fmt.Sprintf("x%d", v), Min: 0, Max: 7, Step: 1})
			}
			widen := func(st []float64) []float64 {
				// Values that follow the state, so that the wide
				// space is explored as the narrow one.
				for v := range tc.wide {
					st = append(st, float64(int(st[v])%8))
				}
				return st
			}
			opt := Options{Seed: 9, Shards: tc.shards, PoolSize: tc.pool}
			whole := mustStore(t, sp, opt)
			whole.LimitOutOfRange(tc.oorLimit)
			var x *splitStore
			var other *Store // the whole store that is split halfway
			if tc.splitAfter == 0 {
				x = newSplit(t, sp, opt, tc.parts)
				x.parts[0].LimitOutOfRange(tc.oorLimit)
			} else {
				other = mustStore(t, sp, opt)
				other.LimitOutOfRange(tc.oorLimit)
			}
			rng := rand.New(rand.NewPCG(3, uint64(tc.parts)))
			sim, found := 0, 0
			for g := 0; sim < 80; g++ {
				n := 1 + rng.IntN(12)
				var bs []*Batch
				var ids []uint64
				for range n {
					b := whole.NewBatch()
					synthSim(rng, 50+rng.IntN(600), func(st []float64, at int64) { b.Observe(widen(st), at) })
					bs, ids = append(bs, b), append(ids, uint64(1000+sim))
					sim++
				}
				want := whole.AddBatches(bs, ids)
				var got []BatchResult
				if x == nil {
					got = other.AddBatches(bs, ids)
					if sim >= tc.splitAfter {
						idx, ps, err := Split(other, tc.parts)
						if err != nil {
							t.Fatal(err)
						}
						x = &splitStore{index: idx, parts: ps, opt: opt, share: idx.NewBatch()}
						other = nil
					}
				} else {
					got = x.add(t, bs, ids)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("group %d: %+v, whole %+v", g, got, want)
				}
				if g%3 == 0 && x != nil {
					found += sameQueries(t, whole, x.index, uint64(g))
				}
			}
			if found < 20 {
				t.Fatalf("only %d queries found something", found)
			}
			if slim := tc.wide+4 <= maxSlimVars; x.index.sl.on != slim {
				t.Fatalf("the index keeps its states as bits: %v, want %v", x.index.sl.on, slim)
			}
			if whole.Len() < 2000 || whole.Visits() < 5000 {
				t.Fatalf("only %d states, %d visits: the test says little", whole.Len(), whole.Visits())
			}
			for k := 1; k <= whole.Space().MaxK(); k *= 2 {
				if a, b := x.index.VisitedRegions(k), whole.VisitedRegions(k); a != b {
					t.Fatalf("k=%d: index %d regions, whole %d", k, a, b)
				}
			}
			if x.index.Visits() != whole.Visits() || x.index.Len() != whole.Len() {
				t.Fatalf("visits %d, states %d; whole %d, %d", x.index.Visits(), x.index.Len(), whole.Visits(), whole.Len())
			}
			si, vi := x.index.OutOfRange()
			sw, vw := whole.OutOfRange()
			if si != sw || vi != vw || x.index.OutOfRangeDropped() != whole.OutOfRangeDropped() {
				t.Fatalf("out of range %d/%d dropped %d, whole %d/%d dropped %d", si, vi, x.index.OutOfRangeDropped(), sw, vw, whole.OutOfRangeDropped())
			}
			// A split checkpoint, written without decoding the parts,
			// reads as the whole store.
			blobs := partBlobs(t, x)
			var split bytes.Buffer
			split.Write(writeSplit(t, x.index, blobs))
			read, err := ReadCheckpoint(bytes.NewReader(split.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(checkpoint(t, read), checkpoint(t, whole)) {
				t.Fatal("the split checkpoint does not read as the whole store")
			}
			if len(blobs) > 1 {
				swapped := append([][]byte{blobs[1], blobs[0]}, blobs[2:]...)
				if _, err := ReadCheckpoint(bytes.NewReader(writeSplit(t, x.index, swapped))); err == nil {
					t.Fatal("a split checkpoint with its parts swapped was read")
				}
			}
			// Parts travel between processes in their checkpoints.
			for j, p := range x.parts {
				q, err := ReadPart(bytes.NewReader(checkpoint(t, p)), j, len(x.parts))
				if err != nil {
					t.Fatal(err)
				}
				if _, err := ReadPart(bytes.NewReader(checkpoint(t, p)), (j+1)%len(x.parts), len(x.parts)); err == nil && len(x.parts) > 1 {
					t.Fatalf("part %d read as part %d", j, (j+1)%len(x.parts))
				}
				q.LimitOutOfRange(tc.oorLimit)
				x.parts[j] = q
			}
			x.index.SetPoolSource(Parts(x.parts))
			sameQueries(t, whole, x.index, 99)
			joined, err := Join(x.index, x.parts)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(checkpoint(t, joined), checkpoint(t, whole)) {
				t.Fatal("the join's checkpoint differs from the whole store's")
			}
			if joined.Bytes() != whole.Bytes() {
				t.Fatalf("join %d bytes, whole %d", joined.Bytes(), whole.Bytes())
			}
		})
	}
}

// TestPartsRejectForgeries: shares and news come from other processes; a
// forged one is an error and merges nothing.
func TestPartsRejectForgeries(t *testing.T) {
	sp := DefaultSpace()
	opt := Options{Seed: 1}
	x := newSplit(t, sp, opt, 2)
	rng := rand.New(rand.NewPCG(1, 2))
	b := x.index.NewBatch()
	for b.in.n < 100 {
		synthSim(rng, 400, func(st []float64, at int64) { b.Observe(st, at) })
	}
	b.Observe([]float64{1e12, 1e12, 1, 1, 0}, 5) // outside S
	share := x.index.NewBatch()
	pos := b.Share(share, nil, 0, 2, DefaultShards)
	other := x.index.NewBatch()
	otherPos := b.Share(other, nil, 1, 2, DefaultShards)
	if share.in.n == 0 || other.in.n == 0 || share.oor.n == 0 {
		t.Fatal("the simulation should give both parts states and part 0 states outside S")
	}
	bad := func(name string, err error) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	_, err := x.parts[1].AddShares([]*Batch{share}, [][]uint32{pos}, []uint64{1})
	bad("part 0's share to part 1", err)
	_, err = x.parts[0].AddShares([]*Batch{share}, [][]uint32{pos[1:]}, []uint64{1})
	bad("positions of another length", err)
	rev := append([]uint32(nil), pos...)
	rev[0], rev[1] = rev[1], rev[0]
	_, err = x.parts[0].AddShares([]*Batch{share}, [][]uint32{rev}, []uint64{1})
	bad("positions that decrease", err)
	_, err = x.index.AddShares([]*Batch{share}, [][]uint32{pos}, []uint64{1})
	bad("shares to an index", err)
	withOOR := x.index.NewBatch()
	withOOR.Observe([]float64{1e12, 1e12, 1, 1, 0}, 5)
	_, err = x.parts[1].AddShares([]*Batch{withOOR}, [][]uint32{nil}, []uint64{1})
	bad("states outside S to part 1", err)
	if x.parts[0].Visits() != 0 {
		t.Fatal("a rejected share was merged")
	}

	n0, err := x.parts[0].AddShares([]*Batch{share}, [][]uint32{pos}, []uint64{1})
	if err != nil {
		t.Fatal(err)
	}
	n1, err := x.parts[1].AddShares([]*Batch{other}, [][]uint32{otherPos}, []uint64{1})
	if err != nil {
		t.Fatal(err)
	}
	try := func(name string, news ...PartNews) {
		t.Helper()
		_, err := x.index.AddNews([][]PartNews{news}, []uint64{1})
		bad(name, err)
		if x.index.Visits() != 0 || x.index.Len() != 0 {
			t.Fatalf("%s: merged", name)
		}
	}
	try("one part missing", n0[0])
	try("parts swapped", n1[0], n0[0])
	swapped := n1[0]
	swapped.Part = 0
	try("part 1's states as part 0's", swapped, n1[0])
	twice := n1[0]
	twice.Pos = append([]uint32(nil), n1[0].Pos...)
	twice.Pos[0] = n0[0].Pos[0]
	if n1[0].Pos[0] < n0[0].Pos[0] {
		twice.Pos[0] = n0[0].Pos[0]
		twice.Pos = twice.Pos[:1]
		twice.keys = twice.keys[:x.index.ly.w]
		twice.At = twice.At[:1]
	}
	try("two parts at one position", n0[0], twice)
	lying := n0[0]
	lying.Visits = 0
	try("more new states than visits", lying, n1[0])
	if _, err := x.index.AddNews([][]PartNews{{n0[0], n1[0]}}, []uint64{1}); err != nil {
		t.Fatal(err)
	}
	_, err = x.index.AddNews([][]PartNews{{n0[0], n1[0]}}, []uint64{2})
	bad("states new again", err)
	enc, _ := n0[0].AppendBinary(nil)
	var dec PartNews
	for cut := range len(enc) {
		if dec.UnmarshalBinary(enc[:cut]) == nil {
			t.Fatalf("news cut at %d of %d bytes decoded", cut, len(enc))
		}
	}
	if err := dec.UnmarshalBinary(append(enc, 0)); err == nil {
		t.Fatal("trailing byte decoded")
	}
}

func TestPartsOptions(t *testing.T) {
	sp := DefaultSpace()
	for _, tc := range []struct {
		opt         Options
		part, parts int
	}{
		{Options{}, 0, 0},
		{Options{}, 0, 17},
		{Options{Shards: 4}, 0, 5},
		{Options{}, 2, 2},
		{Options{Memory: 1 << 20}, 0, 2},
	} {
		if _, err := NewPart(sp, tc.opt, tc.part, tc.parts); err == nil {
			t.Errorf("%+v part %d of %d accepted", tc.opt, tc.part, tc.parts)
		}
	}
	idx, err := NewIndex(sp, Options{}, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := idx.WriteTo(&bytes.Buffer{}); err == nil {
		t.Error("an index wrote a checkpoint")
	}
	if idx.RandomVisit(rand.New(rand.NewPCG(1, 1)), 0); idx.PoolErr() == nil {
		t.Error("an index without a source answered a pool")
	}
}

// TestReadSplit: a coordinator resuming with store parts reads a split
// checkpoint as the index and the parts' encodings without the whole
// store (ReadSplit), and gets exactly what splitting the whole store
// would give: the same parts byte for byte, the same index, the same
// answers, and the same merges after it, for the checkpoint's part count
// and for another. A damaged checkpoint is an error.
func TestReadSplit(t *testing.T) {
	const parts = 3
	sp := DefaultSpace()
	opt := Options{Seed: 4, PoolSize: 3}
	whole := mustStore(t, sp, opt)
	x := newSplit(t, sp, opt, parts)
	rng := rand.New(rand.NewPCG(7, 7))
	sim := 0
	// merge merges n simulations into whole and split, which must agree.
	merge := func(whole *Store, x *splitStore, n int) {
		t.Helper()
		var bs []*Batch
		var ids []uint64
		for range n {
			b := whole.NewBatch()
			synthSim(rng, 50+rng.IntN(600), func(st []float64, at int64) { b.Observe(st, at) })
			b.Observe([]float64{1e12 + float64(sim), 1e12, 1, 1, 0}, 5) // outside S
			bs, ids = append(bs, b), append(ids, uint64(1000+sim))
			sim++
		}
		want := whole.AddBatches(bs, ids)
		if got := x.add(t, bs, ids); !reflect.DeepEqual(got, want) {
			t.Fatalf("after the resume: %+v, whole %+v", got, want)
		}
	}
	for range 6 {
		merge(whole, x, 8)
	}
	blobs := partBlobs(t, x)
	var split bytes.Buffer
	split.Write(writeSplit(t, x.index, blobs))
	for _, tc := range []struct {
		name    string
		ckpt    []byte
		parts   int
		inFiles bool // ReadSplitIn: the parts it makes again in files
	}{
		{"split, same parts", split.Bytes(), parts, false},
		{"split, fewer parts", split.Bytes(), parts - 1, false},
		{"split, more parts", split.Bytes(), parts + 2, false},
		{"split, more parts, in files", split.Bytes(), parts + 2, true},
		{"split, same parts, in files", split.Bytes(), parts, true},
		{"whole", checkpoint(t, whole), parts, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := ""
			if tc.inFiles {
				dir = t.TempDir()
			}
			index, blobs, files, err := readSplitIn(tc.ckpt, tc.parts, dir)
			if err != nil {
				t.Fatal(err)
			}
			if want := 0; tc.inFiles && tc.parts != parts {
				want = tc.parts
				if files != want {
					t.Fatalf("%d files for %d parts made again", files, want)
				}
			} else if files != want {
				t.Fatalf("%d files for parts read as they are", files)
			}
			read, err := ReadCheckpoint(bytes.NewReader(tc.ckpt))
			if err != nil {
				t.Fatal(err)
			}
			wantIndex, wantBlobs, err := SplitEncoded(read, tc.parts)
			if err != nil {
				t.Fatal(err)
			}
			if len(blobs) != tc.parts {
				t.Fatalf("%d parts", len(blobs))
			}
			for j := range blobs {
				if !bytes.Equal(blobs[j], wantBlobs[j]) {
					t.Fatalf("part %d differs from the split whole store's", j)
				}
			}
			if !bytes.Equal(writeSplit(t, index, blobs), writeSplit(t, wantIndex, wantBlobs)) {
				t.Fatal("the index's regions and counts differ from the split whole store's")
			}
			if !index.sl.on || !reflect.DeepEqual(bitmapWords(index.sl.kids), bitmapWords(wantIndex.sl.kids)) || !slices.Equal(index.sl.n, wantIndex.sl.n) {
				t.Fatal("the index's states differ")
			}
			sr, vr := index.OutOfRange()
			sw, vw := whole.OutOfRange()
			if sr != sw || vr != vw || sw == 0 || index.Len() != whole.Len() || index.Visits() != whole.Visits() {
				t.Fatalf("out of range %d/%d, %d states, %d visits; whole %d/%d, %d, %d", sr, vr, index.Len(), index.Visits(), sw, vw, whole.Len(), whole.Visits())
			}
			// The parts' processes load the encodings; the campaign goes
			// on exactly as the whole store.
			y := &splitStore{index: index, opt: opt, share: index.NewBatch()}
			for j, b := range blobs {
				p, err := ReadPart(bytes.NewReader(b), j, tc.parts)
				if err != nil {
					t.Fatal(err)
				}
				y.parts = append(y.parts, p)
			}
			index.SetPoolSource(Parts(y.parts))
			w, err := ReadStore(bytes.NewReader(checkpoint(t, whole)))
			if err != nil {
				t.Fatal(err)
			}
			if sameQueries(t, w, index, 5) < 5 {
				t.Fatal("the queries found too little to compare")
			}
			for range 3 {
				merge(w, y, 8)
			}
			sameQueries(t, w, index, 6)
		})
	}
	// Parts in the wrong order, or of another store than the index's.
	swapped := append([][]byte{blobs[1], blobs[0]}, blobs[2:]...)
	if _, _, err := readSplit(writeSplit(t, x.index, swapped), parts); err == nil {
		t.Fatal("a split checkpoint with its parts swapped was read")
	}
	// (the same simulations' ids, other states)
	other := newSplit(t, sp, opt, parts)
	other.addSynth(t, rand.New(rand.NewPCG(8, 8)), 48, 1000)
	if _, _, err := readSplit(writeSplit(t, other.index, blobs), parts); err == nil {
		t.Fatal("an index with the parts of another store was read")
	}
	// A damaged split checkpoint: cut anywhere, or any byte changed;
	// read as its own part count and as another (a re-split).
	// A re-split that fails midway, its checkpoint unreadable once read
	// through once, leaves no file behind.
	read := func(n int) int64 { // the bytes a read as n parts reads
		count := &readBudget{ra: bytes.NewReader(split.Bytes()), left: math.MaxInt64}
		if _, _, _, err := ReadSplitIn(count, int64(split.Len()), n, ""); err != nil {
			t.Fatal(err)
		}
		return math.MaxInt64 - count.left
	}
	first, all := read(parts), read(parts+2) // the keys' pass, and the re-split's
	budget := &readBudget{ra: bytes.NewReader(split.Bytes()), left: (first + all) / 2}
	_, _, remove, err := ReadSplitIn(budget, int64(split.Len()), parts+2, spoolDir(t))
	if err == nil || !strings.Contains(err.Error(), "as 5") || remove != nil {
		t.Fatalf("a re-split whose reads fail: %v", err)
	}
	// A re-split that fails leaves no file behind (readSplitIn checks).
	ck := split.Bytes()
	spool := t.TempDir()
	for cut := 0; cut < len(ck); cut += 1 + len(ck)/97 {
		if _, _, _, err := readSplitIn(ck[:cut], parts+cut%2, spool); err == nil || strings.Contains(err.Error(), "files left") {
			t.Fatalf("cut at %d of %d bytes, as %d parts: read (%v)", cut, len(ck), parts+cut%2, err)
		}
	}
	bad := slices.Clone(ck)
	for i := range 300 {
		at := rng.IntN(len(ck))
		bad[at] ^= byte(1 + rng.IntN(255))
		if _, _, err := readSplit(bad, parts+i%2); err == nil {
			t.Fatalf("change %d (byte %d of %d), as %d parts: read", i, at, len(ck), parts+i%2)
		}
		bad[at] = ck[at]
	}
}

// failAtEnd reads r, then fails where r ends: a part's reader whose
// checksum does not match.
type failAtEnd struct{ r io.Reader }

func (f failAtEnd) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		err = errors.New("digest mismatch")
	}
	return n, err
}

// TestWriteSplitFrom: a split checkpoint copied from the parts' readers is
// the one written from their bytes; a part that gives fewer or more bytes
// than its size, or whose reader fails at its end, fails the checkpoint.
func TestWriteSplitFrom(t *testing.T) {
	sp := DefaultSpace()
	x := newSplit(t, sp, Options{Seed: 6}, 2)
	x.addSynth(t, rand.New(rand.NewPCG(2, 2)), 8, 0)
	blobs := partBlobs(t, x)
	var want bytes.Buffer
	want.Write(writeSplit(t, x.index, blobs))
	src := func(b []byte, size int64, wrap func(io.Reader) io.Reader) PartSource {
		return PartSource{Size: size, Open: func() (io.ReadCloser, error) {
			return io.NopCloser(wrap(bytes.NewReader(b))), nil
		}}
	}
	same := func(r io.Reader) io.Reader { return r }
	var got bytes.Buffer
	n, err := WriteSplitFrom(&got, x.index, []PartSource{src(blobs[0], int64(len(blobs[0])), same), src(blobs[1], int64(len(blobs[1])), same)})
	if err != nil || !bytes.Equal(got.Bytes(), want.Bytes()) || n != int64(want.Len()) {
		t.Fatalf("copied from readers: %d bytes, %v; equal: %v", n, err, bytes.Equal(got.Bytes(), want.Bytes()))
	}
	for name, bad := range map[string]PartSource{
		"short":           src(blobs[1], int64(len(blobs[1]))+1, same),
		"long":            src(blobs[1], int64(len(blobs[1]))-1, same),
		"failing at end":  src(blobs[1], int64(len(blobs[1])), func(r io.Reader) io.Reader { return failAtEnd{r} }),
		"negative size":   src(blobs[1], -1, same),
		"failing to open": {Size: 1, Open: func() (io.ReadCloser, error) { return nil, errors.New("gone") }},
	} {
		if _, err := WriteSplitFrom(io.Discard, x.index, []PartSource{src(blobs[0], int64(len(blobs[0])), same), bad}); err == nil {
			t.Errorf("%s: written", name)
		}
	}
}

// readBudget is ra, whose reads fail once they have read left bytes. Its
// reads may run at once, as io.ReaderAt allows (a split checkpoint's
// parts are read on every core).
type readBudget struct {
	ra   io.ReaderAt
	mu   sync.Mutex
	left int64
}

func (r *readBudget) ReadAt(p []byte, off int64) (int, error) {
	r.mu.Lock()
	r.left -= int64(len(p))
	spent := r.left < 0
	r.mu.Unlock()
	if spent {
		return 0, errors.New("read budget spent")
	}
	return r.ra.ReadAt(p, off)
}

// spoolDir returns an empty directory that must be empty again at the
// end of the test.
func spoolDir(t *testing.T) string {
	dir := t.TempDir()
	t.Cleanup(func() {
		if es, _ := os.ReadDir(dir); len(es) != 0 {
			t.Errorf("%d files left in %s", len(es), dir)
		}
	})
	return dir
}

// readSplit reads checkpoint b with ReadSplit, and its parts' sources.
func readSplit(b []byte, n int) (*Store, [][]byte, error) {
	index, blobs, _, err := readSplitIn(b, n, "")
	return index, blobs, err
}

// readSplitIn reads checkpoint b with ReadSplitIn (its files in dir), and
// its parts' sources, and returns how many files it had made; it fails if
// any is left after its remove.
func readSplitIn(b []byte, n int, dir string) (*Store, [][]byte, int, error) {
	files := func() int {
		if dir == "" {
			return 0
		}
		es, _ := os.ReadDir(dir)
		return len(es)
	}
	index, srcs, remove, err := ReadSplitIn(bytes.NewReader(b), int64(len(b)), n, dir)
	if err != nil {
		if left := files(); left != 0 {
			return nil, nil, 0, fmt.Errorf("%w; %d files left", err, left)
		}
		return nil, nil, 0, err
	}
	defer remove()
	blobs, err := readSources(srcs)
	made := files()
	remove()
	if left := files(); left != 0 {
		return nil, nil, 0, fmt.Errorf("%d files left after remove", left)
	}
	return index, blobs, made, err
}

// readSources reads srcs whole.
func readSources(srcs []PartSource) ([][]byte, error) {
	blobs := make([][]byte, len(srcs))
	for j, src := range srcs {
		r, err := src.Open()
		if err != nil {
			return nil, err
		}
		blobs[j], err = io.ReadAll(r)
		r.Close()
		if err != nil || int64(len(blobs[j])) != src.Size {
			return nil, fmt.Errorf("part %d: %d bytes of %d (%v)", j, len(blobs[j]), src.Size, err)
		}
	}
	return blobs, nil
}

// partBlobs returns the encodings of x's parts.
func partBlobs(t *testing.T, x *splitStore) [][]byte {
	t.Helper()
	var blobs [][]byte
	for _, p := range x.parts {
		blobs = append(blobs, checkpoint(t, p))
	}
	return blobs
}

// writeSplit returns the split checkpoint of index and the parts' blobs.
func writeSplit(t *testing.T, index *Store, blobs [][]byte) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := WriteSplit(&b, index, blobs); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// addSynth merges sims synthetic simulations of 300 steps, with config ids
// from id0, in one group.
func (x *splitStore) addSynth(t *testing.T, rng *rand.Rand, sims int, id0 uint64) {
	var bs []*Batch
	var ids []uint64
	for i := range sims {
		b := x.index.NewBatch()
		synthSim(rng, 300, func(st []float64, at int64) { b.Observe(st, at) })
		bs, ids = append(bs, b), append(ids, id0+uint64(i))
	}
	x.add(t, bs, ids)
}

// writeCounter counts the writes it is given, and keeps their bytes.
type writeCounter struct {
	bytes.Buffer
	writes int
}

func (w *writeCounter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}

// TestCopyPartWritesLarge checks that a part larger than copyChunk is
// copied whole, in writes of copyChunk bytes (the last one shorter), from a
// reader that gives half of what each read asks, and that a source short
// of its size inside a chunk is an error.
func TestCopyPartWritesLarge(t *testing.T) {
	blob := make([]byte, 2*copyChunk+12345)
	rng := rand.New(rand.NewPCG(5, 5))
	for i := range blob {
		blob[i] = byte(rng.Uint32())
	}
	src := func(size int64) PartSource {
		return PartSource{Size: size, Open: func() (io.ReadCloser, error) {
			return io.NopCloser(iotest.HalfReader(bytes.NewReader(blob))), nil
		}}
	}
	var w writeCounter
	n, err := copyPart(&w, src(int64(len(blob))))
	if err != nil || n != int64(len(blob)) || !bytes.Equal(w.Bytes(), blob) {
		t.Fatalf("copied %d of %d bytes, %v; equal: %v", n, len(blob), err, bytes.Equal(w.Bytes(), blob))
	}
	if w.writes != 3 {
		t.Errorf("%d writes, want 3 of at most %d bytes", w.writes, copyChunk)
	}
	if _, err := copyPart(io.Discard, src(int64(len(blob))+1)); err == nil {
		t.Error("a source one byte short: copied")
	}
}

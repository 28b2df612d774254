package coverage

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestSlimIndex: an index that keeps its states as bits of their regions
// at k = 2 names every state of the whole store, and only those: a ref
// for each that decodes to it, its states, its corners at k = 1, its
// ranking for SampleUnvisited; and building it from keys that are not one
// store's fails.
func TestSlimIndex(t *testing.T) {
	sp := DefaultSpace()
	opt := Options{Seed: 2}
	whole := mustStore(t, sp, opt)
	x := newSplit(t, sp, opt, 2)
	x.addSynth(t, rand.New(rand.NewPCG(5, 5)), 40, 100)
	rng := rand.New(rand.NewPCG(5, 5))
	var bs []*Batch
	var ids []uint64
	for i := range 40 { // as addSynth
		b := whole.NewBatch()
		synthSim(rng, 300, func(st []float64, at int64) { b.Observe(st, at) })
		bs, ids = append(bs, b), append(ids, 100+uint64(i))
	}
	whole.AddBatches(bs, ids)
	idx := x.index
	if !idx.sl.on || idx.Len() != whole.Len() || whole.Len() < 2000 {
		t.Fatalf("slim %v, %d states, whole %d", idx.sl.on, idx.Len(), whole.Len())
	}
	want := map[string]bool{}
	for ref := range whole.States() {
		st := whole.State(ref)
		want[stateString(st)] = true
		r, ok := idx.Lookup(st)
		if !ok || !slices.Equal(idx.State(r), st) {
			t.Fatalf("state %v: ref %#x %v, decodes to %v", st, r, ok, idx.State(r))
		}
	}
	n := 0
	for ref := range idx.States() {
		if st := idx.State(ref); !want[stateString(st)] {
			t.Fatalf("the index has state %v, the whole store does not", st)
		}
		n++
	}
	corners, _ := idx.RegionCorners(1)
	for c := range corners {
		if !want[stateString(c)] {
			t.Fatalf("the index has corner %v, the whole store does not", c)
		}
		n--
	}
	if n != 0 {
		t.Fatalf("states and corners differ by %d", n)
	}
	// Unvisited states, also by rank (coverage is far below the
	// rejection's limit, so sampleByRank is called directly).
	for i := range 50 {
		st := idx.sampleByRank(rand.New(rand.NewPCG(uint64(i), 3)), 0)
		if _, ok := whole.Lookup(st); ok {
			t.Fatalf("sampleByRank drew the visited state %v", st)
		}
	}
	for _, ref := range []StateRef{0, 1 << 20, oorBit, slimBit | 1<<40, slimRef(15, 1<<26, 63)} {
		if _, err := idx.stateKey(ref); err == nil {
			t.Errorf("ref %#x has a key", uint64(ref))
		}
	}

	tabs := func() []*table {
		var ts []*table
		for sh := range x.parts[0].pooled {
			ts = append(ts, &x.parts[partOf(sh, 2)].pooled[sh].st.t)
		}
		return ts
	}
	merged := bitmapWords(idx.sl.kids)
	if err := idx.slimFromKeys(tabs()); err != nil || !reflect.DeepEqual(bitmapWords(idx.sl.kids), merged) {
		t.Fatalf("rebuilt from its parts' keys: %v, or other bits than the merges set", err)
	}
	for name, tc := range map[string]struct {
		tabs func() []*table
		want string
	}{
		"a state twice": {func() []*table { ts := tabs(); ts[1] = ts[0]; return ts }, "two shards"},
		"no states": {func() []*table {
			ts := tabs()
			for i := range ts {
				e := newTable(idx.ly.w, idx.ly.kb)
				ts[i] = &e
			}
			return ts
		}, "regions without states"},
		"a state outside the regions": {func() []*table {
			ts := tabs()
			other := newSplit(t, sp, opt, 1)
			other.addSynth(t, rand.New(rand.NewPCG(6, 6)), 40, 100)
			ts[3] = &other.parts[0].pooled[3].st.t
			return ts
		}, "no region"},
	} {
		if err := idx.slimFromKeys(tc.tabs()); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
	// A part's loader (a split checkpoint's part, read) takes the states
	// of its own part's shards alone.
	if err := idx.newSlimLoader(0, 2).add(1, make([]uint64, idx.ly.w)); err == nil || !strings.Contains(err.Error(), "part 0 of 2 has states of shard 1") {
		t.Errorf("a state of part 1 loaded as part 0's: %v", err)
	}
}

func stateString(st []float64) string { return fmt.Sprint(st) }

// bitmapWords copies each shard's words of a slim index.
func bitmapWords(kids []bitmaps) [][]uint64 {
	out := make([][]uint64, len(kids))
	for sh := range kids {
		out[sh] = []uint64{}
		for _, m := range kids[sh].all {
			out[sh] = append(out[sh], m)
		}
	}
	return out
}

// TestBitmaps checks that a slim index's bitmaps grow without moving a
// full chunk, and that zeroBitmaps(n) holds what n pushes do.
func TestBitmaps(t *testing.T) {
	const full = 1 << bitmapShift
	for _, n := range []int{0, 1, 17, full - 1, full, full + 1, 3*full + 5} {
		var b bitmaps
		var first, second *uint64
		for r := range n {
			b.push()
			*b.word(uint32(r)) = uint64(r) + 1
			if r == full-1 {
				first = b.word(0)
			}
			if r == full {
				second = b.word(full)
			}
		}
		if b.n != n {
			t.Fatalf("%d pushes: n = %d", n, b.n)
		}
		for r, m := range b.all {
			if m != uint64(r)+1 {
				t.Fatalf("%d pushes: word %d = %d", n, r, m)
			}
		}
		if first != nil && first != b.word(0) || second != nil && second != b.word(full) {
			t.Errorf("%d pushes: a full chunk moved", n)
		}
		z := zeroBitmaps(n)
		if z.n != n || len(z.chunks) != len(b.chunks) {
			t.Fatalf("zeroBitmaps(%d): %d words in %d chunks, pushes made %d in %d", n, z.n, len(z.chunks), b.n, len(b.chunks))
		}
		for r := range n {
			if *z.word(uint32(r)) != 0 {
				t.Fatalf("zeroBitmaps(%d): word %d is not zero", n, r)
			}
			*z.word(uint32(r)) = uint64(r) + 1
		}
		if !reflect.DeepEqual(bitmapWords([]bitmaps{z}), bitmapWords([]bitmaps{b})) {
			t.Fatalf("zeroBitmaps(%d) filled differs from %d pushes", n, n)
		}
		for i, c := range z.chunks {
			if n >= full && cap(c) != full {
				t.Fatalf("zeroBitmaps(%d): chunk %d of capacity %d", n, i, cap(c))
			}
		}
		if n > full {
			z.push()
			if z.n != n+1 || *z.word(uint32(n)) != 0 {
				t.Fatalf("zeroBitmaps(%d) then a push: n = %d", n, z.n)
			}
		}
	}
}

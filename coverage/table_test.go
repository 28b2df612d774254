package coverage

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"testing"
)

// indexSize is the number of slots of t's index.
func (t *table) indexSize() int { return len(t.tags) }

// used reports whether slot i of t's index holds a key.
func (t *table) used(i int) bool { return t.tags[i] != 0 }

// tableOf returns a table of n distinct keys of w words (kb bytes, at
// least 4) stored without an index, as a decoded batch's are: key i's
// last word is i times an odd number modulo 2^32 (distinct), its others
// random.
func tableOf(n, w, kb int, seed uint64) table {
	t := newTable(w, kb)
	rng := rand.New(rand.NewPCG(seed, 1))
	k := make([]uint64, w)
	for i := range n {
		for j := range w - 1 {
			k[j] = rng.Uint64()
		}
		k[w-1] = uint64(uint32(i)*0x9e3779b1) & t.last
		t.append(k)
	}
	return t
}

// TestRehashBySlots checks that the index rebuilt in slot order finds
// every key with its ref and occupies the same slots as the one rebuilt in
// ref order (linear probing fills the same slots whatever the order), for
// tables below and above rehashBucketMin and index sizes that wrap keys
// around the end.
func TestRehashBySlots(t *testing.T) {
	for _, tc := range []struct{ n, w, kb int }{
		{0, 1, 5}, {1, 1, 5}, {1000, 1, 5}, {rehashBucketMin, 1, 5}, {rehashBucketMin + 1, 1, 5},
		{rehashBucketMin + 12345, 2, 12},
	} {
		for _, load := range []float64{0.55, 0.99} {
			t.Run(fmt.Sprintf("n=%d/w=%d/load=%.2f", tc.n, tc.w, load), func(t *testing.T) {
				size := max(16, int(float64(tc.n)/load)+1)
				tb := tableOf(tc.n, tc.w, tc.kb, uint64(tc.n))
				tb.rehash(size)
				inOrder := tableOf(tc.n, tc.w, tc.kb, uint64(tc.n))
				inOrder.emptyIndex(size)
				inOrder.placeInOrder()
				for i := range size {
					if tb.used(i) != inOrder.used(i) {
						t.Fatalf("slot %d: used %v, in ref order %v", i, tb.used(i), inOrder.used(i))
					}
				}
				k := make([]uint64, tc.w)
				for r := range tb.n {
					copy(k, tb.key(uint32(r)))
					if got, ok := tb.lookup(k); !ok || got != uint32(r) {
						t.Fatalf("key %d: lookup = %d, %v", r, got, ok)
					}
					if got, added := tb.insert(k); added || got != uint32(r) {
						t.Fatalf("key %d: insert = %d, added %v", r, got, added)
					}
				}
				if tb.w == 1 && tb.n > 0 {
					if k := []uint64{1 << 33}; func() bool { _, ok := tb.lookup(k); return ok }() {
						t.Fatal("a key never inserted is found")
					}
				}
			})
		}
	}
}

// BenchmarkRehash rebuilds the index of a table of n keys at 1.5 times
// its size (a growth step), in ref order and in slot order, side by side.
func BenchmarkRehash(b *testing.B) {
	for _, n := range []int{1 << 19, 1 << 20, 1 << 22} {
		tb := tableOf(n, 1, 5, 7)
		size := indexSlots(n) * 3 / 2
		b.Run(fmt.Sprintf("keys=%d/ref-order", n), func(b *testing.B) {
			for range b.N {
				tb.emptyIndex(size)
				tb.placeInOrder()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/key")
		})
		b.Run(fmt.Sprintf("keys=%d/slot-order", n), func(b *testing.B) {
			for range b.N {
				tb.emptyIndex(size)
				tb.placeBySlots()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/key")
		})
	}
}

// BenchmarkTableOps times a table's operations as the store's merge and
// queries do them on a table larger than the caches: keys touchAhead at a
// time, their slots touched first (merger.shardLevel). A table of n keys,
// its index sized for n/8 more; "insert" adds those n/8 new keys (no
// growth: BenchmarkRehash times it), "hit" and "miss" look up present and
// absent keys in a random order. It reports ns a key.
func BenchmarkTableOps(b *testing.B) {
	for _, n := range []int{1 << 20, 1 << 23} {
		fresh := n / 8
		tb := tableOf(n, 1, 5, 7)
		tb.reserve(n + fresh)
		size := tb.indexSize()
		key := func(i int) uint64 { return uint64(uint32(i)*0x9e3779b1) & tb.last }
		rng := rand.New(rand.NewPCG(3, 3))
		hits := make([]uint64, 1<<20)
		for i := range hits {
			hits[i] = key(rng.IntN(n))
		}
		misses := make([]uint64, 1<<20)
		for i := range misses {
			misses[i] = key(n + fresh + rng.IntN(n))
		}
		group := func(keys []uint64, f func(k []uint64, h uint64)) {
			var hs [touchAhead]uint64
			var ks [touchAhead][1]uint64
			sink := uint32(0)
			for g := 0; g+touchAhead <= len(keys); g += touchAhead {
				for i := range touchAhead {
					ks[i][0] = keys[g+i]
					hs[i] = hashKey(ks[i][:])
					sink += tb.touch(hs[i])
				}
				for i := range touchAhead {
					f(ks[i][:], hs[i])
				}
			}
			benchSink += sink
		}
		b.Run(fmt.Sprintf("keys=%d/insert", n), func(b *testing.B) {
			ins := make([]uint64, fresh)
			for i := range ins {
				ins[i] = key(n + i)
			}
			for b.Loop() {
				group(ins, func(k []uint64, h uint64) {
					if _, added := tb.insertH(k, h); !added {
						b.Fatal("a new key is present")
					}
				})
				b.StopTimer()
				tb.n, tb.keys = n, tb.keys[:n>>keyChunkShift+1]
				c := tb.keys[len(tb.keys)-1]
				tb.keys[len(tb.keys)-1] = c[:(n&keyChunkMask)*tb.kb+8]
				tb.rehash(size)
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*fresh), "ns/key")
		})
		for _, c := range []struct {
			name string
			keys []uint64
			want bool
		}{{"hit", hits, true}, {"miss", misses, false}} {
			b.Run(fmt.Sprintf("keys=%d/%s", n, c.name), func(b *testing.B) {
				for b.Loop() {
					group(c.keys, func(k []uint64, h uint64) {
						if tb.lookupHashed(k, h) != c.want {
							b.Fatal("lookup: wrong answer")
						}
					})
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(c.keys)), "ns/key")
			})
		}
	}
}

var benchSink uint32

// indexSizes lists the index sizes of s's tables: every shard's pooled
// states', every level's, and the out-of-range states'.
func indexSizes(s *Store) []int {
	var sizes []int
	for _, sh := range s.pooled {
		sizes = append(sizes, sh.st.t.indexSize())
	}
	for _, lv := range s.levels {
		for i := range lv.t {
			sizes = append(sizes, lv.t[i].indexSize())
		}
	}
	return append(sizes, s.oor.t.indexSize())
}

// TestLoadedTablesGrowAsTheirCampaign checks that a store read from a
// checkpoint, by a decoder that knows the encoding's length and by one
// that does not, has tables whose indexes are those of the store that
// wrote it, grown key by key: the resumed campaign grows them when the
// campaign it continues would have. This store's tables are below the
// 2^20 keys that a decoder without the length reserves at most, so a
// table reserved for fewer keys than it then gets is checked apart.
func TestLoadedTablesGrowAsTheirCampaign(t *testing.T) {
	s := mustStore(t, DefaultSpace(), Options{Seed: 3})
	rng := rand.New(rand.NewPCG(4, 4))
	for range 40 {
		b := s.NewBatch()
		walkBatch(b, rng, 3000)
		s.AddBatches([]*Batch{b}, []uint64{rng.Uint64()})
	}
	want := indexSizes(s)
	ck := checkpoint(t, s)
	for name, r := range map[string]io.Reader{
		"sized":   bytes.NewReader(ck),
		"unsized": struct{ io.Reader }{bytes.NewReader(ck)},
	} {
		got, err := ReadStore(r)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if sizes := indexSizes(got); !slices.Equal(sizes, want) {
			t.Errorf("%s: index sizes %v, want %v", name, sizes, want)
		}
	}
	for _, c := range []struct{ reserved, n int }{{1000, 5000}, {1 << 12, 1<<14 + 7}} {
		tb := newTable(1, 5)
		tb.reserve(c.reserved)
		for i := range c.n {
			tb.insert([]uint64{uint64(i)})
		}
		if got, want := tb.indexSize(), indexSlots(c.n); got != want {
			t.Errorf("reserved for %d, then %d keys: index of %d slots, want %d", c.reserved, c.n, got, want)
		}
	}
}

// TestTableKeyChunks checks keys stored across chunks: each reads back
// as inserted at every ref (the chunks' first and last keys included),
// a full chunk is never moved by later inserts, the first grows no
// larger than a chunk, and reset keeps the first chunk alone, empty.
func TestTableKeyChunks(t *testing.T) {
	for _, c := range []struct{ w, kb int }{{1, 5}, {1, 8}, {2, 12}} {
		t.Run(fmt.Sprintf("w=%d/kb=%d", c.w, c.kb), func(t *testing.T) {
			const n = 2<<keyChunkShift + 3
			want := tableOf(n, c.w, c.kb, 9) // the keys, appended
			tb := newTable(c.w, c.kb)
			var first *byte
			for r := range n {
				if _, added := tb.insert(slices.Clone(want.key(uint32(r)))); !added {
					t.Fatalf("key %d: not added", r)
				}
				if r == 1<<keyChunkShift {
					first = &tb.keys[0][0]
				}
			}
			if len(tb.keys) != 3 || cap(tb.keys[0]) != tb.chunkBytes() || cap(tb.keys[1]) != tb.chunkBytes() {
				t.Fatalf("%d chunks, of capacities %d and %d; want 3, full ones of %d", len(tb.keys), cap(tb.keys[0]), cap(tb.keys[1]), tb.chunkBytes())
			}
			if &tb.keys[0][0] != first {
				t.Fatal("the first chunk moved after it was full")
			}
			for _, r := range []uint32{0, keyChunkMask, keyChunkMask + 1, 2 << keyChunkShift, n - 1, 777, 70000} {
				if !slices.Equal(tb.key(r), want.key(r)) {
					t.Fatalf("key %d reads %x, want %x", r, tb.key(r), want.key(r))
				}
				if got, ok := tb.lookup(slices.Clone(want.key(r))); !ok || got != r {
					t.Fatalf("key %d: lookup = %d, %v", r, got, ok)
				}
				if ref, _, ok := tb.touchKey(hashKey(want.key(r))); !ok || ref > r {
					t.Fatalf("key %d: touchKey = %d, %v (a ref at most its own, whose tag matches)", r, ref, ok)
				}
			}
			tb.reset()
			if len(tb.keys) != 1 || len(tb.keys[0]) != 8 || tb.n != 0 {
				t.Fatalf("after reset: %d chunks, the first of %d bytes, %d keys", len(tb.keys), len(tb.keys[0]), tb.n)
			}
			if _, ok := tb.lookup(slices.Clone(want.key(5))); ok {
				t.Fatal("a key is found after reset")
			}
		})
	}
}

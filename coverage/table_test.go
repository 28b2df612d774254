package coverage

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

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
				inOrder.tags, inOrder.slots = make([]uint8, size), make([]uint32, size)
				inOrder.placeInOrder()
				for i := range size {
					if (tb.tags[i] == 0) != (inOrder.tags[i] == 0) {
						t.Fatalf("slot %d: used %v, in ref order %v", i, tb.tags[i] != 0, inOrder.tags[i] != 0)
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
				tb.tags, tb.slots = make([]uint8, size), make([]uint32, size)
				tb.placeInOrder()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/key")
		})
		b.Run(fmt.Sprintf("keys=%d/slot-order", n), func(b *testing.B) {
			for range b.N {
				tb.tags, tb.slots = make([]uint8, size), make([]uint32, size)
				tb.placeBySlots()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/key")
		})
	}
}

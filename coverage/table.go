package coverage

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// table is an insert-only, exact hash set of fixed-width keys. A key is w
// 64-bit words when handled, but stored in only kb bytes (the bytes its
// layout uses: 5 for a state of the default S), little endian, back to back.
// Keys are numbered 0, 1, … in insertion order (their ref). The index is open
// addressing with linear probing over one tag byte and one uint32 ref per
// slot; it grows by half when 80% full, so it costs 5/0.8 … 5/0.53 bytes per
// key on top of the kb key bytes. Tags keep most probes from touching keys.
//
// The keys are kept in chunks of 2^keyChunkShift keys, as a slim index's
// bitmaps are (slim.go): one slice would be copied into fresh memory each
// time it grew, each key about four times over a campaign's life (that
// copy and its fresh pages took 0.24–0.30 s of the 0.8–1.2 s an aged
// campaign's index spent in its shards' inserts, in four of six profiles:
// bench/results/keys-in-chunks-20261125.md). A full chunk never moves.
// The first chunk grows as a slice, so that a small table (a simulation's
// batch) stays small.
type table struct {
	w, kb int
	last  uint64 // mask of the bytes of the last word that belong to a key
	n     int
	// keys[c] holds keys c<<keyChunkShift … in kb bytes each, then 8
	// bytes of padding for unaligned loads.
	keys  [][]byte
	tags  []uint8  // 0 = empty slot
	slots []uint32 // ref of the key in each used slot
	buf   []uint64 // key() result
}

const maxLoadNum, maxLoadDen = 4, 5 // grow above 80% load

// keyChunkShift sets the keys a chunk of a table's keys holds (2^16: 320 kB
// at 5 bytes a key).
const (
	keyChunkShift = 16
	keyChunkMask  = 1<<keyChunkShift - 1
)

// newTable returns a table of keys of w words of which only the low kb bytes
// (w-1 < kb/8 ≤ w) can be non-zero.
func newTable(w, kb int) table {
	lastBytes := kb - 8*(w-1)
	if w < 1 || lastBytes < 1 || lastBytes > 8 {
		panic("coverage: bad key width")
	}
	last := ^uint64(0)
	if lastBytes < 8 {
		last = 1<<(8*uint(lastBytes)) - 1
	}
	return table{w: w, kb: kb, last: last, keys: [][]byte{make([]byte, 8)}, buf: make([]uint64, w)}
}

// hashKey mixes the words of k (splitmix64 finaliser).
func hashKey(k []uint64) uint64 {
	var h uint64 = 0x9e3779b97f4a7c15
	for _, x := range k {
		h ^= x
		h ^= h >> 30
		h *= 0xbf58476d1ce4e5b9
		h ^= h >> 27
		h *= 0x94d049bb133111eb
		h ^= h >> 31
	}
	return h
}

// hashTag takes the low byte of h; the slot comes from the high bits.
func hashTag(h uint64) uint8 {
	t := uint8(h)
	if t == 0 {
		t = 1
	}
	return t
}

// slot maps h onto [0, size) (Lemire's multiply-shift reduction).
func slot(h uint64, size int) int {
	hi, _ := bits.Mul64(h, uint64(size))
	return int(hi)
}

// at returns the bytes of key ref and those after it in its chunk (at
// least 8 more: the padding).
func (t *table) at(ref uint32) []byte {
	return t.keys[ref>>keyChunkShift][int(ref&keyChunkMask)*t.kb:]
}

// word loads word i of key ref.
func (t *table) word(ref uint32, i int) uint64 {
	x := binary.LittleEndian.Uint64(t.at(ref)[8*i:])
	if i == t.w-1 {
		x &= t.last
	}
	return x
}

// key returns the words of key ref in a buffer owned by the table, valid
// until the next call of key.
func (t *table) key(ref uint32) []uint64 {
	for i := range t.buf {
		t.buf[i] = t.word(ref, i)
	}
	return t.buf
}

func (t *table) equal(ref uint32, k []uint64) bool {
	for i, x := range k {
		if t.word(ref, i) != x {
			return false
		}
	}
	return true
}

// lookup returns the ref of k.
func (t *table) lookup(k []uint64) (uint32, bool) {
	return t.lookupH(k, hashKey(k))
}

// lookupHashed reports whether k, of hash h, is in the table.
func (t *table) lookupHashed(k []uint64, h uint64) bool {
	_, ok := t.lookupH(k, h)
	return ok
}

// touch reads the index slot of hash h, to bring it into the cache before a
// lookup; the result is meaningless.
func (t *table) touch(h uint64) uint32 {
	if t.n == 0 {
		return 0
	}
	i := slot(h, len(t.tags))
	return uint32(t.tags[i]) + t.slots[i]
}

// touchKey reads the stored key of the first slot from h's home slot on
// whose tag is h's, to bring it into the cache before an insert or lookup
// compares it (most of a large table's probes for a key it has: the tag
// matches, and the key, stored apart in insertion order, is a cache miss
// of its own). It returns that key's ref (ok false when an empty slot came
// first) and a byte of the key, meaningless, for the caller's sink. The
// slots it reads are the ones touch brought in.
func (t *table) touchKey(h uint64) (ref uint32, sink uint32, ok bool) {
	if t.n == 0 {
		return 0, 0, false
	}
	tag, size := hashTag(h), len(t.tags)
	for i := slot(h, size); t.tags[i] != 0; {
		if t.tags[i] == tag {
			r := t.slots[i]
			return r, uint32(t.at(r)[0]), true
		}
		if i++; i == size {
			i = 0
		}
	}
	return 0, 0, false
}

func (t *table) lookupH(k []uint64, h uint64) (uint32, bool) {
	if t.n == 0 {
		return 0, false
	}
	tag, size := hashTag(h), len(t.tags)
	for i := slot(h, size); ; {
		switch t.tags[i] {
		case 0:
			return 0, false
		case tag:
			if r := t.slots[i]; t.equal(r, k) {
				return r, true
			}
		}
		if i++; i == size {
			i = 0
		}
	}
}

// insert adds k if absent and returns its ref and whether it was added.
func (t *table) insert(k []uint64) (uint32, bool) { return t.insertH(k, hashKey(k)) }

// insertH is insert for a key whose hash h is known.
func (t *table) insertH(k []uint64, h uint64) (uint32, bool) {
	tag, size := hashTag(h), len(t.tags)
	i := 0
	if size > 0 {
		for i = slot(h, size); t.tags[i] != 0; {
			if t.tags[i] == tag {
				if r := t.slots[i]; t.equal(r, k) {
					return r, false
				}
			}
			if i++; i == size {
				i = 0
			}
		}
	}
	// The index grows only for a key that is added, so that its size is
	// a function of the number of keys alone (indexSlots), as in a table
	// read from a checkpoint (reserve).
	if (t.n+1)*maxLoadDen > size*maxLoadNum {
		t.grow()
		i = t.free(slot(h, len(t.tags)))
	}
	if t.n == 1<<31 {
		panic("coverage: more than 2^31 keys in one table")
	}
	r := uint32(t.n)
	t.tags[i], t.slots[i] = tag, r
	t.append(k)
	return r, true
}

// append stores k after the last key, keeping 8 bytes of padding.
func (t *table) append(k []uint64) {
	c, off := t.n>>keyChunkShift, (t.n&keyChunkMask)*t.kb
	if c == len(t.keys) {
		// A new chunk, allocated whole: it is never copied.
		t.keys = append(t.keys, make([]byte, 8, t.chunkBytes()))
	}
	ch := t.keys[c]
	if need := off + t.kb + 8; cap(ch) < need {
		// Only the first chunk grows: doubling, up to a full chunk.
		ch = append(make([]byte, 0, min(max(2*cap(ch), need), t.chunkBytes())), ch...)
	}
	ch = ch[:off+t.kb+8]
	for i, x := range k[:t.w-1] {
		binary.LittleEndian.PutUint64(ch[off+8*i:], x)
	}
	binary.LittleEndian.PutUint64(ch[off+8*(t.w-1):], k[t.w-1]) // spills into padding
	clear(ch[off+t.kb:])
	t.keys[c] = ch
	t.n++
}

// chunkBytes is the size of a full chunk of keys, padding included.
func (t *table) chunkBytes() int { return (1<<keyChunkShift)*t.kb + 8 }

// reserveKeys makes room for n keys more in the first chunk, up to its
// full size (the others are allocated whole).
func (t *table) reserveKeys(n int) {
	if len(t.keys) != 1 {
		return
	}
	need := min(t.n+n, 1<<keyChunkShift)*t.kb + 8
	if k := t.keys[0]; cap(k) < need {
		ks := make([]byte, len(k), need)
		copy(ks, k)
		t.keys[0] = ks
	}
}

// keyCap is the memory the keys' chunks hold.
func (t *table) keyCap() int {
	n := 0
	for _, c := range t.keys {
		n += cap(c)
	}
	return n
}

// reset empties the table, keeping the memory of its first chunk of keys.
func (t *table) reset() {
	t.n = 0
	t.keys = t.keys[:1]
	t.keys[0] = t.keys[0][:8]
	clear(t.keys[0])
	clear(t.tags)
}

// reserve makes room for n keys without further growth of the index.
//
// The index it makes is the one a table grown from empty to n keys has
// (indexSlots), so that a store read from a checkpoint grows when the
// campaign it continues would have: an index sized for n keys and an
// eighth, as before, made every large table of a resumed store grow
// within 12.5% more keys (all 16 pooled tables of an aged campaign's
// index at once, whose rehash then weighed on every figure measured just
// after a resume; bench/results/rehash-checkpoint-writes-20261124.md,
// "Growth into fresh memory").
func (t *table) reserve(n int) {
	if n*maxLoadDen > len(t.slots)*maxLoadNum {
		t.rehash(indexSlots(n))
	}
	t.reserveKeys(n - t.n)
}

func (t *table) grow() { t.rehash(max(16, len(t.slots)*3/2)) }

// rehash rebuilds the index with size slots from the stored keys.
//
// Keys are stored in insertion order and their slots are spread over the
// whole index, so placing them in that order costs a cache miss a key
// once the index outgrows the cache (91–102 ns a key at 2^22 keys in
// BenchmarkRehash; growth was 38% of an aged campaign's index merge,
// bench/results/growth-slot-order-20261124.md). A large
// index is therefore rebuilt in slot order instead: the keys' slots are
// computed in one pass over the keys and bucketed by their high bits
// (the slot is monotone in the hash, so a bucket is a run of slots), and
// each bucket is placed in turn, so the placement walks the index once.
// Linear probing gives a valid index whatever the order of insertion; a
// key's ref, which is all the store sees, does not depend on it.
func (t *table) rehash(size int) {
	t.emptyIndex(size)
	if t.n < rehashBucketMin || uint64(size) > math.MaxUint32 {
		t.placeInOrder()
		return
	}
	t.placeBySlots()
}

// emptyIndex replaces the index with an empty one of size slots.
func (t *table) emptyIndex(size int) {
	t.tags = make([]uint8, size)
	t.slots = make([]uint32, size)
}

// placeInOrder fills an empty index with the keys in ref order.
func (t *table) placeInOrder() {
	size := len(t.tags)
	for r := range t.n {
		h := hashKey(t.key(uint32(r)))
		t.place(slot(h, size), hashTag(h), uint32(r))
	}
}

// placeBySlots fills an empty index (of at most 2^32-1 slots) with the
// keys bucketed by their slots.
func (t *table) placeBySlots() {
	size := len(t.tags)
	// Buckets of about rehashBucketSlots slots, a power of two in number.
	shift := uint(64 - bits.Len(uint(max(1, size/rehashBucketSlots))))
	nb := 1 << (64 - shift)
	start := make([]int, nb+1)
	for r := range t.n {
		start[hashKey(t.key(uint32(r)))>>shift+1]++
	}
	for b := range nb {
		start[b+1] += start[b]
	}
	type entry struct {
		slot, ref uint32
		tag       uint8
	}
	sorted := make([]entry, t.n)
	for r := range t.n {
		h := hashKey(t.key(uint32(r)))
		b := h >> shift
		sorted[start[b]] = entry{slot: uint32(slot(h, size)), ref: uint32(r), tag: hashTag(h)}
		start[b]++
	}
	for _, e := range sorted {
		t.place(int(e.slot), e.tag, e.ref)
	}
}

// Rehashing by buckets pays (a pass more over the keys, and a temporary
// array of 12 bytes a key that Store.Bytes does not count, as it does not
// count the old index a rehash drops) from about a million keys, whose
// index (5 bytes a slot) outgrows the caches. BenchmarkRehash, alone on
// an idle machine, rebuilt 2^22 keys at 34–37 ns a key against 91–102 in
// ref order; 2^20 at 37–41 against 33–36, and 2^19 at 31–33 against
// 23–27, with the caches warm. In an aged campaign's index, whose merge
// leaves them cold, growth went from 2.88 to 2.01 s over 5,000
// simulations (bench/results/growth-slot-order-20261124.md). Buckets of 2^16 slots
// (330 kB of index) were the fastest of 2^12 to 2^18.
const (
	rehashBucketMin   = 1 << 20
	rehashBucketSlots = 1 << 16
)

// place stores ref with tag in the first empty slot from i on.
func (t *table) place(i int, tag uint8, ref uint32) {
	i = t.free(i)
	t.tags[i], t.slots[i] = tag, ref
}

// free returns the first empty slot from i on.
func (t *table) free(i int) int {
	size := len(t.tags)
	for t.tags[i] != 0 {
		if i++; i == size {
			i = 0
		}
	}
	return i
}

// bytes is the memory the table needs for its keys: the keys themselves and
// the index a table grown from empty to that many keys has (5 bytes a slot,
// load between 53% and 80%). It is a function of the number of keys alone,
// not of the allocation history, so a store's budget decisions are the same
// in a campaign and in its resumption from a checkpoint; the slack of the
// key chunks (the rest of the last chunk, or of the first, which at most
// doubles) and of the index's growth comes on top.
func (t *table) bytes() int {
	return t.n*t.kb + 5*indexSlots(t.n)
}

// indexSlots is the index size of a table grown from empty to n keys.
func indexSlots(n int) int {
	if n == 0 {
		return 0
	}
	size := 16
	for n*maxLoadDen > size*maxLoadNum {
		size = max(16, size*3/2)
	}
	return size
}

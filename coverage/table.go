package coverage

import "math/bits"

// table is an insert-only, exact hash set of fixed-width keys (w words each).
// Keys are numbered 0, 1, … in insertion order (their ref) and stored
// contiguously; the index is open addressing with linear probing over one tag
// byte and one uint32 ref per slot. It grows by half when 80% full, so the
// index costs 5/0.8 … 5/0.53 bytes per key on top of the key words. Tags keep
// most probes from touching keys.
type table struct {
	w     int
	n     int
	keys  []uint64 // n*w words
	tags  []uint8  // 0 = empty slot
	slots []uint32 // ref of the key in each used slot
}

const maxLoadNum, maxLoadDen = 4, 5 // grow above 80% load

func newTable(w int) table { return table{w: w} }

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

// key returns the words of key ref (a view, valid until the next insert).
func (t *table) key(ref uint32) []uint64 {
	i := int(ref) * t.w
	return t.keys[i : i+t.w : i+t.w]
}

func (t *table) equal(ref uint32, k []uint64) bool {
	if t.w == 1 {
		return t.keys[ref] == k[0]
	}
	i := int(ref) * t.w
	for j, x := range k {
		if t.keys[i+j] != x {
			return false
		}
	}
	return true
}

// lookup returns the ref of k.
func (t *table) lookup(k []uint64) (uint32, bool) {
	if t.n == 0 {
		return 0, false
	}
	h := hashKey(k)
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

// has reports whether k is in the table.
func (t *table) has(k []uint64) bool {
	_, ok := t.lookup(k)
	return ok
}

// insert adds k if absent and returns its ref and whether it was added.
func (t *table) insert(k []uint64) (uint32, bool) {
	if (t.n+1)*maxLoadDen > len(t.slots)*maxLoadNum {
		t.grow()
	}
	h := hashKey(k)
	tag, size := hashTag(h), len(t.tags)
	i := slot(h, size)
	for t.tags[i] != 0 {
		if t.tags[i] == tag {
			if r := t.slots[i]; t.equal(r, k) {
				return r, false
			}
		}
		if i++; i == size {
			i = 0
		}
	}
	if t.n == 1<<31 {
		panic("coverage: more than 2^31 keys in one table")
	}
	r := uint32(t.n)
	t.tags[i], t.slots[i] = tag, r
	t.keys = append(grow(t.keys, len(k)), k...)
	t.n++
	return r, true
}

// reserve makes room for n keys without further growth of the index.
func (t *table) reserve(n int) {
	if n*maxLoadDen > len(t.slots)*maxLoadNum {
		t.rehash(max(16, n*maxLoadDen/maxLoadNum*9/8))
	}
	if need := n * t.w; cap(t.keys) < need {
		ks := make([]uint64, len(t.keys), need)
		copy(ks, t.keys)
		t.keys = ks
	}
}

func (t *table) grow() {
	t.rehash(max(16, len(t.slots)*3/2))
}

// rehash rebuilds the index with size slots from the stored keys.
func (t *table) rehash(size int) {
	t.tags = make([]uint8, size)
	t.slots = make([]uint32, size)
	for r := range t.n {
		h := hashKey(t.key(uint32(r)))
		i := slot(h, size)
		for t.tags[i] != 0 {
			if i++; i == size {
				i = 0
			}
		}
		t.tags[i], t.slots[i] = hashTag(h), uint32(r)
	}
}

// bytes is the memory held by the table.
func (t *table) bytes() int { return 8*cap(t.keys) + cap(t.tags) + 4*cap(t.slots) }

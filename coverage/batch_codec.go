package coverage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
)

// batchCodecVersion is the first byte of an encoded Batch. Version 1 sent
// every key whole (5 bytes for the default S, 8 per variable outside S) and
// every time whole; version 2 sends the differences from the previous state,
// which a simulation's consecutive first visits keep small.
const batchCodecVersion = 2

// AppendBinary appends the encoding of the batch to buf (encoding.
// BinaryAppender): a version byte, then for the states inside S and then
// those outside it, the key width in bytes and the state count, and per
// state, in the order of first visits, each word of its key as the zig-zag
// varint of its difference from the previous state's word and the zig-zag
// varint of its first visit time's difference from the previous one's. A
// worker process sends it to the coordinator, which decodes it with
// [Batch.UnmarshalBinary] into a batch over the same space.
func (b *Batch) AppendBinary(buf []byte) ([]byte, error) {
	buf = append(buf, batchCodecVersion)
	buf = appendTable(buf, &b.in, b.inAt)
	buf = appendTable(buf, &b.oor, b.oorAt)
	return buf, nil
}

// MarshalBinary implements encoding.BinaryMarshaler.
func (b *Batch) MarshalBinary() ([]byte, error) { return b.AppendBinary(nil) }

func appendTable(buf []byte, t *table, at []int64) []byte {
	buf = binary.AppendUvarint(buf, uint64(t.kb))
	buf = binary.AppendUvarint(buf, uint64(t.n))
	var prevAt int64
	prev := make([]uint64, t.w)
	for r := range t.n {
		for j := range t.w {
			x := t.word(uint32(r), j)
			buf = binary.AppendVarint(buf, int64(x-prev[j]))
			prev[j] = x
		}
		buf = binary.AppendVarint(buf, at[r]-prevAt)
		prevAt = at[r]
	}
	return buf
}

// UnmarshalBinary replaces the batch's contents with an encoded batch. The
// batch must be over the space of the batch that was encoded (a batch of
// NewBatch or Store.NewBatch); a key width that differs is an error, and so
// are a key outside the space (a granule past a variable's range, bits
// outside every variable's field) and a state that occurs twice. Nothing
// in data is trusted: it comes from another process.
//
// The decoded batch is ready for [Store.AddBatches] without the hash index
// that Observe needs (building it was most of a coordinator's decoding
// time); Observe builds it on first use.
func (b *Batch) UnmarshalBinary(data []byte) error {
	if len(data) == 0 || data[0] != batchCodecVersion {
		return errors.New("coverage: batch encoding: unknown version")
	}
	b.Reset()
	rest, err := b.readTable(data[1:], &b.in, &b.inAt, true)
	if err == nil {
		rest, err = b.readTable(rest, &b.oor, &b.oorAt, false)
	}
	if err == nil && len(rest) != 0 {
		err = fmt.Errorf("%d trailing bytes", len(rest))
	}
	if err != nil {
		b.Reset()
		return fmt.Errorf("coverage: batch encoding: %w", err)
	}
	b.unindexed = true
	return nil
}

func (b *Batch) readTable(data []byte, t *table, at *[]int64, inS bool) ([]byte, error) {
	kb, n1 := binary.Uvarint(data)
	if n1 <= 0 || kb != uint64(t.kb) {
		return nil, fmt.Errorf("key width %d, this space has %d", kb, t.kb)
	}
	data = data[n1:]
	n, n2 := binary.Uvarint(data)
	// Every state takes at least one byte per word and one for its time.
	if n2 <= 0 || n > uint64(len(data))/uint64(t.w+1) {
		return nil, errors.New("bad state count")
	}
	data = data[n2:]
	w := t.w
	// Keys are decoded straight into the table's packed bytes. A scratch
	// of decoded words, kept by the batch for its next decoding, would be
	// held by every result waiting for its merge, at 8 bytes a word
	// against kb bytes a key (bench/results/decoded-result-scratch-20261124.md).
	t.reserveKeys(int(n))
	*at = grow(*at, int(n))
	k := b.okey
	if inS {
		k = b.key
	}
	clear(k)
	var prevAt int64
	for i := range int(n) {
		for j := range w {
			d, m := binary.Varint(data)
			if m <= 0 {
				return nil, errors.New("bad key")
			}
			data = data[m:]
			k[j] += uint64(d)
		}
		if inS && !b.ly.validKey(k) {
			return nil, fmt.Errorf("state %d is outside the space", i)
		}
		d, m := binary.Varint(data)
		if m <= 0 {
			return nil, errors.New("bad visit time")
		}
		data = data[m:]
		prevAt += d
		*at = append(*at, prevAt)
		t.append(k)
	}
	if dup := b.seen.firstRepeat(t); dup >= 0 {
		return nil, fmt.Errorf("state %d repeats an earlier one", dup)
	}
	return data, nil
}

// keySet finds a repeated key among decoded keys without the cost of a
// table (no key bytes, no tags): 4 bytes a slot, rebuilt per batch.
type keySet struct{ slots []uint32 } // 1 + the index of the key in each used slot; 0: empty

// firstRepeat returns the ref of the first key of table t, whose keys
// are not indexed, that equals an earlier one, or -1.
func (s *keySet) firstRepeat(t *table) int {
	n := t.n
	size := 16
	if n > 4 {
		size = 1 << bits.Len(uint(2*n-1))
	}
	if cap(s.slots) < size {
		s.slots = make([]uint32, size)
	}
	s.slots = s.slots[:size]
	clear(s.slots)
	mask := uint64(size - 1)
	for i := range n {
		k := t.key(uint32(i))
		for p := hashKey(k) & mask; ; p = (p + 1) & mask {
			j := s.slots[p]
			if j == 0 {
				s.slots[p] = uint32(i + 1)
				break
			}
			if t.equal(j-1, k) {
				return i
			}
		}
	}
	return -1
}

package coverage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// batchCodecVersion is the first byte of an encoded Batch.
const batchCodecVersion = 1

// AppendBinary appends the encoding of the batch to buf (encoding.
// BinaryAppender): a version byte, then for the states inside S and then
// those outside it, the key width in bytes, the state count, and per state
// its packed key and its first visit time (uvarints and zig-zag varints).
// A worker process sends it to the coordinator, which decodes it with
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
	buf = append(buf, t.keys[:t.n*t.kb]...)
	for _, x := range at[:t.n] {
		buf = binary.AppendVarint(buf, x)
	}
	return buf
}

// UnmarshalBinary replaces the batch's contents with an encoded batch. The
// batch must be over the space of the batch that was encoded (a batch of
// NewBatch or Store.NewBatch); a key width that differs is an error.
func (b *Batch) UnmarshalBinary(data []byte) error {
	if len(data) == 0 || data[0] != batchCodecVersion {
		return errors.New("coverage: batch encoding: unknown version")
	}
	b.Reset()
	rest, err := readTable(data[1:], &b.in, &b.inAt, b.key)
	if err == nil {
		rest, err = readTable(rest, &b.oor, &b.oorAt, b.okey)
	}
	if err == nil && len(rest) != 0 {
		err = fmt.Errorf("%d trailing bytes", len(rest))
	}
	if err != nil {
		b.Reset()
		return fmt.Errorf("coverage: batch encoding: %w", err)
	}
	return nil
}

func readTable(data []byte, t *table, at *[]int64, key []uint64) ([]byte, error) {
	kb, n1 := binary.Uvarint(data)
	if n1 <= 0 || kb != uint64(t.kb) {
		return nil, fmt.Errorf("key width %d, this space has %d", kb, t.kb)
	}
	data = data[n1:]
	n, n2 := binary.Uvarint(data)
	if n2 <= 0 || n > uint64(len(data))/kb {
		return nil, errors.New("bad state count")
	}
	data = data[n2:]
	// n is bounded by the data: room for its keys at once, not by doubling.
	t.reserve(t.n + int(n))
	*at = slices.Grow(*at, int(n))
	keys := data[:int(n)*t.kb]
	data = data[int(n)*t.kb:]
	var word [8]byte
	for i := range int(n) {
		k := keys[i*t.kb : (i+1)*t.kb]
		for j := range key {
			clear(word[:])
			copy(word[:], k[min(8*j, len(k)):])
			key[j] = binary.LittleEndian.Uint64(word[:])
		}
		if _, isNew := t.insert(key); !isNew {
			return nil, errors.New("duplicate state")
		}
		x, m := binary.Varint(data)
		if m <= 0 {
			return nil, errors.New("bad visit time")
		}
		data = data[m:]
		*at = append(*at, x)
	}
	return data, nil
}

package coverage

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The wire encodings of a split store's traffic: a part's share of a
// batch (what the coordinator sends each store part) and the news a part
// returns (what the index merges). Their decoders check what they read,
// because these bytes travel between processes (parts.go describes the
// flow).

// Share fills dst (a batch over the same space) with the share of b that
// part part of parts owns in a store of the given shard count: b's states
// in S whose pooled shard the part keeps, in b's order, and for part 0
// also b's states outside S. It returns the positions of the states in S
// of dst among b's states in S, appended to pos[:0].
func (b *Batch) Share(dst *Batch, pos []uint32, part, parts, shards int) []uint32 {
	dst.Reset()
	mask := uint64(shards - 1)
	pos = pos[:0]
	for r := range b.in.n {
		k := b.in.key(uint32(r))
		if partOf(shardOf(hashKey(k), mask), parts) != part {
			continue
		}
		pos = append(pos, uint32(r))
		dst.in.append(k)
		dst.inAt = append(dst.inAt, b.inAt[r])
	}
	if part == 0 {
		for r := range b.oor.n {
			dst.oor.append(b.oor.key(uint32(r)))
			dst.oorAt = append(dst.oorAt, b.oorAt[r])
		}
	}
	dst.unindexed = true
	return pos
}

// AppendShare appends the encoding of a share (a batch filled by
// [Batch.Share]) and its positions to dst: the count and the positions'
// differences as varints, then the batch's own encoding.
func AppendShare(dst []byte, share *Batch, pos []uint32) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(pos)))
	var prev uint32
	for _, p := range pos {
		dst = binary.AppendUvarint(dst, uint64(p-prev))
		prev = p
	}
	dst, _ = share.AppendBinary(dst)
	return dst
}

// UnmarshalShare replaces b's contents with an encoded share and returns
// its positions, appended to pos[:0]. It checks the encoding (positions
// that increase, one per state in S); [Store.AddShares] checks the share
// against its part.
func (b *Batch) UnmarshalShare(data []byte, pos []uint32) ([]uint32, error) {
	n, m := binary.Uvarint(data)
	if m <= 0 || n > uint64(len(data)) {
		return nil, errors.New("coverage: share encoding: bad count")
	}
	data = data[m:]
	pos = pos[:0]
	var p uint64
	for i := range n {
		d, m := binary.Uvarint(data)
		if m <= 0 || (i > 0 && d == 0) || p+d > 1<<32-1 {
			return nil, errors.New("coverage: share encoding: bad position")
		}
		p, data = p+d, data[m:]
		pos = append(pos, uint32(p))
	}
	if err := b.UnmarshalBinary(data); err != nil {
		return nil, err
	}
	if b.in.n != len(pos) {
		return nil, fmt.Errorf("coverage: share encoding: %d positions for %d states", len(pos), b.in.n)
	}
	return pos, nil
}

// newsVersion is the first byte of encoded PartNews.
const newsVersion = 1

// AppendBinary appends the encoding of the news to buf: a version byte,
// the part, the counts, the key width in words, and per new state the
// varints of its position's, key words' and time's differences from the
// previous one's.
func (n *PartNews) AppendBinary(buf []byte) ([]byte, error) {
	buf = append(buf, newsVersion)
	for _, x := range []uint64{uint64(n.Part), n.Visits, n.OutOfRange, n.OutOfRangeNew, n.OutOfRangeDropped, uint64(len(n.Pos))} {
		buf = binary.AppendUvarint(buf, x)
	}
	if len(n.Pos) == 0 {
		return buf, nil
	}
	w := len(n.keys) / len(n.Pos)
	buf = binary.AppendUvarint(buf, uint64(w))
	prev := make([]uint64, w)
	var pp uint32
	var pat int64
	for r, p := range n.Pos {
		buf = binary.AppendUvarint(buf, uint64(p-pp))
		pp = p
		for j, x := range n.keys[r*w : (r+1)*w] {
			buf = binary.AppendVarint(buf, int64(x-prev[j]))
			prev[j] = x
		}
		buf = binary.AppendVarint(buf, n.At[r]-pat)
		pat = n.At[r]
	}
	return buf, nil
}

// UnmarshalBinary decodes news encoded by AppendBinary. It checks the
// encoding only; [Store.AddNews] checks the news against the index.
func (n *PartNews) UnmarshalBinary(data []byte) error {
	if len(data) == 0 || data[0] != newsVersion {
		return errors.New("coverage: part news: unknown version")
	}
	data = data[1:]
	var hdr [6]uint64
	for i := range hdr {
		x, m := binary.Uvarint(data)
		if m <= 0 {
			return errors.New("coverage: part news: bad header")
		}
		hdr[i], data = x, data[m:]
	}
	if hdr[0] > maxShards || hdr[5] > uint64(len(data)) {
		return errors.New("coverage: part news: bad part or count")
	}
	*n = PartNews{Part: int(hdr[0]), Visits: hdr[1], OutOfRange: hdr[2], OutOfRangeNew: hdr[3], OutOfRangeDropped: hdr[4]}
	cnt := int(hdr[5])
	if cnt == 0 {
		if len(data) != 0 {
			return errors.New("coverage: part news: trailing bytes")
		}
		return nil
	}
	w64, m := binary.Uvarint(data)
	if m <= 0 || w64 == 0 || w64 > 64 || uint64(cnt)*(w64+2) > uint64(len(data)) {
		return errors.New("coverage: part news: bad key width")
	}
	data = data[m:]
	w := int(w64)
	n.Pos = make([]uint32, 0, cnt)
	n.keys = make([]uint64, 0, cnt*w)
	n.At = make([]int64, 0, cnt)
	prev := make([]uint64, w)
	var pp uint64
	var pat int64
	for range cnt {
		d, m := binary.Uvarint(data)
		if m <= 0 || pp+d > 1<<32-1 {
			return errors.New("coverage: part news: bad position")
		}
		data, pp = data[m:], pp+d
		n.Pos = append(n.Pos, uint32(pp))
		for j := range w {
			d, m := binary.Varint(data)
			if m <= 0 {
				return errors.New("coverage: part news: bad key")
			}
			data = data[m:]
			prev[j] += uint64(d)
		}
		n.keys = append(n.keys, prev...)
		d2, m := binary.Varint(data)
		if m <= 0 {
			return errors.New("coverage: part news: bad time")
		}
		data, pat = data[m:], pat+d2
		n.At = append(n.At, pat)
	}
	if len(data) != 0 {
		return errors.New("coverage: part news: trailing bytes")
	}
	return nil
}

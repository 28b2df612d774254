package cluster

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/actfuzz/actfuzz/coverage"
)

// The binary encoding of the store parts' protocol (partRequest,
// partReply). A selection asks a part for a pool once or twice per
// configuration: with gob, whose fresh encoder per message sends its type
// descriptions every time, a pool request and its answer cost 0.09 ms of
// CPU, against 0.9 µs in this encoding (BenchmarkPartWire). Every field
// is written in the order of its struct: integers as (zig-zag) uvarints,
// strings and byte slices after their length, booleans as one byte,
// slices after their count.

// wireReader reads a message; the first malformed field sets err, and
// every read after it returns the zero value.
type wireReader struct {
	b   []byte
	err error
}

// newWireReader reads data, refused beyond maxPartMsg.
func newWireReader(data []byte) *wireReader {
	if len(data) > maxPartMsg {
		return &wireReader{err: fmt.Errorf("message of %d bytes", len(data))}
	}
	return &wireReader{b: data}
}

var errWire = errors.New("malformed message")

func (r *wireReader) uvarint() uint64 { return readVarint(r, binary.Uvarint) }
func (r *wireReader) varint() int64   { return readVarint(r, binary.Varint) }

func readVarint[T uint64 | int64](r *wireReader, read func([]byte) (T, int)) T {
	if r.err != nil {
		return 0
	}
	x, n := read(r.b)
	if n <= 0 {
		r.err = errWire
		return 0
	}
	r.b = r.b[n:]
	return x
}

func (r *wireReader) int() int { return int(r.varint()) }

func (r *wireReader) bool() bool {
	switch x := r.uvarint(); x {
	case 0, 1:
		return x == 1
	}
	r.err = errWire
	return false
}

// bytes returns a slice of the message (nil when empty).
func (r *wireReader) bytes() []byte {
	n := r.uvarint()
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.err = errWire
		return nil
	}
	if n == 0 {
		return nil
	}
	x := r.b[:n:n]
	r.b = r.b[n:]
	return x
}

func (r *wireReader) str() string { return string(r.bytes()) }

// count reads a slice's length, each of whose elements takes at least min
// bytes: a count the message cannot hold is malformed, not an allocation.
func (r *wireReader) count(min int) int {
	n := r.uvarint()
	if r.err == nil && n > uint64(len(r.b)/min) {
		r.err = errWire
	}
	if r.err != nil {
		return 0
	}
	return int(n)
}

// done is the error of the message: a malformed field, or bytes left.
func (r *wireReader) done() error {
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%d bytes after the message", len(r.b))
	}
	return r.err
}

func appendBytes(b, x []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(x))), x...)
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

func (q partRequest) appendBinary(b []byte) []byte {
	b = appendString(b, q.Op)
	b = binary.AppendVarint(b, q.Epoch)
	b = binary.AppendUvarint(b, q.Seq)
	b = appendString(b, q.Object)
	b = appendBytes(b, q.Sum)
	b = binary.AppendVarint(b, int64(q.Parts))
	b = binary.AppendVarint(b, int64(q.OutOfRange))
	b = binary.AppendVarint(b, q.Memory)
	b = binary.AppendUvarint(b, uint64(len(q.Items)))
	for _, it := range q.Items {
		b = appendString(b, it.Key)
		b = appendBytes(b, it.Sum)
		b = binary.AppendUvarint(b, it.Config)
	}
	b = binary.AppendVarint(b, int64(q.Chunk))
	b = binary.AppendUvarint(b, uint64(len(q.Key)))
	for _, x := range q.Key {
		b = binary.AppendUvarint(b, x)
	}
	return binary.AppendVarint(b, int64(q.Keys))
}

func decodePartRequest(data []byte) (partRequest, error) {
	var q partRequest
	r := newWireReader(data)
	q.Op = r.str()
	q.Epoch = r.varint()
	q.Seq = r.uvarint()
	q.Object = r.str()
	q.Sum = r.bytes()
	q.Parts = r.int()
	q.OutOfRange = r.int()
	q.Memory = r.varint()
	if n := r.count(3); n > 0 {
		q.Items = make([]shareItem, n)
		for i := range q.Items {
			q.Items[i] = shareItem{Key: r.str(), Sum: r.bytes(), Config: r.uvarint()}
		}
	}
	q.Chunk = r.int()
	if n := r.count(1); n > 0 {
		q.Key = make([]uint64, n)
		for i := range q.Key {
			q.Key[i] = r.uvarint()
		}
	}
	q.Keys = r.int()
	return q, r.done()
}

func (p partReply) appendBinary(b []byte) []byte {
	b = appendString(b, p.Err)
	b = appendBool(b, p.Missing)
	b = binary.AppendVarint(b, int64(p.Size))
	b = appendBytes(b, p.Sum)
	b = binary.AppendVarint(b, int64(p.Chunks))
	b = appendBytes(b, p.Data)
	b = binary.AppendUvarint(b, uint64(len(p.Visits)))
	for _, v := range p.Visits {
		b = binary.AppendUvarint(b, v.Config)
		b = binary.AppendVarint(b, v.At)
	}
	b = binary.AppendUvarint(b, p.Count)
	b = appendString(b, p.Capped)
	b = appendBool(b, p.NotLoaded)
	b = binary.AppendUvarint(b, uint64(len(p.Lens)))
	for _, n := range p.Lens {
		b = binary.AppendVarint(b, int64(n))
	}
	return b
}

func decodePartReply(data []byte) (partReply, error) {
	var p partReply
	r := newWireReader(data)
	p.Err = r.str()
	p.Missing = r.bool()
	p.Size = r.int()
	p.Sum = r.bytes()
	p.Chunks = r.int()
	p.Data = r.bytes()
	if n := r.count(2); n > 0 {
		p.Visits = make([]coverage.Visit, n)
		for i := range p.Visits {
			p.Visits[i] = coverage.Visit{Config: r.uvarint(), At: r.varint()}
		}
	}
	p.Count = r.uvarint()
	p.Capped = r.str()
	p.NotLoaded = r.bool()
	if n := r.count(1); n > 0 {
		p.Lens = make([]int, n)
		for i := range p.Lens {
			p.Lens[i] = r.int()
		}
	}
	return p, r.done()
}

package cluster

import (
	"bytes"
	"encoding/gob"
	"reflect"
	"testing"

	"github.com/actfuzz/actfuzz/coverage"
)

func wireRequests() []partRequest {
	sum := bytes.Repeat([]byte{7}, 32)
	return []partRequest{
		{},
		{Op: opPool, Epoch: 1763900000123456789, Seq: 41, Key: []uint64{1<<64 - 1, 0, 17, 5}, Keys: 2},
		{Op: opLoad, Epoch: -5, Object: "c1/3", Sum: sum, Parts: 4, OutOfRange: -1, Memory: 8 << 30},
		{Op: opMerge, Epoch: 9, Seq: 1 << 40, Items: []shareItem{{Key: "i12", Sum: sum, Config: 12}, {Key: "l9.3.0", Sum: sum, Config: 1<<64 - 1}}},
		{Op: opNews, Seq: 3, Chunk: 2},
	}
}

func wireReplies() []partReply {
	return []partReply{
		{},
		{Err: "not loaded", Missing: true, NotLoaded: true},
		{Size: 1 << 30, Sum: bytes.Repeat([]byte{1}, 32), Chunks: 3, Data: []byte{0, 1, 2}},
		{Visits: []coverage.Visit{{Config: 5, At: 1 << 41}, {Config: 1<<64 - 1, At: -3}, {Config: 2}}, Lens: []int{2, 1}},
		{Count: 1<<64 - 1},
		{Data: []byte{1}, Capped: "capped: store part 1 holds 2 bytes"},
	}
}

// Requests and replies survive their encoding; a cut, padded or
// overstated message is an error, never a panic or a huge allocation.
func TestPartWire(t *testing.T) {
	for _, q := range wireRequests() {
		body := q.appendBinary(nil)
		got, err := decodePartRequest(body)
		if err != nil || !reflect.DeepEqual(got, q) {
			t.Errorf("request %+v: got %+v, %v", q, got, err)
		}
		for cut := 1; cut <= len(body); cut++ {
			if got, err := decodePartRequest(body[:len(body)-cut]); err == nil {
				t.Errorf("request %+v cut by %d decoded: %+v", q, cut, got)
			}
		}
		if _, err := decodePartRequest(append(body, 0)); err == nil {
			t.Errorf("request %+v padded decoded", q)
		}
	}
	for _, p := range wireReplies() {
		body := p.appendBinary(nil)
		got, err := decodePartReply(body)
		if err != nil || !reflect.DeepEqual(got, p) {
			t.Errorf("reply %+v: got %+v, %v", p, got, err)
		}
		for cut := 1; cut <= len(body); cut++ {
			if got, err := decodePartReply(body[:len(body)-cut]); err == nil {
				t.Errorf("reply %+v cut by %d decoded: %+v", p, cut, got)
			}
		}
		if _, err := decodePartReply(append(body, 0)); err == nil {
			t.Errorf("reply %+v padded decoded", p)
		}
	}
	// Counts and lengths beyond the message, a boolean that is not 0 or
	// 1.
	huge := []byte{0xff, 0xff, 0xff, 0xff, 0x0f}
	bad := map[string][]byte{
		"op length":  huge,
		"item count": append(append(partRequest{}.appendBinary(nil)[:7], huge...), 0, 0),
		"key length": append(partRequest{}.appendBinary(nil)[:9], huge...),
	}
	for name, b := range bad {
		if q, err := decodePartRequest(b); err == nil {
			t.Errorf("%s: decoded %+v", name, q)
		}
	}
	if p, err := decodePartReply([]byte{0, 2, 0, 0, 0, 0, 0, 0, 0, 0}); err == nil {
		t.Errorf("Missing 2 decoded: %+v", p)
	}
	if p, err := decodePartReply(append([]byte{0, 0, 0, 0, 0, 0}, huge...)); err == nil {
		t.Errorf("a visit count beyond the message decoded: %+v", p)
	}
}

// BenchmarkPartWire is a pool request and its answer, encoded and decoded
// on both sides, with gob (fresh coders per message, as the protocol did
// before) and with the binary encoding.
//
//	go test ./act/cluster -run '^$' -bench PartWire -benchmem
func BenchmarkPartWire(b *testing.B) {
	q := partRequest{Op: opPool, Epoch: 1763900000123456789, Seq: 400, Key: []uint64{0x1234567890}, Keys: 1}
	p := partReply{Visits: []coverage.Visit{{Config: 123456, At: 12_000_000_000}, {Config: 99, At: 5_000_000}}, Lens: []int{2}}
	b.Run("gob", func(b *testing.B) {
		for b.Loop() {
			var qb, pb bytes.Buffer
			if err := gob.NewEncoder(&qb).Encode(q); err != nil {
				b.Fatal(err)
			}
			var q2 partRequest
			if err := gob.NewDecoder(&qb).Decode(&q2); err != nil {
				b.Fatal(err)
			}
			if err := gob.NewEncoder(&pb).Encode(p); err != nil {
				b.Fatal(err)
			}
			var p2 partReply
			if err := gob.NewDecoder(&pb).Decode(&p2); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("binary", func(b *testing.B) {
		for b.Loop() {
			if _, err := decodePartRequest(q.appendBinary(nil)); err != nil {
				b.Fatal(err)
			}
			if _, err := decodePartReply(p.appendBinary(nil)); err != nil {
				b.Fatal(err)
			}
		}
	})
}

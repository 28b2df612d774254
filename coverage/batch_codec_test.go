package coverage

import (
	"encoding/binary"
	"math"
	"testing"
)

// An encoded batch decodes into a batch that adds the same states at the
// same times to a store.
func TestBatchCodecRoundTrip(t *testing.T) {
	sp := DefaultSpace()
	a, err := NewBatch(sp)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 500 {
		st := []float64{float64(1 + i%300), float64(1 + i%7), float64(i % 900), float64(i % 50), float64(i % 5)}
		if i%97 == 0 {
			st[0] = 5000 // outside S
		}
		if i%131 == 0 {
			st[2] = math.NaN()
		}
		a.Observe(st, int64(i)*1000-7)
	}
	buf, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewBatch(sp)
	b.Observe([]float64{3, 3, 3, 3, 3}, 1) // replaced
	if err := b.UnmarshalBinary(buf); err != nil {
		t.Fatal(err)
	}
	if a.Len() != b.Len() {
		t.Fatalf("decoded %d states, encoded %d", b.Len(), a.Len())
	}
	sa, _ := NewStore(sp, Options{Seed: 1})
	sb, _ := NewStore(sp, Options{Seed: 1})
	na, _ := sa.AddBatch(a, 0)
	nb, _ := sb.AddBatch(b, 0)
	if na != nb {
		t.Fatalf("new states %d vs %d", na, nb)
	}
	for _, k := range sp.Ks() {
		if sa.VisitedRegions(k) != sb.VisitedRegions(k) {
			t.Fatalf("k=%d: %d vs %d regions", k, sa.VisitedRegions(k), sb.VisitedRegions(k))
		}
	}
	for _, bad := range [][]byte{nil, {9}, buf[:len(buf)-1], append(append([]byte{}, buf...), 0)} {
		if err := b.UnmarshalBinary(bad); err == nil {
			t.Errorf("accepted a corrupt encoding of %d bytes", len(bad))
		}
	}
}

// A decoded batch refuses what no batch of the space can hold, and can be
// observed into afterwards like any other.
func TestBatchCodecRejectsAndObserves(t *testing.T) {
	sp := DefaultSpace()
	a, _ := NewBatch(sp)
	st := []float64{10, 2, 30, 4, 1}
	a.Observe(st, 5)
	a.Observe([]float64{11, 2, 30, 4, 1}, 6)
	buf, _ := a.MarshalBinary()
	b, _ := NewBatch(sp)
	if err := b.UnmarshalBinary(buf); err != nil {
		t.Fatal(err)
	}
	if b.Observe(st, 9) {
		t.Error("a decoded state observed again counts as new")
	}
	if !b.Observe([]float64{12, 2, 30, 4, 1}, 9) || b.Len() != 3 {
		t.Errorf("observing a new state into a decoded batch: %d states", b.Len())
	}
	ly := a.ly
	enc := func(keys ...uint64) []byte {
		out := []byte{batchCodecVersion}
		out = binary.AppendUvarint(out, uint64(ly.kb))
		out = binary.AppendUvarint(out, uint64(len(keys)))
		var prev uint64
		for _, k := range keys {
			out = binary.AppendVarint(out, int64(k-prev))
			out = binary.AppendVarint(out, 1)
			prev = k
		}
		out = binary.AppendUvarint(out, uint64(8*ly.d))
		return binary.AppendUvarint(out, 0)
	}
	if err := b.UnmarshalBinary(enc(1, 2, 3)); err != nil {
		t.Fatalf("a valid hand-made batch: %v", err)
	}
	bads := map[string][]byte{
		"repeated state":     enc(1, 2, 1),
		"bit outside fields": enc(1, 1<<63),
	}
	for j := range ly.d {
		if all := ly.fmask[j] >> ly.off[j]; uint64(ly.n[j]) <= all {
			bads["granule past range"] = enc(ly.fmask[j]) // all ones: past n
		}
	}
	if len(bads) != 3 {
		t.Fatal("the default space has no variable whose field holds more than its granules")
	}
	for name, bad := range bads {
		if err := b.UnmarshalBinary(bad); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

package coverage

import (
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

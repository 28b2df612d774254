package coverage

import "testing"

func TestLimitOutOfRange(t *testing.T) {
	st, err := NewStore(DefaultSpace(), Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	st.LimitOutOfRange(5)
	for i := 0; i < 10; i++ {
		// ssthresh above its range: out of S.
		st.Add([]float64{10, 5000 + float64(i), 100, 10, 0}, Visit{Config: uint64(i), At: 1})
	}
	// A kept state is still recorded after the limit.
	st.Add([]float64{10, 5000, 100, 10, 0}, Visit{Config: 99, At: 2})
	n, visits := st.OutOfRange()
	if n != 5 || visits != 11 || st.OutOfRangeDropped() != 5 {
		t.Fatalf("kept %d, visits %d, dropped %d; want 5, 11, 5", n, visits, st.OutOfRangeDropped())
	}
}

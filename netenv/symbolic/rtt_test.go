package symbolic

import (
	"fmt"
	"testing"
)

// TestQuoIsTruncatedDivision: the quotient of a form by k (rtt.go) is, on
// every vector where the form has the sign decided at the witness, Go's
// truncated division of the form's value; and it is refused when k does
// not divide a coefficient.
func TestQuoIsTruncatedDivision(t *testing.T) {
	const res, scale = 1_000_000, 64 // 1 ms: D = 64, u = 15625 ns
	if got := unitScale(res); got != scale {
		t.Fatalf("unitScale(%d) = %d, want %d", res, got, scale)
	}
	u := int64(res / scale)
	for _, tc := range []struct {
		a, k int64
		c    int64 // constant part, ns
		ok   bool
	}{
		{64, 8, 0, true},
		{64, 8, -31_250_003, true}, // crosses zero near x = 32
		{-8, 8, 1_000_005, true},
		{24, 4, -7, true},
		{16, 2, 1, true},
		{-56, 8, 437_501, true},
		{7, 8, 0, false},
		{12, 8, 5, false},
	} {
		t.Run(fmt.Sprintf("(%d + %d·u·x)/%d", tc.c, tc.a, tc.k), func(t *testing.T) {
			x := &explorer{n: 1, res: res, unit: u, vt: newVecTable(scale)}
			x.lo[0], x.hi[0] = 0, 64
			for w := int64(0); w <= 64; w++ {
				p := x.newPath(&job{witness: [MaxVars]int64{w}}, true)
				s := &sched{p: p, vt: x.vt}
				f := form{at: tc.c + tc.a*u*w}
				f.a[0] = int32(tc.a)
				q, ok := s.quoSigned(&f, tc.k)
				if ok != tc.ok {
					t.Fatalf("w=%d: ok %v, want %v", w, ok, tc.ok)
				}
				if !ok {
					continue
				}
				if q.at != f.at/tc.k {
					t.Fatalf("w=%d: quotient %d at the witness, want %d", w, q.at, f.at/tc.k)
				}
				qc := s.constPart(&q)
				for y := int64(0); y <= 64; y++ {
					fy := tc.c + tc.a*u*y
					if (fy < 0) != (f.at < 0) {
						continue // the other side of the decided sign
					}
					if got, want := qc+int64(q.a[0])*u*y, fy/tc.k; got != want {
						t.Fatalf("w=%d, x=%d: the quotient's form gives %d, %d/%d = %d", w, y, got, fy, tc.k, want)
					}
				}
			}
		})
	}
}

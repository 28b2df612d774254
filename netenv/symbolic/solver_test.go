package symbolic

import (
	"math/rand/v2"
	"testing"
)

// enumerate finds every integer point of a small system by brute force.
func enumerate(n int, bx box, cons []lincon) [][MaxVars]int64 {
	var out [][MaxVars]int64
	var x [MaxVars]int64
	var rec func(k int)
	rec = func(k int) {
		if k == n {
			for i := range cons {
				if !cons[i].holds(x[:n]) {
					return
				}
			}
			out = append(out, x)
			return
		}
		for v := bx.lo[k]; v <= bx.hi[k]; v++ {
			x[k] = v
			rec(k + 1)
		}
	}
	rec(0)
	return out
}

// TestSolverAgainstEnumeration checks feasibility answers and witnesses on
// random systems of the shapes timestamps produce (coefficients in
// {−2…2}), against enumeration of every integer point.
func TestSolverAgainstEnumeration(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var s solver
	feasible, infeasible := 0, 0
	for iter := 0; iter < 3000; iter++ {
		n := 1 + r.IntN(4)
		var bx box
		for i := 0; i < n; i++ {
			bx.lo[i] = int64(r.IntN(3))
			bx.hi[i] = bx.lo[i] + int64(r.IntN(7))
		}
		var cons []lincon
		for k := r.IntN(7); k >= 0; k-- {
			var c lincon
			for i := 0; i < n; i++ {
				c.a[i] = int32(r.IntN(5) - 2)
			}
			c.b = int64(r.IntN(15) - 5)
			if r.IntN(4) == 0 {
				// an equality, as the "=" branch of pseudocode 3 makes
				cons = append(cons, c, lincon{a: neg(c.a), b: -c.b})
				continue
			}
			cons = append(cons, c)
		}
		pts := enumerate(n, bx, cons)
		w, ok := s.point(n, &bx, cons)
		if ok != (len(pts) > 0) {
			t.Fatalf("iter %d: n=%d box=%v cons=%v: solver says %v, enumeration finds %d points", iter, n, bx, cons, ok, len(pts))
		}
		if !ok {
			infeasible++
			continue
		}
		feasible++
		for i := 0; i < n; i++ {
			if w[i] < bx.lo[i] || w[i] > bx.hi[i] {
				t.Fatalf("iter %d: witness %v outside the box %v", iter, w[:n], bx)
			}
		}
		for i := range cons {
			if !cons[i].holds(w[:n]) {
				t.Fatalf("iter %d: witness %v violates %s", iter, w[:n], cons[i].format(n))
			}
		}
	}
	if feasible < 300 || infeasible < 300 {
		t.Fatalf("unbalanced test: %d feasible, %d infeasible systems", feasible, infeasible)
	}
	if s.unknown != 0 {
		t.Fatalf("the search gave up %d times on tiny systems", s.unknown)
	}
}

func neg(a [MaxVars]int32) [MaxVars]int32 {
	for i := range a {
		a[i] = -a[i]
	}
	return a
}

func TestSolverWideBoxes(t *testing.T) {
	// x1 + x2 = 2·x3 + 1 (odd sum) and x1 = x2: no integer point, although
	// the rational relaxation has many; box [1, 16384]^3.
	var s solver
	var bx box
	for i := 0; i < 3; i++ {
		bx.lo[i], bx.hi[i] = 1, 16384
	}
	cons := []lincon{
		{a: [MaxVars]int32{1, 1, -2}, b: 1}, {a: [MaxVars]int32{-1, -1, 2}, b: -1},
		{a: [MaxVars]int32{1, -1}, b: 0}, {a: [MaxVars]int32{-1, 1}, b: 0},
	}
	if w, ok := s.point(3, &bx, cons); ok {
		t.Fatalf("found %v in an integer-infeasible system", w[:3])
	}
	// Drop the parity clash: feasible, and the witness is mid-range.
	cons = cons[2:]
	w, ok := s.point(3, &bx, cons)
	if !ok || w[0] != w[1] || w[0] < 1000 || w[0] > 16000 {
		t.Fatalf("point = %v, %v; want x1 = x2 well inside the box", w[:3], ok)
	}
}

func TestFloorCeil(t *testing.T) {
	for _, c := range []struct{ a, b, f, c int64 }{
		{7, 2, 3, 4}, {-7, 2, -4, -3}, {6, 3, 2, 2}, {-6, 3, -2, -2}, {0, 5, 0, 0}, {-1, 1000000, -1, 0},
	} {
		if f := floorDiv(c.a, c.b); f != c.f {
			t.Errorf("floorDiv(%d,%d) = %d, want %d", c.a, c.b, f, c.f)
		}
		if g := ceilDiv(c.a, c.b); g != c.c {
			t.Errorf("ceilDiv(%d,%d) = %d, want %d", c.a, c.b, g, c.c)
		}
	}
}

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		c    lincon
		want string
	}{
		{lincon{a: [MaxVars]int32{1, -1}, b: 3}, "d1 - d2 <= 3"},
		{lincon{a: [MaxVars]int32{-1}, b: -2}, "d1 >= 2"},
		{lincon{a: [MaxVars]int32{0, -1, 1}, b: -4}, "d2 - d3 >= 4"},
		{lincon{a: [MaxVars]int32{2, 0, -3}, b: 5}, "2*d1 - 3*d3 <= 5"},
	} {
		if got := c.c.format(3); got != c.want {
			t.Errorf("format = %q, want %q", got, c.want)
		}
	}
}

type testRand struct{ r *rand.Rand }

func newRand(seed uint64) testRand      { return testRand{rand.New(rand.NewPCG(seed, seed^0x9e37))} }
func (t testRand) int64n(n int64) int64 { return t.r.Int64N(n) }

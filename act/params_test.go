package act

import (
	"math/rand/v2"
	"testing"
)

// Extrapolation over a range of four decades or more draws log-uniformly,
// so that one step from the top reaches the low decades; narrower ranges
// draw uniformly, as Range.Toward does; draws stay on the chosen side and
// on the grid.
func TestExtrapolate(t *testing.T) {
	for _, tc := range []struct {
		name       string
		r          Range
		from       float64
		dir        int
		below      float64 // count draws below this
		minF, maxF float64 // expected fraction of draws below it
	}{
		// log(5.1/0.101)/log(5000.1/0.101) ≈ 0.36; uniform: 0.001.
		{"app down", Range{Min: 0.001, Max: 10000, Step: 0.1}, 5000, -1, 5, 0.30, 0.42},
		// log((1e-4+1e-6)/1e-6)/log((0.05+1e-6)/1e-6) ≈ 0.43.
		{"loss down", Range{Min: 0, Max: 0.1, Step: 1e-6}, 0.05, -1, 1e-4, 0.37, 0.49},
		// Up from 0.1 Mbit/s: below 100 with log((100.1)/(0.2))/log(10000.1/0.2) ≈ 0.57.
		{"bw up", Range{Min: 0.1, Max: 10000, Step: 0.1}, 0.1, 1, 100, 0.51, 0.63},
		// Three decades (delay): uniform, below 100 of [1, 500] ≈ 0.2.
		{"delay down", Range{Min: 1, Max: 1000, Step: 1}, 500, -1, 100, 0.16, 0.24},
	} {
		rng := rand.New(rand.NewPCG(1, 2))
		n, below := 4000, 0
		for range n {
			v := extrapolate(tc.r, rng, tc.from, tc.dir)
			if v < tc.r.Min || v > tc.r.Max || (tc.dir < 0 && v > tc.from) || (tc.dir > 0 && v < tc.from) {
				t.Fatalf("%s: %v outside [%v, %v] or on the wrong side of %v", tc.name, v, tc.r.Min, tc.r.Max, tc.from)
			}
			if v != tc.r.Snap(v) {
				t.Fatalf("%s: %v is off the grid", tc.name, v)
			}
			if v < tc.below {
				below++
			}
		}
		f := float64(below) / float64(n)
		t.Logf("%s: %.3f of draws below %v", tc.name, f, tc.below)
		if f < tc.minF || f > tc.maxF {
			t.Errorf("%s: %.3f of draws below %v, want %.2f–%.2f", tc.name, f, tc.below, tc.minF, tc.maxF)
		}
	}
}

package act

import (
	"math"
	"math/rand/v2"

	"github.com/actfuzz/actfuzz/netenv"
)

// grid snaps v to the parameter's granularity inside its range.
func (r Range) grid(v float64) float64 {
	n := math.Floor((r.Max-r.Min)/r.Step + 1e-9)
	g := math.Round((v - r.Min) / r.Step)
	g = math.Max(0, math.Min(g, n))
	return r.Min + g*r.Step
}

// between draws uniformly on the grid between a and b (either order).
func (r Range) between(rng *rand.Rand, a, b float64) float64 {
	if a > b {
		a, b = b, a
	}
	return r.grid(a + rng.Float64()*(b-a))
}

// uniformEnv draws p uniformly from P (ACT step 1).
func (c *Campaign) uniformEnv(rng *rand.Rand) netenv.Env {
	var e netenv.Env
	for i, r := range c.Params {
		e.Set(i, r.between(rng, r.Min, r.Max))
	}
	return e
}

// normalize maps p into [0,1]^d for distances and regression.
func (c *Campaign) normalize(e *netenv.Env, dst []float64) {
	for i, r := range c.Params {
		if r.Max > r.Min {
			dst[i] = (e.Get(i) - r.Min) / (r.Max - r.Min)
		} else {
			dst[i] = 0
		}
	}
}

// manEnvs are the 840 hand-picked environments of ACT §4.2 (MAN): loss
// {0, 1e-6 … 1e-1}, bandwidth {1, 10, 100, 250} Mbit/s, delay {8, 20, 40,
// 80, 160} ms, Gamma shape {1, 2.5}, scale {0, 1, 10}, application rate
// 10,000 Mbit/s; the buffer (not in the paper) is 100 packets, ns-3's
// default queue.
func manEnvs() []netenv.Env {
	var out []netenv.Env
	for _, loss := range []float64{0, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1} {
		for _, bw := range []float64{1, 10, 100, 250} {
			for _, d := range []float64{8, 20, 40, 80, 160} {
				for _, sh := range []float64{1, 2.5} {
					for _, sc := range []float64{0, 1, 10} {
						out = append(out, netenv.Env{Loss: loss, BW: bw, Delay: d, QShape: sh, QScale: sc, App: 10000, Buffer: 100})
					}
				}
			}
		}
	}
	return out
}

package act

import (
	"math"
	"math/rand/v2"

	"github.com/actfuzz/actfuzz/netenv"
)

// uniformEnv draws p uniformly from P (ACT step 1).
func (c *Campaign) uniformEnv(rng *rand.Rand) netenv.Env {
	var e netenv.Env
	for i, r := range c.Params {
		e.Set(i, r.Uniform(rng))
	}
	return e
}

// dimP is the dimension of P as the campaign varies it: its parameters
// whose range holds more than one value. Fixed ones (most of the table in
// a campaign that does not name them) take no part in ACT's distances and
// regressions, where they would be constant columns.
func (c *Campaign) dimP() int {
	n := 0
	for _, r := range c.Params {
		if !r.Fixed() {
			n++
		}
	}
	return n
}

// normalize maps the varied parameters of p into [0,1]^dimP for distances
// and regression.
func (c *Campaign) normalize(e *netenv.Env, dst []float64) {
	k := 0
	for i, r := range c.Params {
		if !r.Fixed() {
			dst[k] = r.Normalize(e.Get(i))
			k++
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
						e := netenv.DefaultEnv() // App 10,000 Mbit/s, Buffer 100
						e.Loss, e.BW, e.Delay, e.QShape, e.QScale = loss, bw, d, sh, sc
						out = append(out, e)
					}
				}
			}
		}
	}
	return out
}

// extrapolate draws a value of r on the side of v where dir points (ACT's
// extrapolation, Method 1 lines 20–26, Method 2 lines 9–15). Over a
// numeric range that spans four decades or more above its granularity
// (loss 1e-6…0.1, bandwidth 0.1…10⁴ Mbit/s, application rate 0.001…10⁴
// Mbit/s) the draw is log-uniform: ACT does not say how to draw on a side,
// and a uniform draw from 5,000 Mbit/s toward the minimum lands below
// 5 Mbit/s once in a thousand, so the regimes of the low decades
// (application-limited flows, rare loss), where the paper's huge-cwnd and
// app-limited bugs live, would stay out of reach of steering (issue 21).
// Other ranges (delay, the queuing Gamma, the buffer) keep Range.Toward's
// uniform draw.
func extrapolate(r Range, rng *rand.Rand, v float64, dir int) float64 {
	if r.Categorical() || dir == 0 || !(r.Min >= 0 && r.Step > 0 && (r.Max+r.Step)/(r.Min+r.Step) >= 1e4) {
		return r.Toward(rng, v, dir)
	}
	lo, hi := v, r.Max
	if dir < 0 {
		lo, hi = r.Min, v
	}
	a, b := math.Log(lo+r.Step), math.Log(hi+r.Step)
	return r.Snap(math.Exp(a+rng.Float64()*(b-a)) - r.Step)
}

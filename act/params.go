package act

import (
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

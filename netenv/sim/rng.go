package sim

import (
	"math"
	"math/rand/v2"
)

// Stream identifies an independent random process of a run. Each process
// draws from its own PRNG so that adding draws to one (say, more loss
// decisions) never shifts another (say, queuing delays).
type Stream uint64

// The random processes of a run. Values are part of the replay format: never
// renumber them.
const (
	StreamLoss Stream = 1 + iota
	StreamQueueDelay
	StreamApp
	StreamReverseLoss
	StreamMisc
	// StreamAQM is a RED bottleneck's early-drop decisions.
	StreamAQM
)

// splitmix64 is Steele, Lea & Flood's SplitMix64 finalizer, used to derive
// well-separated stream seeds from (run seed, stream, flow).
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// NewRand returns the PRNG of one stream of one flow (or link) of a run.
// math/rand/v2's PCG is a specified algorithm, so the sequence is the same on
// every machine and Go version.
func NewRand(seed uint64, stream Stream, index uint64) *rand.Rand {
	a := splitmix64(seed ^ splitmix64(uint64(stream)<<32^index))
	b := splitmix64(a ^ 0x5851f42d4c957f2d)
	return rand.New(rand.NewPCG(a, b))
}

// Gamma draws from Gamma(shape, scale) by Marsaglia & Tsang's method (ACM
// TOMS 26(3), 2000), with shape < 1 boosted by U^(1/shape). It uses only
// +, −, ×, ÷, sqrt and the portable log below, all correctly rounded or
// computed in explicitly rounded steps, so draws are identical on every
// machine.
func Gamma(r *rand.Rand, shape, scale float64) float64 {
	if shape <= 0 || scale <= 0 {
		return 0
	}
	boost := 1.0
	if shape < 1 {
		// Gamma(a) = Gamma(a+1)·U^(1/a).
		u := r.Float64()
		for u == 0 {
			u = r.Float64()
		}
		boost = portableExp(float64(portableLog(u) / shape))
		shape++
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(float64(9*d))
	for {
		x := r.NormFloat64()
		v := float64(1 + float64(c*x))
		if v <= 0 {
			continue
		}
		v = float64(float64(v*v) * v)
		u := r.Float64()
		x2 := float64(x * x)
		if u < float64(1-float64(0.0331*float64(x2*x2))) {
			return float64(float64(d*v)*boost) * scale
		}
		if u > 0 && portableLog(u) < float64(0.5*x2)+float64(d*float64(1-v+portableLog(v))) {
			return float64(float64(d*v)*boost) * scale
		}
	}
}

// portableLog is ln(x) for x > 0 from the exact decomposition x = m·2^e
// and the series ln(m) = 2·atanh((m−1)/(m+1)), every step explicitly
// rounded. Accurate to a few ulps, and identical everywhere (unlike
// math.Log, which has per-architecture assembly).
func portableLog(x float64) float64 {
	m, e := math.Frexp(x) // m in [0.5, 1)
	if m < math.Sqrt2/2 {
		m *= 2
		e--
	}
	t := float64((m - 1) / (m + 1))
	t2 := float64(t * t)
	sum, term := 0.0, t
	for k := 1.0; k < 40; k += 2 {
		sum = float64(sum + float64(term/k))
		term = float64(term * t2)
	}
	return float64(2*sum) + float64(float64(e)*math.Ln2)
}

// portableExp is e^x for x ≤ 0 by range reduction and a Taylor series,
// every step explicitly rounded.
func portableExp(x float64) float64 {
	if x < -700 {
		return 0
	}
	k := math.Floor(float64(x / math.Ln2))
	r := float64(x - float64(k*math.Ln2))
	sum, term := 1.0, 1.0
	for n := 1.0; n < 30; n++ {
		term = float64(float64(term*r) / n)
		sum = float64(sum + term)
	}
	return math.Ldexp(sum, int(k))
}

package fuzz

import (
	"encoding/binary"
	"math/bits"
	"time"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/netenv"
)

// Input layout. A fuzzer's byte string is read as little-endian 64-bit words
// (a short tail is zero-padded; missing words are zero; extra bytes are
// ignored):
//
//	word 0          seed e, as is
//	word 1          number of phases n = 1 + w mod MaxPhases
//	per phase i:    ParamWords words, one per row of netenv's parameter
//	                table, in order: grid index g = w mod (N+1) of the
//	                campaign's Range (netenv.Range.Point): for a numeric
//	                range N = floor((Max-Min)/Step) and the value is
//	                min(Min + g·Step, Max); for a categorical one, g
//	                chooses among its values
//	                then, for every phase but the last, 1 word: the gap
//	                d = t_i - t_{i-1} in ns (t_0 = 0), 1 ≤ d ≤ MaxGap
//
// A gap word holds a 6-bit exponent x (top bits) and a mantissa m (low 58
// bits): e = x for x ≤ 41, e = x-22 for x ≥ 42, d = 2^e + m mod 2^e. So
// random words give gaps that are log-uniform over 1 ns … 73 min, with twice
// the weight on 1 ms … 73 min, and every gap has an exact encoding (x = e).
// Switch times are strictly increasing and at most (MaxPhases-1)·MaxGap
// (3.7 h, under netenv.DefaultMaxTime).
//
// Every byte string decodes to a schedule inside P: no rejection, no loop.
// The one cross-parameter constraint of netenv.Env.Validate that the
// per-parameter ranges of a campaign do not imply (Gamma mean qshape·qscale
// ≤ netenv.MaxQMean) is enforced by lowering qscale on its grid.
const (
	// MaxPhases is the most phases a decoded schedule has.
	MaxPhases = 4
	// MaxGap is the longest time between two switches (2^42-1 ns).
	MaxGap = time.Duration(1<<42 - 1)
	// ParamWords is the number of words per phase (one per row of
	// netenv's parameter table).
	ParamWords = netenv.NumParams
	// MaxInputLen is the length of the longest meaningful input.
	MaxInputLen = 8 * (2 + MaxPhases*ParamWords + MaxPhases - 1)
)

const (
	gapExpBits  = 6
	gapExpShift = 64 - gapExpBits
	gapMaxExp   = 41
	gapMantMask = 1<<gapExpShift - 1
)

// words reads data as little-endian uint64 words.
type words struct {
	data []byte
	off  int
}

func (w *words) next() uint64 {
	if w.off >= len(w.data) {
		w.off += 8
		return 0
	}
	if w.off+8 <= len(w.data) {
		v := binary.LittleEndian.Uint64(w.data[w.off:])
		w.off += 8
		return v
	}
	var buf [8]byte
	copy(buf[:], w.data[w.off:])
	w.off += 8
	return binary.LittleEndian.Uint64(buf[:])
}

func decodeGap(w uint64) time.Duration {
	e := uint(w >> gapExpShift)
	if e > gapMaxExp {
		e -= 1<<gapExpBits - (gapMaxExp + 1) // 42…63 → 20…41
	}
	m := w & gapMantMask & (1<<e - 1)
	return time.Duration(uint64(1)<<e + m)
}

func encodeGap(d time.Duration) uint64 {
	switch {
	case d < 1:
		d = 1
	case d > MaxGap:
		d = MaxGap
	}
	e := uint(bits.Len64(uint64(d)) - 1)
	return uint64(e)<<gapExpShift | (uint64(d) - 1<<e)
}

// Decode maps any byte string to a simulation configuration G of campaign c
// whose every phase lies inside c.Params and passes netenv validation (see
// the layout above). It never fails and never loops.
func Decode(c *act.Campaign, data []byte) act.Config {
	w := words{data: data}
	g := act.Config{Seed: w.next()}
	n := 1 + int(w.next()%MaxPhases)
	g.Schedule = make(netenv.Schedule, n)
	var t time.Duration
	for i := 0; i < n; i++ {
		var e netenv.Env
		for j, r := range c.Params {
			e.Set(j, r.Point(w.next()%(r.Points()+1)))
		}
		fixEnv(c, &e)
		g.Schedule[i].Env = e
		if i < n-1 {
			t += decodeGap(w.next())
			g.Schedule[i].Until = t
		}
	}
	return g
}

// qscaleRow is the row of qscale, which fixEnv lowers.
var qscaleRow = netenv.ParamIndex("qscale")

// fixEnv enforces the constraint of netenv.Env.Validate that spans several
// parameters (Gamma mean qshape·qscale ≤ netenv.MaxQMean) by lowering
// qscale to the largest grid point that satisfies it. If even the lowest
// qscale of the campaign does not, P has no valid point with this qshape,
// and qshape falls back to 0 (outside P, but valid).
func fixEnv(c *act.Campaign, e *netenv.Env) {
	if e.QShape*e.QScale <= netenv.MaxQMean {
		return
	}
	r := c.Params[qscaleRow]
	lim := netenv.MaxQMean / e.QShape
	for i := 0; i < 8; i++ { // a few shrinking tries absorb rounding
		if g := r.FloorIndex(lim); e.QShape*r.Point(g) <= netenv.MaxQMean {
			e.QScale = r.Point(g)
			return
		}
		lim *= 1 - 1e-9
	}
	e.QScale = r.Min
	if e.QShape*e.QScale > netenv.MaxQMean {
		e.QShape = 0
	}
}

// Encode is the inverse of Decode: Decode(c, Encode(c, g)) equals g (with
// Step cleared) when every parameter of every phase is a grid point of c's
// ranges (as ACT's selector and Decode produce them), the schedule has at
// most MaxPhases phases and no gap exceeds MaxGap. Otherwise the result
// decodes to the nearest such configuration: values snap to the grid,
// gaps are clamped to [1 ns, MaxGap], and phases after the MaxPhases-th are
// dropped (the last kept phase then runs to the end, so the run is the same
// up to that switch).
func Encode(c *act.Campaign, g act.Config) []byte {
	n := min(max(len(g.Schedule), 1), MaxPhases)
	out := make([]byte, 0, 8*(2+n*ParamWords+n-1))
	put := func(v uint64) { out = binary.LittleEndian.AppendUint64(out, v) }
	put(g.Seed)
	put(uint64(n - 1))
	var last time.Duration
	for i := 0; i < n; i++ {
		var e netenv.Env
		if i < len(g.Schedule) {
			e = g.Schedule[i].Env
		}
		for j, r := range c.Params {
			put(r.Index(e.Get(j)))
		}
		if i < n-1 {
			until := g.Schedule[i].Until
			put(encodeGap(until - last))
			last += decodeGap(encodeGap(until - last))
		}
	}
	return out
}

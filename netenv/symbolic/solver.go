package symbolic

import (
	"fmt"
	"math"
	"strings"
)

// MaxVars is the largest window: the number of uncertain delays d_1…d_n a
// scenario may declare.
const MaxVars = 8

// lincon is the linear constraint Σ a_i·x_i ≤ b over the integer delay
// variables x_i, measured in units of the resolution.
type lincon struct {
	a [MaxVars]int32
	b int64
}

func (c *lincon) zero() bool { return c.a == [MaxVars]int32{} }

func gcd(a, b int64) int64 {
	if a < 0 {
		a = -a
	}
	if b < 0 {
		b = -b
	}
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// floorDiv is ⌊a/b⌋ for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && (a < 0) {
		q--
	}
	return q
}

// ceilDiv is ⌈a/b⌉ for b > 0.
func ceilDiv(a, b int64) int64 { return -floorDiv(-a, b) }

// normalize divides by the gcd of the coefficients and rounds b down, which
// is exact over the integers (the Omega test's normalization).
func (c *lincon) normalize() {
	var g int64
	for _, v := range c.a {
		if v != 0 {
			g = gcd(g, int64(v))
		}
	}
	if g > 1 {
		for i := range c.a {
			c.a[i] /= int32(g)
		}
		c.b = floorDiv(c.b, g)
	}
}

// negate returns the integer complement of c: Σ a_i·x_i ≥ b+1.
func (c lincon) negate() lincon {
	var n lincon
	for i, v := range c.a {
		n.a[i] = -v
	}
	n.b = -c.b - 1
	return n
}

// holds reports whether the integer point x satisfies c.
func (c *lincon) holds(x []int64) bool {
	var s int64
	for i := range x {
		s += int64(c.a[i]) * x[i]
	}
	return s <= c.b
}

// format renders c over variables named d1…dn (in units of the
// resolution), with a positive leading coefficient: "d1 - d2 <= 3",
// "d2 >= 1002".
func (c *lincon) format(n int) string {
	a, b, op := c.a, c.b, "<="
	for i := 0; i < n; i++ {
		if a[i] != 0 {
			if a[i] < 0 {
				for j := range a {
					a[j] = -a[j]
				}
				b, op = -b, ">="
			}
			break
		}
	}
	var sb strings.Builder
	first := true
	for i := 0; i < n; i++ {
		v := a[i]
		if v == 0 {
			continue
		}
		switch {
		case first && v == 1:
		case first:
			fmt.Fprintf(&sb, "%d*", v)
		case v == 1:
			sb.WriteString(" + ")
		case v == -1:
			sb.WriteString(" - ")
		case v < 0:
			fmt.Fprintf(&sb, " - %d*", -v)
		default:
			fmt.Fprintf(&sb, " + %d*", v)
		}
		fmt.Fprintf(&sb, "d%d", i+1)
		first = false
	}
	if first {
		sb.WriteString("0")
	}
	fmt.Fprintf(&sb, " %s %d", op, b)
	return sb.String()
}

// box is per-variable integer bounds.
type box struct {
	lo, hi [MaxVars]int64
}

// rangeOf is the minimum and maximum of Σ a_i·x_i over the box.
func (bx *box) rangeOf(a *[MaxVars]int32, n int) (lo, hi int64) {
	for i := 0; i < n; i++ {
		v := int64(a[i])
		switch {
		case v > 0:
			lo += v * bx.lo[i]
			hi += v * bx.hi[i]
		case v < 0:
			lo += v * bx.hi[i]
			hi += v * bx.lo[i]
		}
	}
	return lo, hi
}

// propagate tightens the box with the constraints (bounds propagation) and
// reports false when it becomes empty.
func (bx *box) propagate(n int, cons []lincon) bool {
	for round := 0; round < 8; round++ {
		changed := false
		for k := range cons {
			c := &cons[k]
			lo, _ := bx.rangeOf(&c.a, n)
			if lo > c.b {
				return false
			}
			for i := 0; i < n; i++ {
				v := int64(c.a[i])
				if v == 0 {
					continue
				}
				// Minimum of the other terms.
				var own int64
				if v > 0 {
					own = v * bx.lo[i]
				} else {
					own = v * bx.hi[i]
				}
				rest := lo - own
				slack := c.b - rest // v·x_i ≤ slack
				if v > 0 {
					if u := floorDiv(slack, v); u < bx.hi[i] {
						bx.hi[i] = u
						changed = true
					}
				} else {
					if l := ceilDiv(-slack, -v); l > bx.lo[i] {
						bx.lo[i] = l
						changed = true
					}
				}
				if bx.lo[i] > bx.hi[i] {
					return false
				}
				lo, _ = bx.rangeOf(&c.a, n)
			}
		}
		if !changed {
			return true
		}
	}
	return true
}

// solver decides integer feasibility of small systems of linear
// constraints exactly: Fourier–Motzkin elimination with integer
// normalization projects the system onto one variable at a time, and the
// variables are assigned in order (midpoint of the projected interval first,
// backtracking over other values), so that every answer "feasible" comes
// with an integer witness that satisfies every constraint.
type solver struct {
	calls   uint64
	unknown uint64 // searches that gave up (treated as infeasible)
	buf     []lincon
}

// maxTries bounds the values tried for one variable before the search
// gives up on a branch of the assignment; exhaustiveBudget bounds the
// nodes of the exhaustive search that follows.
const (
	maxTries         = 48
	exhaustiveBudget = 1 << 16
)

// point finds an integer point of cons inside bx, preferring the middle of
// each projected interval (so that witnesses avoid ties and boundaries when
// they can). It reports ok=false when there is none.
func (s *solver) point(n int, bx *box, cons []lincon) (x [MaxVars]int64, ok bool) {
	s.calls++
	b := *bx
	if !b.propagate(n, cons) {
		return x, false
	}
	sys := make([]lincon, 0, len(cons)+2*n)
	sys = append(sys, cons...)
	for i := 0; i < n; i++ {
		var up, dn lincon
		up.a[i], up.b = 1, b.hi[i]
		dn.a[i], dn.b = -1, -b.lo[i]
		sys = append(sys, up, dn)
	}
	budget := 4096
	res, st := s.assign(n, 0, sys, x, &budget, maxTries)
	if st == gaveUp {
		// The sampled values missed. Forms with coefficients like 17
		// and 8 (RTT estimates, rtt.go) cut thin strips whose integer
		// points follow residues the samples need not hit, and whose
		// real shadow is much wider than their integer one; every such
		// search seen so far was infeasible and took about a thousand
		// nodes to enumerate. Enumerate every value then, within a
		// larger budget.
		budget = exhaustiveBudget
		res, st = s.assign(n, 0, sys, x, &budget, math.MaxInt64)
	}
	switch st {
	case found:
		return res, true
	case gaveUp:
		s.unknown++
	}
	return x, false
}

type status uint8

const (
	none status = iota
	found
	gaveUp
)

// assign tries the values of x_k: all of them when its projected interval
// is narrower than tries, else maxTries-2 of them from the middle and the
// two ends (giving up when none extends to a point).
func (s *solver) assign(n, k int, sys []lincon, x [MaxVars]int64, budget *int, tries int64) ([MaxVars]int64, status) {
	if k == n {
		for i := range sys {
			if sys[i].b < 0 && sys[i].zero() {
				return x, none
			}
		}
		return x, found
	}
	lo, hi, ok := project(n, k, sys)
	if !ok || lo > hi {
		return x, none
	}
	exhaustive := hi-lo < tries
	if exhaustive && hi-lo >= int64(*budget) {
		return x, gaveUp // the enumeration cannot finish
	}
	sub := make([]lincon, len(sys))
	res := none
	for _, v := range candidates(lo, hi, exhaustive) {
		*budget--
		if *budget < 0 {
			return x, gaveUp
		}
		copy(sub, sys)
		for i := range sub {
			if a := sub[i].a[k]; a != 0 {
				sub[i].b -= int64(a) * v
				sub[i].a[k] = 0
			}
		}
		x[k] = v
		r, st := s.assign(n, k+1, sub, x, budget, tries)
		if st == found {
			return r, found
		}
		if st == gaveUp {
			res = gaveUp
		}
	}
	if !exhaustive {
		res = gaveUp
	}
	return x, res
}

// candidates lists the values to try for a variable in [lo, hi]: from the
// middle outwards, all of them when exhaustive, else maxTries-2 of them and
// the two ends.
func candidates(lo, hi int64, exhaustive bool) []int64 {
	mid := lo + (hi-lo)/2
	out := make([]int64, 0, min(hi-lo+1, maxTries))
	limit := maxTries - 2
	for d := int64(0); ; d++ {
		a, b := mid+d, mid-d
		inA, inB := a <= hi, b >= lo && d > 0
		if !inA && !inB {
			break
		}
		if inA {
			out = append(out, a)
		}
		if inB {
			out = append(out, b)
		}
		if !exhaustive && len(out) >= limit {
			break
		}
	}
	if !exhaustive {
		out = append(out, lo, hi)
	}
	return out
}

// project eliminates every variable after k from sys by Fourier–Motzkin and
// returns the integer bounds it leaves on x_k (variables before k are
// already substituted). ok=false means infeasible.
func project(n, k int, sys []lincon) (lo, hi int64, ok bool) {
	cur := dedup(sys)
	for {
		// Pick the remaining variable after k with the fewest pairs.
		best, bestCost := -1, 0
		for j := k + 1; j < n; j++ {
			pos, neg := 0, 0
			for i := range cur {
				switch a := cur[i].a[j]; {
				case a > 0:
					pos++
				case a < 0:
					neg++
				}
			}
			if pos+neg == 0 {
				continue
			}
			cost := pos*neg - pos - neg
			if best < 0 || cost < bestCost {
				best, bestCost = j, cost
			}
		}
		if best < 0 {
			break
		}
		var ok bool
		cur, ok = eliminate(cur, best)
		if !ok {
			return 0, 0, false
		}
	}
	lo, hi = -1<<62, 1<<62
	for i := range cur {
		c := &cur[i]
		a := int64(c.a[k])
		switch {
		case a == 0:
			if c.b < 0 {
				return 0, 0, false
			}
		case a > 0:
			hi = min(hi, floorDiv(c.b, a))
		default:
			lo = max(lo, ceilDiv(-c.b, -a))
		}
	}
	return lo, hi, true
}

// eliminate removes variable j by Fourier–Motzkin. ok=false: a constant
// constraint is violated (the system is infeasible).
func eliminate(cons []lincon, j int) ([]lincon, bool) {
	var pos, neg, out []lincon
	for _, c := range cons {
		switch a := c.a[j]; {
		case a > 0:
			pos = append(pos, c)
		case a < 0:
			neg = append(neg, c)
		default:
			out = append(out, c)
		}
	}
	for _, p := range pos {
		for _, q := range neg {
			ap, aq := int64(p.a[j]), int64(-q.a[j])
			var c lincon
			big := false
			for i := range c.a {
				v := aq*int64(p.a[i]) + ap*int64(q.a[i])
				if v > 1<<30 || v < -(1<<30) {
					big = true
				}
				c.a[i] = int32(v)
			}
			c.a[j] = 0
			c.b = aq*p.b + ap*q.b
			if big {
				// Coefficients this large never arise from event
				// timestamps; drop the (weaker) combination rather
				// than overflow. Dropping only relaxes the projection.
				continue
			}
			c.normalize()
			if c.zero() {
				if c.b < 0 {
					return nil, false
				}
				continue
			}
			out = append(out, c)
		}
	}
	return dedup(out), true
}

// dedup keeps, for each coefficient vector, the tightest bound, in first
// appearance order.
func dedup(cons []lincon) []lincon {
	if len(cons) < 2 {
		return cons
	}
	idx := make(map[[MaxVars]int32]int, len(cons))
	out := make([]lincon, 0, len(cons))
	for _, c := range cons {
		if i, ok := idx[c.a]; ok {
			if c.b < out[i].b {
				out[i].b = c.b
			}
			continue
		}
		idx[c.a] = len(out)
		out = append(out, c)
	}
	return out
}

package act

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// profile is the mapping p → mean state S̄ sampled by step 1 (ACT §3,
// "profile the mapping from P to S"). Gradients dS̄_j/dp_i are estimated
// by local linear regression (least squares with gonum) over the nearest
// samples in normalized P.
type profile struct {
	dimP, dimS int
	p          [][]float64
	s          [][]float64
}

// gradNeighbours is how many nearest step-1 samples fit the local plane.
const gradNeighbours = 48

func (pr *profile) add(p, s []float64) {
	pr.p = append(pr.p, slices.Clone(p))
	pr.s = append(pr.s, slices.Clone(s))
}

// signs returns sign(dS̄_j/dp_i) at pc for every i: +1, −1 or 0 when the
// fit is inconclusive (too few samples, or a coefficient within noise).
func (pr *profile) signs(pc []float64, j int, out []int) []int {
	out = out[:0]
	n := len(pr.p)
	need := pr.dimP + 2
	if n < need || j >= pr.dimS {
		for i := 0; i < pr.dimP; i++ {
			out = append(out, 0)
		}
		return out
	}
	k := min(gradNeighbours, n)
	type cand struct {
		d float64
		i int
	}
	cands := make([]cand, n)
	for i, p := range pr.p {
		var d float64
		for q := range p {
			x := p[q] - pc[q]
			d += x * x
		}
		cands[i] = cand{d, i}
	}
	slices.SortFunc(cands, func(a, b cand) int {
		if a.d != b.d {
			if a.d < b.d {
				return -1
			}
			return 1
		}
		return a.i - b.i
	})
	x := mat.NewDense(k, pr.dimP+1, nil)
	y := mat.NewVecDense(k, nil)
	var mean float64
	for r := 0; r < k; r++ {
		c := cands[r].i
		x.Set(r, 0, 1)
		for q := 0; q < pr.dimP; q++ {
			x.Set(r, q+1, pr.p[c][q]-pc[q])
		}
		v := pr.s[c][j]
		if math.IsNaN(v) || math.IsInf(v, 0) {
			v = 0
		}
		y.SetVec(r, v)
		mean += math.Abs(v)
	}
	var beta mat.VecDense
	if err := beta.SolveVec(x, y); err != nil {
		for i := 0; i < pr.dimP; i++ {
			out = append(out, 0)
		}
		return out
	}
	scale := mean/float64(k) + 1e-9
	for i := 0; i < pr.dimP; i++ {
		b := beta.AtVec(i + 1)
		switch {
		case math.Abs(b) < 1e-3*scale || math.IsNaN(b):
			out = append(out, 0)
		case b > 0:
			out = append(out, 1)
		default:
			out = append(out, -1)
		}
	}
	return out
}

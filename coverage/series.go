package coverage

// Series is the growth of coverage over simulations for one method: samples
// of the visited regions at every k (ACT §4.2, Figs. 9–10), and optional
// marks such as the start of ACT's steps 2 and 3.
type Series struct {
	Method string
	Total  []uint64 // Total[l]: regions of S at k = 2^l
	Points []Point
	Marks  []Mark
}

// Point is one sample of a Series.
type Point struct {
	Sims    int64    // simulations run
	Visited []uint64 // Visited[l]: visited regions at k = 2^l
}

// Mark labels a moment of a Series, e.g. "step 2".
type Mark struct {
	Sims  int64
	Label string
}

// NewSeries returns an empty series for a method over space.
func NewSeries(method string, space Space) *Series {
	se := &Series{Method: method}
	for _, k := range space.Ks() {
		se.Total = append(se.Total, space.Regions(k))
	}
	return se
}

// MaxSeriesPoints bounds the points Record keeps: past it, every other
// point is dropped (the first and the newest are kept), so a night-long
// campaign's series stays a few hundred kilobytes at an even resolution.
const MaxSeriesPoints = 4096

// Record appends the current visited-region counts of st after sims
// simulations. O(levels).
func (se *Series) Record(sims int64, st *Store) {
	if len(se.Points) >= MaxSeriesPoints {
		n := 0
		for i := 0; i < len(se.Points); i += 2 {
			se.Points[n] = se.Points[i]
			n++
		}
		clear(se.Points[n:])
		se.Points = se.Points[:n]
	}
	p := Point{Sims: sims, Visited: make([]uint64, st.ly.L+1)}
	for l := range p.Visited {
		p.Visited[l] = st.VisitedRegions(1 << l)
	}
	se.Points = append(se.Points, p)
}

// Append adds a snapshot as a point (its totals replace the series' totals
// when the series has none).
func (se *Series) Append(sn Snapshot) {
	if len(se.Total) == 0 {
		se.Total = append([]uint64(nil), sn.Total...)
	}
	if se.Method == "" {
		se.Method = sn.Method
	}
	se.Points = append(se.Points, Point{Sims: sn.Sims, Visited: append([]uint64(nil), sn.Visited...)})
}

// Mark labels the moment after sims simulations.
func (se *Series) Mark(sims int64, label string) {
	se.Marks = append(se.Marks, Mark{Sims: sims, Label: label})
}

// Coverage returns, for every point, the number of simulations and
// coverage(S,k) as a fraction. Points without level k are skipped.
func (se *Series) Coverage(k int) (sims []int64, cov []float64) {
	l, ok := levelOf(k)
	if !ok || l >= len(se.Total) || se.Total[l] == 0 {
		return nil, nil
	}
	for _, p := range se.Points {
		if l < len(p.Visited) {
			sims = append(sims, p.Sims)
			cov = append(cov, float64(p.Visited[l])/float64(se.Total[l]))
		}
	}
	return sims, cov
}

// Growth is the increase of coverage(S,k) (a fraction) over the last window
// simulations: between the last point and the latest point at least window
// simulations before it. ok is false until the series spans window
// simulations. ACT §3.2 stops a step when the growth of coverage(S,κ) is
// below δ (κ = 128, δ = 1.5% per 5,000 simulations in §4.2); compare Growth
// with δ or with δ times the coverage, as the campaign defines it.
func (se *Series) Growth(k int, window int64) (delta float64, ok bool) {
	sims, cov := se.Coverage(k)
	n := len(sims)
	if n == 0 {
		return 0, false
	}
	for i := n - 1; i >= 0; i-- {
		if sims[n-1]-sims[i] >= window {
			return cov[n-1] - cov[i], true
		}
	}
	return 0, false
}

// Last returns the last point as a snapshot.
func (se *Series) Last() (Snapshot, bool) {
	if len(se.Points) == 0 {
		return Snapshot{}, false
	}
	p := se.Points[len(se.Points)-1]
	return Snapshot{Method: se.Method, Sims: p.Sims, Visited: p.Visited, Total: se.Total}, true
}

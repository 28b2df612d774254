//go:build !gofuzz

package coverage

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Plot size used by the Save and Write functions.
const (
	PlotWidth  = 6 * vg.Inch
	PlotHeight = 4 * vg.Inch
)

// pow2Ticks labels every power of two on a log-scale axis.
type pow2Ticks struct{}

func (pow2Ticks) Ticks(min, max float64) []plot.Tick {
	var ts []plot.Tick
	for x := 1.0; x <= max*1.0001; x *= 2 {
		if x >= min*0.9999 {
			ts = append(ts, plot.Tick{Value: x, Label: strconv.FormatFloat(x, 'f', -1, 64)})
		}
	}
	return ts
}

// percentTicks labels the powers of ten of a log-scale percentage axis.
type percentTicks struct{}

func (percentTicks) Ticks(min, max float64) []plot.Tick {
	var ts []plot.Tick
	for e := math.Floor(math.Log10(min)); e <= math.Ceil(math.Log10(max)); e++ {
		x := math.Pow(10, e)
		if x >= min*0.9999 && x <= max*1.0001 {
			ts = append(ts, plot.Tick{Value: x, Label: strconv.FormatFloat(x, 'f', -1, 64) + "%"})
		}
	}
	return ts
}

// RoundTicks puts four to ten major ticks at round values (1, 2 or 5
// times a power of ten) and labels them in plain decimals: "0.5", "1",
// "1.5", never "25.00" or "4e-05".
type RoundTicks struct{}

// Ticks implements plot.Ticker.
func (RoundTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return []plot.Tick{{Value: lo, Label: strconv.FormatFloat(lo, 'f', -1, 64)}}
	}
	// The largest round step that still gives four ticks.
	step := RoundStep(hi - lo)
	for n := 0; n < 4 && ticksIn(lo, hi, step) < 4; n++ {
		step = smallerRound(step)
	}
	var ts []plot.Tick
	for k := math.Ceil(lo/step - 1e-9); k*step <= hi+step*1e-9; k++ {
		v, _ := strconv.ParseFloat(strconv.FormatFloat(k*step, 'g', 10, 64), 64)
		if v == 0 {
			v = 0 // not -0
		}
		ts = append(ts, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
	}
	return ts
}

func ticksIn(lo, hi, step float64) int {
	return int(math.Floor(hi/step+1e-9) - math.Ceil(lo/step-1e-9) + 1)
}

// RoundStep is the largest round value (1, 2 or 5 times a power of ten)
// not above span.
func RoundStep(span float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(span)))
	for _, m := range []float64{5, 2, 1} {
		if m*p <= span*(1+1e-9) {
			return round10(m * p)
		}
	}
	return round10(p)
}

// smallerRound is the next round value below step: 5 → 2 → 1 → 0.5.
func smallerRound(step float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(step)+1e-9))
	switch m := math.Round(step / p); m {
	case 5:
		return round10(2 * p)
	case 2:
		return round10(p)
	}
	return round10(p / 2)
}

// round10 drops float noise: 0.30000000000000004 → 0.3.
func round10(v float64) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 10, 64), 64)
	return r
}

// CoveragePlot draws coverage(S,k) in percent against the region size k, one
// line per snapshot (ACT §4.2, Fig. 8), with log2 k on the x-axis and a log
// y-axis. Zero coverages are left out of the log plot.
func CoveragePlot(snaps ...Snapshot) (*plot.Plot, error) {
	if len(snaps) == 0 {
		return nil, errors.New("coverage: nothing to plot")
	}
	p := plot.New()
	p.Title.Text = "coverage(S, k)"
	p.X.Label.Text = "region size k"
	p.Y.Label.Text = "coverage (%)"
	p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, pow2Ticks{}
	p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, percentTicks{}
	p.Add(plotter.NewGrid())
	p.Legend.Top, p.Legend.Left = true, true
	minY, maxK := math.Inf(1), 1.0
	var args []any
	for _, sn := range snaps {
		var xy plotter.XYs
		for l := range sn.Visited {
			k := 1 << l
			maxK = max(maxK, float64(k))
			if c := 100 * sn.Coverage(k); c > 0 {
				xy = append(xy, plotter.XY{X: float64(k), Y: c})
				minY = min(minY, c)
			}
		}
		if len(xy) > 0 {
			args = append(args, sn.Method, xy)
		}
	}
	if len(args) == 0 {
		return nil, errors.New("coverage: every coverage is zero")
	}
	if err := plotutil.AddLinePoints(p, args...); err != nil {
		return nil, err
	}
	p.X.Min, p.X.Max = 1, max(2, maxK)
	p.Y.Min, p.Y.Max = math.Pow(10, math.Floor(math.Log10(minY))), 100
	if p.Y.Min >= p.Y.Max {
		p.Y.Min = p.Y.Max / 10
	}
	return p, nil
}

// GrowthPlot draws the growth of coverage(S,k) in percent against the number
// of simulations, one line per series (ACT §4.2: Fig. 9 for k = 2, Fig. 10
// for k = 128), with the series' marks as dashed vertical lines.
func GrowthPlot(k int, series ...*Series) (*plot.Plot, error) {
	if len(series) == 0 {
		return nil, errors.New("coverage: nothing to plot")
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("coverage(S, %d)", k)
	p.X.Label.Text = "simulations"
	p.Y.Label.Text = "coverage (%)"
	p.X.Tick.Marker, p.Y.Tick.Marker = RoundTicks{}, RoundTicks{}
	p.Add(plotter.NewGrid())
	// Coverage grows fast, then flattens: the bottom right is free for
	// the legend, the top for the marks' labels.
	p.Legend.Top, p.Legend.Left = false, false
	var args []any
	maxY := 0.0
	for _, se := range series {
		sims, cov := se.Coverage(k)
		var xy plotter.XYs
		if len(sims) > 0 && sims[0] > 0 {
			xy = append(xy, plotter.XY{}) // nothing is covered before the first simulation
		}
		for i := range sims {
			xy = append(xy, plotter.XY{X: float64(sims[i]), Y: 100 * cov[i]})
			maxY = max(maxY, 100*cov[i])
		}
		if len(xy) > 0 {
			args = append(args, se.Method, xy)
		}
	}
	if len(args) == 0 {
		return nil, fmt.Errorf("coverage: no points at k=%d", k)
	}
	if err := plotutil.AddLines(p, args...); err != nil {
		return nil, err
	}
	p.X.Min, p.Y.Min = 0, 0
	if maxY == 0 {
		maxY = 1
	}
	p.Y.Max = maxY * 1.15
	var marks plotter.XYLabels
	maxX := 0.0
	for _, se := range series {
		if n := len(se.Points); n > 0 {
			maxX = max(maxX, float64(se.Points[n-1].Sims))
		}
	}
	var right []bool // a label right of its line would leave the plot
	for i, se := range series {
		for _, m := range se.Marks {
			ln, err := plotter.NewLine(plotter.XYs{{X: float64(m.Sims), Y: 0}, {X: float64(m.Sims), Y: maxY * 1.05}})
			if err != nil {
				return nil, err
			}
			ln.Color = plotutil.Color(i)
			ln.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			p.Add(ln)
			marks.XYs = append(marks.XYs, plotter.XY{X: float64(m.Sims), Y: maxY * 1.05})
			marks.Labels = append(marks.Labels, " "+m.Label+" ")
			right = append(right, float64(m.Sims) > 0.6*maxX)
		}
	}
	if len(marks.XYs) > 0 {
		lb, err := plotter.NewLabels(marks)
		if err != nil {
			return nil, err
		}
		for i, r := range right {
			if r {
				lb.TextStyle[i].XAlign = draw.XRight
			}
		}
		p.Add(lb)
	}
	return p, nil
}

// SaveCoveragePlot writes CoveragePlot to a file; the extension (.png, .svg,
// .pdf, …) selects the format.
func SaveCoveragePlot(path string, snaps ...Snapshot) error {
	p, err := CoveragePlot(snaps...)
	if err != nil {
		return err
	}
	return p.Save(PlotWidth, PlotHeight, path)
}

// SaveGrowthPlot writes GrowthPlot to a file; the extension selects the
// format.
func SaveGrowthPlot(path string, k int, series ...*Series) error {
	p, err := GrowthPlot(k, series...)
	if err != nil {
		return err
	}
	return p.Save(PlotWidth, PlotHeight, path)
}

// WritePlot writes p in format ("png", "svg", "pdf", …) to w.
func WritePlot(w io.Writer, p *plot.Plot, format string) error {
	wt, err := p.WriterTo(PlotWidth, PlotHeight, format)
	if err != nil {
		return err
	}
	_, err = wt.WriteTo(w)
	return err
}

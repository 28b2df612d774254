//go:build !gofuzz

package corpus

import (
	"fmt"
	"image/color"
	"math"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/tcp"
)

// TracePlot collects one flow's cwnd, ssthresh and ca_state over time and
// draws them like Figs. 11–14 of the ACT paper: cwnd and ssthresh lines,
// ca_state as coloured bands along the bottom, the environment switch
// times as vertical lines, and the hit as a marker.
type TracePlot struct {
	Flow     int32
	cwnd     plotter.XYs
	ssthresh plotter.XYs
	states   []stateSpan
}

type stateSpan struct {
	from, to float64
	st       ccai.CAState
}

// Observe implements tcp.Observer.
func (p *TracePlot) Observe(r *tcp.StateRecord) {
	if r.Flow != p.Flow {
		return
	}
	t := r.Time.Seconds()
	p.cwnd = append(p.cwnd, plotter.XY{X: t, Y: float64(r.Cwnd)})
	if r.SSThresh < ccai.InfiniteSSThresh {
		p.ssthresh = append(p.ssthresh, plotter.XY{X: t, Y: float64(r.SSThresh)})
	}
	if n := len(p.states); n == 0 || p.states[n-1].st != r.CAState {
		if n > 0 {
			p.states[n-1].to = t
		}
		p.states = append(p.states, stateSpan{from: t, to: t, st: r.CAState})
	} else {
		p.states[n-1].to = t
	}
}

// stateColors are the band colours of the five ca_state values.
var stateColors = [...]color.Color{
	color.RGBA{200, 230, 200, 255}, // open
	color.RGBA{250, 230, 150, 255}, // disorder
	color.RGBA{180, 200, 250, 255}, // cwr
	color.RGBA{250, 170, 120, 255}, // recovery
	color.RGBA{230, 110, 110, 255}, // loss
}

// Save writes the plot (PNG or SVG by extension). sched gives the switch
// times; hit (≥ 0) marks the hit time and hitCwnd its cwnd.
func (p *TracePlot) Save(path, title string, sched netenv.Schedule, hit time.Duration, hitCwnd float64) error {
	pl := plot.New()
	pl.Title.Text = title
	pl.X.Label.Text = "time (s)"
	pl.Y.Label.Text = "packets"
	maxY := 1.0
	for _, xy := range p.cwnd {
		maxY = math.Max(maxY, xy.Y)
	}
	for _, xy := range p.ssthresh {
		maxY = math.Max(maxY, xy.Y)
	}
	band := maxY * 0.04
	for _, s := range p.states {
		if s.to <= s.from {
			continue
		}
		poly, err := plotter.NewPolygon(plotter.XYs{{X: s.from, Y: -band}, {X: s.to, Y: -band}, {X: s.to, Y: 0}, {X: s.from, Y: 0}})
		if err != nil {
			return err
		}
		poly.Color = stateColors[s.st%5]
		poly.LineStyle.Width = 0
		pl.Add(poly)
	}
	for i, st := range ccai.CAStateNames {
		// Legend entries for the bands.
		poly, _ := plotter.NewPolygon(plotter.XYs{{X: 0, Y: 0}, {X: 0, Y: 0}, {X: 0, Y: 0}})
		poly.Color = stateColors[i]
		poly.LineStyle.Width = 0
		pl.Legend.Add(st, poly)
	}
	if len(p.cwnd) > 0 {
		l, err := plotter.NewLine(p.cwnd)
		if err != nil {
			return err
		}
		l.Color = color.RGBA{20, 60, 200, 255}
		l.Width = vg.Points(1)
		pl.Add(l)
		pl.Legend.Add("cwnd", l)
	}
	if len(p.ssthresh) > 0 {
		l, err := plotter.NewLine(p.ssthresh)
		if err != nil {
			return err
		}
		l.Color = color.RGBA{200, 40, 40, 255}
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
		pl.Add(l)
		pl.Legend.Add("ssthresh", l)
	}
	for i, ph := range sched {
		if i == len(sched)-1 {
			break
		}
		x := ph.Until.Seconds()
		l, _ := plotter.NewLine(plotter.XYs{{X: x, Y: -band}, {X: x, Y: maxY * 1.05}})
		l.Color = color.Gray{100}
		l.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
		pl.Add(l)
		if i == 0 {
			pl.Legend.Add("environment switch", l)
		}
	}
	if hit >= 0 {
		sc, _ := plotter.NewScatter(plotter.XYs{{X: hit.Seconds(), Y: math.Min(hitCwnd, maxY*1.05)}})
		sc.GlyphStyle = draw.GlyphStyle{Color: color.Black, Radius: vg.Points(5), Shape: draw.CrossGlyph{}}
		pl.Add(sc)
		pl.Legend.Add("hit", sc)
	}
	pl.Y.Min = -band
	pl.Legend.Top = true
	return pl.Save(8*vg.Inch, 4*vg.Inch, path)
}

// flowColors tell the flows of a delivery plot apart.
var flowColors = [...]color.Color{
	color.RGBA{20, 60, 200, 255},
	color.RGBA{200, 40, 40, 255},
	color.RGBA{30, 150, 60, 255},
	color.RGBA{150, 60, 180, 255},
}

// Save plots each delivered packet's one-way delay against its arrival
// time, one colour per flow (PNG or SVG by extension): reordering shows as
// a packet above its successors, an uncertain delay as an outlier.
func (d *DeliveryTrace) Save(path, title string) error {
	pl := plot.New()
	pl.Title.Text = title
	pl.X.Label.Text = "arrival (s)"
	pl.Y.Label.Text = "one-way delay (ms)"
	byFlow := map[int]plotter.XYs{}
	maxFlow := -1
	for _, r := range d.rows {
		byFlow[r.Flow] = append(byFlow[r.Flow], plotter.XY{X: r.At.Seconds(), Y: float64(r.At-r.Sent) / 1e6})
		maxFlow = max(maxFlow, r.Flow)
	}
	for f := 0; f <= maxFlow; f++ {
		xys, ok := byFlow[f]
		if !ok {
			continue
		}
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: flowColors[f%len(flowColors)], Radius: vg.Points(1.5), Shape: draw.CircleGlyph{}}
		pl.Add(sc)
		pl.Legend.Add(fmt.Sprintf("flow %d", f), sc)
	}
	pl.Legend.Top = true
	return pl.Save(8*vg.Inch, 4*vg.Inch, path)
}

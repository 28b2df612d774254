//go:build !gofuzz

package corpus

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/coverage"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

// TracePlot collects the state of every flow over time and draws a
// finding's plot like Figs. 11–14 of the ACT paper, to read at a glance:
//   - cwnd and ssthresh of every flow as step lines (they are integers
//     that hold until the next change), the hit's flow drawn thicker;
//   - the variables the condition reads (Reads: CUBIC's target,
//     prior_cwnd, …): in_flight and prior_cwnd on cwnd's axis, every
//     other (the algorithm's own: CUBIC's target reaches 8.6 M packets,
//     which would flatten cwnd to a line at 0) in a panel of its own;
//   - two panels: the whole run, and a window around the hit with a
//     vertical line at it;
//   - the hit flow's ca_state as coloured bands along the bottom;
//   - the environment switches as dashed lines labelled with what changed,
//     and every phase's values (bandwidth, delay, loss, …) under the panels;
//   - ticks at round values, and the legend beside the panels, outside the
//     data.
type TracePlot struct {
	// Flow is the hit's flow: drawn thicker, with its ca_state bands and
	// the condition's variables.
	Flow int32
	// CCAI names each flow's algorithm (for the legend and the schema of
	// its variables); Reads are the variables the condition reads.
	CCAI  []string
	Reads []string
	// Caps are the subject's: they give each flow's schema (the zero
	// value: the native subject's).
	Caps  netenv.Capabilities
	flows map[int32]*flowTrace
	order []int32
	obs   []float64
}

type flowTrace struct {
	schema   Schema
	cwnd     plotter.XYs
	ssthresh plotter.XYs
	states   []stateSpan
	vars     map[string]plotter.XYs
}

type stateSpan struct {
	from, to float64
	st       ccai.CAState
}

// NewTracePlot prepares the plot of a seed's replay on a subject with
// capabilities caps: every flow, the finding's flow highlighted and the
// variables its condition reads.
func NewTracePlot(s *Seed, caps netenv.Capabilities) *TracePlot {
	p := &TracePlot{CCAI: s.CCAI, Caps: caps}
	if s.Finding != nil {
		p.Flow = int32(s.Finding.Flow)
		if s.Finding.Kind == "condition" {
			p.Reads = ConditionReads(s.Finding.Spec(), caps, s.CCAI)
		}
	}
	return p
}

// plottedElsewhere are the variables every plot draws, and those that are
// not worth a line of their own.
var plottedElsewhere = []string{"cwnd", "ssthresh", "ca_state", "prev_ca_state", "time", "flow"}

// cwndAxisVars share cwnd's axis: the sender's windows, on cwnd's scale.
// The algorithm's own variables (CUBIC's target, w_max, …) have panels of
// their own, as their scale can be millions of times cwnd's (issue 51).
var cwndAxisVars = []string{"prior_cwnd", "in_flight"}

// extraVars are the condition's variables the plot draws as lines.
func (p *TracePlot) extraVars() []string {
	var out []string
	for _, v := range p.Reads {
		if !slices.Contains(plottedElsewhere, v) {
			out = append(out, v)
		}
	}
	return out
}

// Observe implements observe.Observer.
func (p *TracePlot) Observe(r *observe.Record) {
	if p.flows == nil {
		p.flows = map[int32]*flowTrace{}
	}
	ft, ok := p.flows[r.Flow]
	if !ok {
		cca := ""
		if int(r.Flow) < len(p.CCAI) {
			cca = p.CCAI[r.Flow]
		}
		ft = &flowTrace{schema: SchemaOf(p.Caps, cca), vars: map[string]plotter.XYs{}}
		p.flows[r.Flow] = ft
		p.order = append(p.order, r.Flow)
		slices.Sort(p.order)
	}
	t := r.Time.Seconds()
	ft.cwnd = append(ft.cwnd, plotter.XY{X: t, Y: float64(r.Cwnd)})
	if r.SSThresh < ccai.InfiniteSSThresh {
		ft.ssthresh = append(ft.ssthresh, plotter.XY{X: t, Y: float64(r.SSThresh)})
	}
	if n := len(ft.states); n == 0 || ft.states[n-1].st != r.CAState {
		if n > 0 {
			ft.states[n-1].to = t
		}
		ft.states = append(ft.states, stateSpan{from: t, to: t, st: r.CAState})
	} else {
		ft.states[n-1].to = t
	}
	if r.Flow != p.Flow {
		return
	}
	if extra := p.extraVars(); len(extra) > 0 {
		if len(p.obs) != len(ft.schema) {
			p.obs = make([]float64, len(ft.schema))
		}
		ft.schema.Observe(r, p.obs)
		for _, name := range extra {
			if i := ft.schema.Index(name); i >= 0 {
				if v := p.obs[i]; !math.IsNaN(v) && !math.IsInf(v, 0) {
					ft.vars[name] = append(ft.vars[name], plotter.XY{X: t, Y: v})
				}
			}
		}
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

// varColors tell the condition's variables apart.
var varColors = [...]color.Color{
	color.RGBA{0, 150, 130, 255},
	color.RGBA{150, 60, 180, 255},
	color.RGBA{200, 120, 0, 255},
	color.RGBA{90, 90, 90, 255},
}

// Plot geometry, in inches.
const (
	plotWidth   = 10.5
	legendWidth = 2.3
	rowHeight   = 2.9
	varHeight   = 1.9
)

// Save writes the plot (PNG or SVG by extension). sched gives the
// environment switches; hit (≥ 0) is the hit's time and hitCwnd its cwnd.
// title should name the CCAIs, the subject and the condition.
func (p *TracePlot) Save(path, title string, sched netenv.Schedule, hit time.Duration, hitCwnd float64) error {
	end := 0.0
	for _, ft := range p.flows {
		if n := len(ft.cwnd); n > 0 {
			end = math.Max(end, ft.cwnd[n-1].X)
		}
	}
	end = math.Max(end, 1e-3)
	hitS := -1.0
	if hit >= 0 {
		hitS = hit.Seconds()
	}
	var rows []*plot.Plot
	var heights []float64
	whole := p.panel(0, end, sched, hitS, hitCwnd)
	whole.Title.Text = title + "\nwhole run"
	rows, heights = append(rows, whole), append(heights, rowHeight)
	lo, hi := 0.0, end
	if hitS >= 0 {
		// A window around the hit: long enough to show what led to it.
		w := math.Min(math.Max(end*0.04, 0.5), 20)
		lo, hi = math.Max(0, hitS-w), math.Min(end, hitS+w/3)
		if hi-lo < 1e-3 {
			hi = lo + 1e-3
		}
		win := p.panel(lo, hi, sched, hitS, hitCwnd)
		win.Title.Text = fmt.Sprintf("around the hit at %s s", strconv.FormatFloat(hitS, 'f', 3, 64))
		rows, heights = append(rows, win), append(heights, rowHeight)
	}
	for i, name := range p.ownPanelVars() {
		rows, heights = append(rows, p.varPanel(name, i, lo, hi, hitS)), append(heights, varHeight)
	}
	phases := phaseLines(sched)
	phasesHeight := 0.0
	if len(phases) > 0 {
		phasesHeight = 0.25 + phaseLineHeight*float64(len(phases))
	}
	total := phasesHeight
	for _, h := range heights {
		total += h
	}
	ext := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	cw, err := draw.NewFormattedCanvas(vg.Length(plotWidth)*vg.Inch, vg.Length(total)*vg.Inch, ext)
	if err != nil {
		return err
	}
	dc := draw.New(cw)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	plotArea := draw.Crop(dc, 0, -vg.Length(legendWidth)*vg.Inch, vg.Length(phasesHeight)*vg.Inch, 0)
	drawPhases(dc, phases)
	top := plotArea.Max.Y
	for i, pl := range rows {
		h := vg.Length(heights[i]) * vg.Inch
		c := plotArea
		c.Rectangle.Max.Y, c.Rectangle.Min.Y = top, top-h
		pl.Draw(c)
		top -= h
	}
	leg := p.legend(sched)
	legArea := draw.Crop(dc, vg.Length(plotWidth-legendWidth)*vg.Inch, 0, 0, -vg.Length(0.35)*vg.Inch)
	leg.Draw(legArea)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := cw.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ownPanelVars are the condition's variables not on cwnd's axis: each
// gets a panel of its own over the window.
func (p *TracePlot) ownPanelVars() []string {
	var out []string
	for _, v := range p.extraVars() {
		if !slices.Contains(cwndAxisVars, v) {
			out = append(out, v)
		}
	}
	return out
}

// clip keeps the points of xys in [lo, hi], with the last one before lo
// (a step line starts from it) and the first one after hi.
func clip(xys plotter.XYs, lo, hi float64) plotter.XYs {
	i := sort.Search(len(xys), func(i int) bool { return xys[i].X >= lo })
	j := sort.Search(len(xys), func(i int) bool { return xys[i].X > hi })
	if i > 0 {
		i--
	}
	if j < len(xys) {
		j++
	}
	out := slices.Clone(xys[i:j])
	if len(out) > 0 && out[0].X < lo {
		out[0].X = lo
	}
	if n := len(out); n > 0 && out[n-1].X > hi {
		out[n-1].X = hi
	}
	return out
}

func stepLine(xys plotter.XYs, c color.Color, width float64, dashes []vg.Length) (*plotter.Line, error) {
	l, err := plotter.NewLine(xys)
	if err != nil {
		return nil, err
	}
	l.StepStyle = plotter.PostStep
	l.Color = c
	l.Width = vg.Points(width)
	l.Dashes = dashes
	return l, nil
}

var (
	ssthreshDashes = []vg.Length{vg.Points(5), vg.Points(3)}
	varDashes      = []vg.Length{vg.Points(1.5), vg.Points(2)}
	switchDashes   = []vg.Length{vg.Points(3), vg.Points(3)}
)

// panel draws [lo, hi] of the run.
func (p *TracePlot) panel(lo, hi float64, sched netenv.Schedule, hitS, hitCwnd float64) *plot.Plot {
	pl := plot.New()
	pl.X.Label.Text = "time (s)"
	pl.Y.Label.Text = "packets"
	pl.X.Tick.Marker, pl.Y.Tick.Marker = coverage.RoundTicks{}, coverage.RoundTicks{}
	pl.Add(plotter.NewGrid())
	maxY := 1.0
	type line struct {
		xys    plotter.XYs
		c      color.Color
		w      float64
		dashes []vg.Length
	}
	var lines []line
	packetsExtra := slices.DeleteFunc(p.extraVars(), func(v string) bool { return !slices.Contains(cwndAxisVars, v) })
	for _, f := range p.order {
		ft := p.flows[f]
		w := 0.9
		if f == p.Flow {
			w = 1.8
		}
		c := flowColors[int(f)%len(flowColors)]
		lines = append(lines, line{clip(ft.cwnd, lo, hi), c, w, nil}, line{clip(ft.ssthresh, lo, hi), c, w * 0.8, ssthreshDashes})
		if f == p.Flow {
			for i, v := range packetsExtra {
				lines = append(lines, line{clip(ft.vars[v], lo, hi), varColors[i%len(varColors)], 1.2, varDashes})
			}
		}
	}
	for _, l := range lines {
		for _, xy := range l.xys {
			maxY = math.Max(maxY, xy.Y)
		}
	}
	band := maxY * 0.06
	if ft, ok := p.flows[p.Flow]; ok {
		for _, s := range ft.states {
			from, to := math.Max(s.from, lo), math.Min(s.to, hi)
			if to <= from {
				continue
			}
			poly, err := plotter.NewPolygon(plotter.XYs{{X: from, Y: -band}, {X: to, Y: -band}, {X: to, Y: 0}, {X: from, Y: 0}})
			if err != nil {
				continue
			}
			poly.Color = stateColors[s.st%5]
			poly.LineStyle.Width = 0
			pl.Add(poly)
		}
	}
	for _, l := range lines {
		if len(l.xys) == 0 {
			continue
		}
		if ln, err := stepLine(l.xys, l.c, l.w, l.dashes); err == nil {
			pl.Add(ln)
		}
	}
	top := maxY * 1.14
	var labels plotter.XYLabels
	for i := 0; i+1 < len(sched); i++ {
		x := sched[i].Until.Seconds()
		if x < lo || x > hi {
			continue
		}
		l, _ := plotter.NewLine(plotter.XYs{{X: x, Y: -band}, {X: x, Y: top}})
		l.Color = color.Gray{90}
		l.Dashes = switchDashes
		pl.Add(l)
		labels.XYs = append(labels.XYs, plotter.XY{X: x, Y: maxY * 1.06})
		labels.Labels = append(labels.Labels, " "+envChange(sched[i].Env, sched[i+1].Env))
	}
	if len(labels.XYs) > 0 {
		if lb, err := plotter.NewLabels(labels); err == nil {
			for i := range lb.TextStyle {
				lb.TextStyle[i].Color = color.Gray{60}
			}
			pl.Add(lb)
		}
	}
	if hitS >= lo && hitS <= hi {
		l, _ := plotter.NewLine(plotter.XYs{{X: hitS, Y: -band}, {X: hitS, Y: top}})
		l.Color = color.Black
		l.Width = vg.Points(1.2)
		pl.Add(l)
		sc, _ := plotter.NewScatter(plotter.XYs{{X: hitS, Y: math.Min(hitCwnd, top)}})
		sc.GlyphStyle = draw.GlyphStyle{Color: color.Black, Radius: vg.Points(5), Shape: draw.CrossGlyph{}}
		pl.Add(sc)
	}
	pl.X.Min, pl.X.Max = lo, hi
	pl.Y.Min, pl.Y.Max = -band, top
	return pl
}

// varPanel draws one of the condition's variables that is not on cwnd's axis.
func (p *TracePlot) varPanel(name string, i int, lo, hi, hitS float64) *plot.Plot {
	pl := plot.New()
	pl.Title.Text = name + " (flow " + strconv.Itoa(int(p.Flow)) + ")"
	pl.X.Label.Text = "time (s)"
	pl.Y.Label.Text = name
	pl.X.Tick.Marker, pl.Y.Tick.Marker = coverage.RoundTicks{}, coverage.RoundTicks{}
	pl.Add(plotter.NewGrid())
	minY, maxY := math.Inf(1), math.Inf(-1)
	if ft, ok := p.flows[p.Flow]; ok {
		xys := clip(ft.vars[name], lo, hi)
		for _, xy := range xys {
			minY, maxY = math.Min(minY, xy.Y), math.Max(maxY, xy.Y)
		}
		if len(xys) > 0 {
			if ln, err := stepLine(xys, varColors[(i+2)%len(varColors)], 1.2, nil); err == nil {
				pl.Add(ln)
			}
		}
	}
	if math.IsInf(minY, 0) {
		minY, maxY = 0, 1
	}
	if maxY <= minY {
		maxY = minY + 1
	}
	if hitS >= lo && hitS <= hi {
		l, _ := plotter.NewLine(plotter.XYs{{X: hitS, Y: minY}, {X: hitS, Y: maxY}})
		l.Color = color.Black
		l.Width = vg.Points(1.2)
		pl.Add(l)
	}
	pl.X.Min, pl.X.Max = lo, hi
	pl.Y.Min, pl.Y.Max = minY, maxY
	return pl
}

// legend describes every line, band and mark; it is drawn beside the
// panels, never over the data.
func (p *TracePlot) legend(sched netenv.Schedule) plot.Legend {
	leg := plot.NewLegend()
	leg.Top, leg.Left = true, true
	leg.XOffs = vg.Points(6)
	leg.ThumbnailWidth = vg.Points(22)
	leg.TextStyle.Font.Size = vg.Points(9)
	packetsExtra := slices.DeleteFunc(p.extraVars(), func(v string) bool { return !slices.Contains(cwndAxisVars, v) })
	for _, f := range p.order {
		c := flowColors[int(f)%len(flowColors)]
		name := "flow " + strconv.Itoa(int(f))
		if int(f) < len(p.CCAI) {
			name += " " + p.CCAI[f]
		}
		if f == p.Flow {
			name += " (hit)"
		}
		w := 0.9
		if f == p.Flow {
			w = 1.8
		}
		if l, err := stepLine(plotter.XYs{{}}, c, w, nil); err == nil {
			leg.Add(name+": cwnd", l)
		}
		if l, err := stepLine(plotter.XYs{{}}, c, w*0.8, ssthreshDashes); err == nil {
			leg.Add(name+": ssthresh", l)
		}
		if f == p.Flow {
			for i, v := range packetsExtra {
				if l, err := stepLine(plotter.XYs{{}}, varColors[i%len(varColors)], 1.2, varDashes); err == nil {
					leg.Add(name+": "+v, l)
				}
			}
		}
	}
	for i, st := range ccai.CAStateNames {
		poly, err := plotter.NewPolygon(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 0}, {X: 1, Y: 1}})
		if err != nil {
			continue
		}
		poly.Color = stateColors[i]
		poly.LineStyle.Width = 0
		leg.Add("ca_state "+st+" (band)", poly)
	}
	if len(sched) > 1 {
		l, _ := plotter.NewLine(plotter.XYs{{}})
		l.Color = color.Gray{90}
		l.Dashes = switchDashes
		leg.Add("environment switch", l)
	}
	l, _ := plotter.NewLine(plotter.XYs{{}})
	l.Color = color.Black
	l.Width = vg.Points(1.2)
	leg.Add("hit", l)
	return leg
}

// envChange says what changed between two environments: "bw 10 → 100,
// loss 0 → 0.01".
func envChange(a, b netenv.Env) string {
	var parts []string
	for i, par := range netenv.Params() {
		x, y := a.Get(i), b.Get(i)
		if x == y {
			continue
		}
		if par.Kind == netenv.Categorical {
			parts = append(parts, par.Name+" "+par.Format(&a)+" → "+par.Format(&b))
		} else {
			parts = append(parts, par.Name+" "+sig(x)+" → "+sig(y))
		}
	}
	switch {
	case len(parts) == 0:
		return "(same)"
	case len(parts) > 2:
		return strings.Join(parts[:2], ", ") + fmt.Sprintf(", +%d", len(parts)-2)
	}
	return strings.Join(parts, ", ")
}

// sig prints 3 significant digits without an exponent in usual ranges.
func sig(v float64) string {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
	if a := math.Abs(r); a != 0 && (a < 1e-6 || a >= 1e9) {
		return strconv.FormatFloat(r, 'g', 3, 64)
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
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

// Phase list geometry: a line's height in inches, the most phases listed
// and the most characters a line holds at phaseFontSize.
const (
	phaseLineHeight = 0.17
	maxPhaseLines   = 12
	phaseLineChars  = 150
	phaseFontSize   = 8
)

// phaseLines lists every phase of the environment with its values
// ("phase 2, 12.5–30 s: bw 10 Mbit/s, delay 20 ms, …"), at most
// maxPhaseLines of them, a long line wrapped; none for an empty schedule.
func phaseLines(sched netenv.Schedule) []string {
	var lines []string
	from := time.Duration(0)
	for i, ph := range sched {
		if len(lines) >= maxPhaseLines {
			lines = append(lines, fmt.Sprintf("… and %d more phases (actfuzz replay prints them all)", len(sched)-i))
			break
		}
		span := fmt.Sprintf("%s–%s s", sig(from.Seconds()), sig(ph.Until.Seconds()))
		if ph.Until == 0 {
			span = fmt.Sprintf("from %s s", sig(from.Seconds()))
		}
		var vals []string
		for k, par := range netenv.Params() {
			v := par.Format(&ph.Env)
			if par.Kind != netenv.Categorical {
				v = sig(ph.Env.Get(k))
				if par.Unit != "" {
					v += " " + par.Unit
				}
			}
			vals = append(vals, par.Name+" "+v)
		}
		line := fmt.Sprintf("phase %d, %s: ", i+1, span)
		for j, v := range vals {
			if j > 0 && len(line)+len(v) > phaseLineChars {
				lines = append(lines, line)
				line = "    "
			} else if j > 0 {
				line += ", "
			}
			line += v
		}
		lines = append(lines, line)
		from = ph.Until
	}
	return lines
}

// drawPhases writes the phase list along the bottom of dc.
func drawPhases(dc draw.Canvas, lines []string) {
	if len(lines) == 0 {
		return
	}
	sty := draw.TextStyle{Color: color.Gray{40}, Font: font.From(plot.DefaultFont, vg.Points(phaseFontSize)), Handler: plot.DefaultTextHandler}
	y := dc.Min.Y + vg.Length(phaseLineHeight*float64(len(lines))+0.08)*vg.Inch
	x := dc.Min.X + vg.Length(0.15)*vg.Inch
	title := sty
	title.Font = font.From(plot.DefaultFont, vg.Points(phaseFontSize+1))
	dc.FillText(title, vg.Point{X: x, Y: y}, "environment (each phase's values)")
	for _, l := range lines {
		y -= vg.Length(phaseLineHeight) * vg.Inch
		dc.FillText(sty, vg.Point{X: x, Y: y}, l)
	}
}

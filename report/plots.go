package report

import (
	"cmp"
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/coverage"
)

// growthKs are the region sizes of the growth plots (ACT Figs. 9–10, and
// k = 16 that the paper's headline numbers use).
var growthKs = []int{2, 16, 128}

// coveragePlots writes coverage against k and the growth at growthKs, every
// method on one plot, into dir.
func coveragePlots(dir string, reps []*act.Report) ([]image, error) {
	var snaps []coverage.Snapshot
	var series []*coverage.Series
	for _, r := range reps {
		snaps = append(snaps, r.Store.Snapshot(r.Method, int64(r.Sims)))
		if r.Series != nil && len(r.Series.Points) > 0 {
			series = append(series, r.Series)
		}
	}
	var imgs []image
	none := true
	for _, sn := range snaps {
		for _, v := range sn.Visited {
			none = none && v == 0
		}
	}
	if none {
		return nil, nil // nothing in S yet: the table says so
	}
	if err := coverage.SaveCoveragePlot(filepath.Join(dir, "coverage-k.png"), snaps...); err != nil {
		return nil, fmt.Errorf("report: coverage plot: %w", err)
	}
	imgs = append(imgs, image{Src: "coverage-k.png", Alt: "coverage(S, k) against k",
		Caption: "coverage(S, k) at every region size k (ACT Fig. 8): the share of S's regions visited, log scales"})
	if len(series) == 0 {
		return imgs, nil
	}
	ks := reps[0].Store.Space().Ks()
	for _, k := range growthKs {
		if !slices.Contains(ks, k) {
			continue
		}
		name := fmt.Sprintf("growth-k%d.png", k)
		if err := coverage.SaveGrowthPlot(filepath.Join(dir, name), k, series...); err != nil {
			return nil, fmt.Errorf("report: growth plot at k=%d: %w", k, err)
		}
		imgs = append(imgs, image{Src: name, Alt: fmt.Sprintf("growth of coverage(S, %d)", k),
			Caption: fmt.Sprintf("growth of coverage(S, %d) with the simulations; dashed lines mark where ACT's steps began", k)})
	}
	return imgs, nil
}

// heatK is the region size of the heat maps.
const heatK = 16

// grid is one heat map: counts[y][x] of visited regions.
type grid struct {
	counts [][]float64
	x0, dx float64 // x of the first cell's centre, cell width
	y0, dy float64
	nx, ny int
}

func (g *grid) Dims() (c, r int)   { return g.nx, g.ny }
func (g *grid) X(c int) float64    { return g.x0 + float64(c)*g.dx }
func (g *grid) Y(r int) float64    { return g.y0 + float64(r)*g.dy }
func (g *grid) Z(c, r int) float64 { return g.counts[r][c] }

// heatMaps draws, per value of the categorical variable (ca_state), which
// cwnd × ssthresh cells hold visited regions at k = heatK: the colour is
// the number of visited regions (over the other variables) in the cell.
func heatMaps(dir string, st *coverage.Store) (heatInfo, error) {
	hi := heatInfo{K: heatK}
	sp := st.Space()
	ix, iy, ic := sp.Index("cwnd"), sp.Index("ssthresh"), -1
	for i, v := range sp.Vars {
		if v.Categorical() && ic < 0 {
			ic = i
		}
	}
	if ix < 0 || iy < 0 || sp.Vars[ix].Categorical() || sp.Vars[iy].Categorical() {
		hi.Absent = "S has no numeric cwnd and ssthresh: no heat map"
		return hi, nil
	}
	vx, vy := sp.Vars[ix], sp.Vars[iy]
	nx := int((vx.Granules() + heatK - 1) / heatK)
	ny := int((vy.Granules() + heatK - 1) / heatK)
	if nx > 4096 || ny > 4096 {
		hi.Absent = fmt.Sprintf("cwnd × ssthresh has %d × %d cells at k=%d: too many to draw", nx, ny, heatK)
		return hi, nil
	}
	cats := []string{""}
	if ic >= 0 {
		cats = sp.Vars[ic].Values
	}
	// The visited regions at k, each counted in its cwnd × ssthresh cell.
	k := heatK
	corners, ok := st.RegionCorners(k)
	if !ok {
		k = st.FloorK()
		corners, _ = st.RegionCorners(k)
		hi.Notes = append(hi.Notes, fmt.Sprintf("the store coarsened at its memory budget and keeps exact regions from k=%d only: the cells count regions at k=%d", k, k))
	}
	hi.K = k
	counts := make([][][]float64, len(cats))
	for c := range counts {
		counts[c] = make([][]float64, ny)
		for y := range counts[c] {
			counts[c][y] = make([]float64, nx)
		}
	}
	for corner := range corners {
		gx, okx := vx.Granule(corner[ix])
		gy, oky := vy.Granule(corner[iy])
		cat := 0
		if ic >= 0 {
			g, okc := sp.Vars[ic].Granule(corner[ic])
			if !okc {
				continue
			}
			cat = int(g)
		}
		if !okx || !oky {
			continue
		}
		counts[cat][gy/heatK][gx/heatK]++
	}
	maxCount := 0.0
	for c := range counts {
		for y := range counts[c] {
			for _, n := range counts[c][y] {
				maxCount = max(maxCount, n)
			}
		}
	}
	if maxCount == 0 {
		hi.Absent = "no region of S visited yet"
		return hi, nil
	}
	hi.Notes = append(hi.Notes, fmt.Sprintf("a cell is %s × %s; its colour is how many regions at k=%d (over the other variables) were visited in it (the colour scale under each map, log scale), at most %d in one cell; blank: none",
		fmtNum(heatK*vx.Step)+unitSuffix(vx.Name), fmtNum(heatK*vy.Step)+unitSuffix(vy.Name), k, int(maxCount)))
	// Zoom on the visited part: both axes end at the smallest power of two
	// of cells that holds every visited cell (with one empty cell beyond).
	usedX, usedY := 1, 1
	for c := range counts {
		for y := range counts[c] {
			for x, n := range counts[c][y] {
				if n > 0 {
					usedX, usedY = max(usedX, x+2), max(usedY, y+2)
				}
			}
		}
	}
	zoomX, zoomY := min(nx, pow2AtLeast(usedX)), min(ny, pow2AtLeast(usedY))
	if zoomX < nx || zoomY < ny {
		hi.Notes = append(hi.Notes, fmt.Sprintf("zoomed on the visited part: %s < %s, %s < %s (no region beyond was visited)",
			vx.Name, fmtNum(vx.Min+float64(zoomX)*heatK*vx.Step), vy.Name, fmtNum(vy.Min+float64(zoomY)*heatK*vy.Step)))
	}
	pal := palette.Heat(64, 1)
	for c, name := range cats {
		total := 0.0
		for y := range counts[c] {
			for _, n := range counts[c][y] {
				total += n
			}
		}
		g := &grid{counts: counts[c], nx: zoomX, ny: zoomY,
			x0: vx.Min + heatK*vx.Step/2, dx: heatK * vx.Step, y0: vy.Min + heatK*vy.Step/2, dy: heatK * vy.Step}
		logGrid := &logZ{g}
		pl := plot.New()
		title := fmt.Sprintf("%s = %s: %d regions", sp.Vars[max(ic, 0)].Name, name, int(total))
		if ic < 0 {
			title = fmt.Sprintf("%d regions", int(total))
		}
		pl.Title.Text = title
		pl.X.Label.Text = vx.Name + unitSuffix(vx.Name)
		pl.Y.Label.Text = vy.Name + unitSuffix(vy.Name)
		pl.X.Tick.Marker, pl.Y.Tick.Marker = coverage.RoundTicks{}, coverage.RoundTicks{}
		hm := plotter.NewHeatMap(logGrid, pal)
		// A cell with one region is already well coloured, not near white.
		hm.Min, hm.Max = -0.5*math.Log10(maxCount+1)-0.2, math.Log10(maxCount+1)
		hm.Underflow, hm.Overflow = color.White, pal.Colors()[len(pal.Colors())-1]
		hm.NaN = color.White
		pl.Add(hm)
		pl.X.Min, pl.X.Max = vx.Min, vx.Min+float64(zoomX)*heatK*vx.Step
		pl.Y.Min, pl.Y.Max = vy.Min, vy.Min+float64(zoomY)*heatK*vy.Step
		file := fmt.Sprintf("heat-%s.png", anchor(cmp.Or(name, "all")))
		if err := saveWithScale(filepath.Join(dir, file), pl, colourScale(hm, maxCount)); err != nil {
			return hi, fmt.Errorf("report: heat map: %w", err)
		}
		hi.Maps = append(hi.Maps, image{Src: file, Alt: "visited cwnd × ssthresh regions, " + title, Caption: title})
	}
	return hi, nil
}

// logZ shows log10(1+n); empty cells are NaN (drawn blank).
type logZ struct{ *grid }

func (l logZ) Z(c, r int) float64 {
	n := l.grid.Z(c, r)
	if n == 0 {
		return math.NaN()
	}
	return math.Log10(n + 1)
}

// colourScale is a heat map's colour scale: its palette from one region
// in a cell to maxCount, ticks labelled in regions (the map's colours are
// log10(1+n)).
func colourScale(hm *plotter.HeatMap, maxCount float64) *plot.Plot {
	lo, hi := math.Log10(2), math.Log10(maxCount+1)
	if hi <= lo {
		hi = lo + 0.01
	}
	const steps = 64
	strip := &grid{counts: [][]float64{make([]float64, steps)}, nx: steps, ny: 1, x0: lo + (hi-lo)/steps/2, dx: (hi - lo) / steps, y0: 0.5, dy: 1}
	for i := range steps {
		strip.counts[0][i] = strip.X(i)
	}
	sc := plotter.NewHeatMap(strip, hm.Palette)
	sc.Min, sc.Max, sc.Underflow, sc.Overflow = hm.Min, hm.Max, hm.Underflow, hm.Overflow
	pl := plot.New()
	pl.Add(sc)
	pl.X.Label.Text = "regions in a cell (log scale)"
	pl.X.Min, pl.X.Max, pl.Y.Min, pl.Y.Max = lo, hi, 0, 1
	pl.HideY()
	var ticks []plot.Tick
	for mag := 1.0; mag <= maxCount; mag *= 10 {
		for _, m := range []float64{1, 2, 5} {
			if n := m * mag; n <= maxCount {
				ticks = append(ticks, plot.Tick{Value: math.Log10(n + 1), Label: fmtNum(n)})
			}
		}
	}
	pl.X.Tick.Marker = plot.ConstantTicks(ticks)
	return pl
}

// saveWithScale writes a heat map with its colour scale below it (PNG).
func saveWithScale(path string, pl, scale *plot.Plot) error {
	const w, mapH, scaleH = 3.4 * vg.Inch, 3.4 * vg.Inch, 0.75 * vg.Inch
	img := vgimg.New(w, mapH+scaleH)
	dc := draw.New(img)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	pl.Draw(draw.Crop(dc, 0, 0, scaleH, 0))
	scale.Draw(draw.Crop(dc, 0, 0, 0, -mapH))
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// pow2AtLeast is the smallest power of two ≥ n.
func pow2AtLeast(n int) int {
	p := 1
	for p < n {
		p <<= 1
	}
	return p
}

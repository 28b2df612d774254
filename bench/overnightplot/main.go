// Command overnightplot plots the samples of bench/overnight.sh (RSS, store
// bytes, sims/s, states and regions against time), reports the peak of the
// memory figures (bounded by the campaign's budget, not extrapolated) and
// extrapolates simulations and regions to 8 hours with a power law a·t^b
// fitted (least squares in log-log) to the second half of the samples.
//
//	go run ./bench/overnightplot samples.csv samples.png
//
// bench/overnight.sh also uses it to turn a status.json into one CSV row:
//
//	overnightplot sample STATUS.json ELAPSED_S RSS_MB TREE_RSS_MB LAST_SIMS DT_S
package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

func main() {
	if len(os.Args) == 8 && os.Args[1] == "sample" {
		os.Exit(sample(os.Args[2:]))
	}
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: overnightplot samples.csv out.png")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 2 {
		fmt.Fprintln(os.Stderr, "overnightplot: no samples in", os.Args[1], err)
		os.Exit(2)
	}
	head := rows[0]
	col := map[string][]float64{}
	for _, r := range rows[1:] {
		for i, h := range head {
			v, _ := strconv.ParseFloat(r[i], 64)
			col[h] = append(col[h], v)
		}
	}
	t := col["elapsed_s"]
	panels := []struct {
		title string
		ys    []string
	}{
		{"memory (MB)", []string{"rss_mb", "tree_rss_mb", "store_mb"}},
		{"throughput (sims/s)", []string{"sims_per_s"}},
		{"states and regions", []string{"pooled_states", "regions_k1", "regions_k16", "regions_k128"}},
	}
	img := vgimg.New(24*vg.Centimeter, 30*vg.Centimeter)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadY: vg.Centimeter}
	for i, pn := range panels {
		p := plot.New()
		p.Title.Text = pn.title
		p.X.Label.Text = "elapsed (minutes)"
		p.Legend.Top = true
		p.Legend.Left = true
		for j, y := range pn.ys {
			pts := make(plotter.XYs, len(t))
			for k := range t {
				pts[k].X, pts[k].Y = t[k]/60, col[y][k]
			}
			l, err := plotter.NewLine(pts)
			if err != nil {
				continue
			}
			l.Color = plotter.DefaultLineStyle.Color
			l.Dashes = [][]vg.Length{nil, {vg.Points(4), vg.Points(2)}, {vg.Points(1), vg.Points(2)}, {vg.Points(6), vg.Points(2), vg.Points(1), vg.Points(2)}}[j%4]
			p.Add(l)
			p.Legend.Add(y, l)
		}
		p.Draw(tiles.At(dc, 0, i))
	}
	out, err := os.Create(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	defer out.Close()
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	last := len(t) - 1
	fmt.Printf("last sample at %.0f min: RSS %.0f MB (tree %.0f MB), store %.0f MB, %s sims, %.0f pooled states, regions k=1 %.0f, k=16 %.0f, k=128 %.0f, exact from k=%.0f, pools at k=%.0f\n",
		t[last]/60, col["rss_mb"][last], col["tree_rss_mb"][last], col["store_mb"][last], strconv.FormatFloat(col["sims"][last], 'f', 0, 64),
		col["pooled_states"][last], col["regions_k1"][last], col["regions_k16"][last], col["regions_k128"][last], col["exact_from_k"][last], col["pools_at_k"][last])
	// Memory is bounded by design (the store coarsens at its share of the
	// budget, the runtime keeps the heap under its soft limit): report the
	// peak; a power law through a sawtooth would be meaningless.
	for _, y := range []string{"rss_mb", "tree_rss_mb", "store_mb"} {
		peak, at := 0.0, 0.0
		for k, v := range col[y] {
			if v > peak {
				peak, at = v, t[k]
			}
		}
		fmt.Printf("peak %s: %.0f at %.0f min\n", y, peak, at/60)
	}
	for _, y := range []string{"sims", "regions_k1", "regions_k16", "regions_k128"} {
		a, b, ok := powerFit(t, col[y])
		if !ok {
			continue
		}
		fmt.Printf("extrapolated %s at 8 h: %.4g (fit %.3g·t^%.2f over the second half)\n", y, a*math.Pow(8*3600, b), a, b)
	}
}

// powerFit fits y = a·t^b to the second half of the samples with y > 0.
func powerFit(t, y []float64) (a, b float64, ok bool) {
	var xs, ys []float64
	for i := len(t) / 2; i < len(t); i++ {
		if t[i] > 0 && y[i] > 0 {
			xs = append(xs, math.Log(t[i]))
			ys = append(ys, math.Log(y[i]))
		}
	}
	if len(xs) < 3 {
		return 0, 0, false
	}
	alpha, beta := stat.LinearRegression(xs, ys, nil, false)
	return math.Exp(alpha), beta, true
}

// sample prints the CSV row of one status.json (see bench/overnight.sh).
func sample(a []string) int {
	b, err := os.ReadFile(a[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	var st struct {
		Sims    int               `json:"sims"`
		Regions map[string]uint64 `json:"regions"`
		Store   struct {
			Bytes  float64 `json:"bytes"`
			States int     `json:"pooled_states"`
			Visits uint64  `json:"visits"`
			FloorK int     `json:"exact_from_k"`
			PoolK  int     `json:"pools_at_k"`
		} `json:"store"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		fmt.Fprintln(os.Stderr, a[0], err)
		return 2
	}
	last, _ := strconv.Atoi(a[4])
	dt, _ := strconv.ParseFloat(a[5], 64)
	fmt.Printf("%s,%s,%s,%d,%.1f,%.1f,%d,%d,%d,%d,%d,%d,%d\n", a[1], a[2], a[3], st.Sims, float64(st.Sims-last)/max(dt, 1),
		st.Store.Bytes/1e6, st.Store.States, st.Store.Visits, st.Regions["1"], st.Regions["16"], st.Regions["128"], st.Store.FloorK, st.Store.PoolK)
	return 0
}

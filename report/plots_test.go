package report

import (
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/plotter"
)

// A heat map's colour scale is labelled in regions per cell, from one to
// the most in a cell, and is drawn under the map.
func TestColourScale(t *testing.T) {
	for _, tc := range []struct {
		max  float64
		want []string
	}{
		{1, []string{"1"}},
		{7, []string{"1", "2", "5"}},
		{120, []string{"1", "2", "5", "10", "20", "50", "100"}},
	} {
		g := &grid{counts: [][]float64{{1, tc.max}}, nx: 2, ny: 1, dx: 1, dy: 1}
		hm := plotter.NewHeatMap(logZ{g}, palette.Heat(64, 1))
		sc := colourScale(hm, tc.max)
		var got []string
		for _, tk := range sc.X.Tick.Marker.Ticks(sc.X.Min, sc.X.Max) {
			got = append(got, tk.Label)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("max %v: ticks %q, want %q", tc.max, got, tc.want)
		}
		path := filepath.Join(t.TempDir(), "heat.png")
		pl := plot.New()
		pl.Add(hm)
		if err := saveWithScale(path, pl, sc); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Height <= cfg.Width {
			t.Errorf("max %v: %d × %d px: the scale is not under the square map", tc.max, cfg.Width, cfg.Height)
		}
	}
}

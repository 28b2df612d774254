//go:build !gofuzz

package coverage

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestFormatPercent(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		want string
	}{
		{0, "0"}, {1, "100"}, {0.1234, "12.3"}, {0.01, "1.00"}, {0.8, "80.0"},
		{0.000123, "0.0123"}, {4.5e-7, "0.0000450"}, {9.92e-7, "0.0000992"},
		{0.09996, "10.0"}, {0.0009996, "0.100"}, {math.NaN(), "-"},
	} {
		if got := FormatPercent(tc.f); got != tc.want {
			t.Errorf("FormatPercent(%g) = %q, want %q", tc.f, got, tc.want)
		}
	}
}

func paperSnapshots(t testing.TB) []Snapshot {
	s := mustStore(t, Space{Vars: DefaultSpace().Vars[:2]}, Options{})
	for i, st := range [][]float64{{1, 1}, {513, 1}, {1, 513}, {1024, 1024}} {
		s.Add(st, Visit{Config: uint64(i)})
	}
	r := mustStore(t, Space{Vars: DefaultSpace().Vars[:2]}, Options{})
	r.Add([]float64{1, 1}, Visit{})
	r.Add([]float64{2, 2}, Visit{})
	r.Add([]float64{0, 0}, Visit{}) // outside S
	return []Snapshot{s.Snapshot("act", 4), r.Snapshot("ran", 4)}
}

func TestTables(t *testing.T) {
	snaps := paperSnapshots(t)
	header, rows := Rows(snaps...)
	if len(header) != 4 || len(rows) != 11 {
		t.Fatalf("header %v, %d rows", header, len(rows))
	}
	for _, tc := range []struct {
		row  int
		want []string
	}{
		{0, []string{"1", "1048576", "4 (0.000381 %)", "2 (0.000191 %)"}},
		{9, []string{"512", "4", "4 (100 %)", "1 (25.0 %)"}},
		{10, []string{"1024", "1", "1 (100 %)", "1 (100 %)"}},
	} {
		if got := strings.Join(rows[tc.row], "|"); got != strings.Join(tc.want, "|") {
			t.Errorf("row %d = %q, want %q", tc.row, got, strings.Join(tc.want, "|"))
		}
	}
	var ascii, md bytes.Buffer
	if err := WriteTable(&ascii, snaps...); err != nil {
		t.Fatal(err)
	}
	if err := WriteMarkdown(&md, snaps...); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"act visited (%)", "ran visited (%)", "1048576", "(100 %)", "visited states outside S: act=0, ran=1"} {
		if !strings.Contains(ascii.String(), want) || !strings.Contains(md.String(), want) {
			t.Errorf("tables lack %q:\n%s\n%s", want, ascii.String(), md.String())
		}
	}
	if !strings.Contains(md.String(), "|:") && !strings.Contains(md.String(), ":|") && !strings.Contains(md.String(), "|-") {
		t.Errorf("markdown has no separator row:\n%s", md.String())
	}
	// Narrow: one total column, one column per method.
	for _, line := range strings.Split(ascii.String(), "\n") {
		if n := len([]rune(line)); n > 80 {
			t.Errorf("table line of %d characters, want ≤ 80 for two methods: %q", n, line)
		}
	}
	t.Logf("\n%s\n%s", ascii.String(), md.String())
}

// TestCappedNote: a store at its out-of-range limit says so.
func TestCappedNote(t *testing.T) {
	s := mustStore(t, Space{Vars: DefaultSpace().Vars[:2]}, Options{})
	s.LimitOutOfRange(2)
	for i := range 5 {
		s.Add([]float64{0, float64(2000 + i)}, Visit{}) // outside S
	}
	for _, tc := range []struct {
		snap Snapshot
		want string
	}{
		{s.Snapshot("act", 5), "act=2 (capped at 2)"},
		{Snapshot{Method: "ran", OutOfRange: 7}, "ran=7\n"},
	} {
		var b bytes.Buffer
		if err := WriteTable(&b, tc.snap); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), tc.want) {
			t.Errorf("table lacks %q:\n%s", tc.want, b.String())
		}
	}
}

func TestSeries(t *testing.T) {
	s := mustStore(t, DefaultSpace(), Options{})
	se := NewSeries("act", DefaultSpace())
	rng := rand.New(rand.NewPCG(1, 2))
	for sims := int64(0); sims <= 100; sims += 10 {
		se.Record(sims, s)
		fillSynth(s, rng, 10, 200, uint64(sims))
	}
	se.Mark(50, "step 2")
	sims, cov := se.Coverage(128)
	if len(sims) != 11 || sims[10] != 100 || cov[0] != 0 || cov[10] <= 0 {
		t.Fatalf("Coverage(128) = %v, %v", sims, cov)
	}
	for i := 1; i < len(cov); i++ {
		if cov[i] < cov[i-1] {
			t.Fatalf("coverage decreased: %v", cov)
		}
	}
	d, ok := se.Growth(128, 50)
	if !ok || d != cov[10]-cov[5] {
		t.Errorf("Growth = %g, %v; want %g", d, ok, cov[10]-cov[5])
	}
	if _, ok := se.Growth(128, 500); ok {
		t.Error("Growth over a window longer than the series")
	}
	last, _ := se.Last()
	if got := last.Coverage(128); got != cov[10] {
		t.Errorf("Last().Coverage = %g", got)
	}
}

// TestPlots writes Fig. 8–10 style plots; set COVERAGE_PLOT_DIR to keep them.
func TestPlots(t *testing.T) {
	dir := os.Getenv("COVERAGE_PLOT_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	sp := DefaultSpace()
	rng := rand.New(rand.NewPCG(1, 2))
	var snaps []Snapshot
	var series []*Series
	for i, m := range []string{"act", "ran", "man"} {
		s := mustStore(t, sp, Options{})
		se := NewSeries(m, sp)
		for sims := int64(0); sims <= 200; sims += 20 {
			se.Record(sims, s)
			fillSynth(s, rng, 20, 200*(3-i), uint64(sims))
		}
		if m == "act" {
			se.Mark(80, "step 2")
			se.Mark(160, "step 3")
		}
		snaps = append(snaps, s.Snapshot(m, 220))
		series = append(series, se)
	}
	for _, name := range []string{"coverage_k.png", "coverage_k.svg"} {
		if err := SaveCoveragePlot(filepath.Join(dir, name), snaps...); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []int{2, 128} {
		for _, ext := range []string{"png", "svg"} {
			name := filepath.Join(dir, "growth_k"+strconv.Itoa(k)+"."+ext)
			if err := SaveGrowthPlot(name, k, series...); err != nil {
				t.Fatal(err)
			}
		}
	}
	png, err := os.ReadFile(filepath.Join(dir, "coverage_k.png"))
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("PNG: %v", err)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "growth_k128.svg"))
	if err != nil || !bytes.Contains(svg, []byte("<svg")) {
		t.Fatalf("SVG: %v", err)
	}
	p, err := CoveragePlot(snaps...)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WritePlot(&buf, p, "svg"); err != nil || buf.Len() == 0 {
		t.Fatalf("WritePlot: %v", err)
	}
	if _, err := CoveragePlot(); err == nil {
		t.Error("empty plot accepted")
	}
	if _, err := GrowthPlot(2); err == nil {
		t.Error("empty growth plot accepted")
	}
}

func TestRoundTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   string
	}{
		{0, 2000, "0 500 1000 1500 2000"},
		{-3, 45, "0 10 20 30 40"},
		{17.2, 29.5, "18 20 22 24 26 28"},
		{0, 0.003, "0 0.001 0.002 0.003"},
		{0, 1.65, "0 0.5 1 1.5"},
		{64, 200, "80 100 120 140 160 180 200"},
		{0, 7, "0 2 4 6"},
	} {
		var got []string
		for _, tk := range (RoundTicks{}).Ticks(tc.lo, tc.hi) {
			got = append(got, tk.Label)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("ticks over [%g, %g] = %v, want %s", tc.lo, tc.hi, got, tc.want)
		}
	}
}

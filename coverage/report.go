package coverage

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// Snapshot is the coverage of one method at one moment: the visited and total
// regions of S at every region size k = 2^l (ACT §4.2, Fig. 8). It holds no
// reference to the store.
type Snapshot struct {
	Method     string   // e.g. "act", "ran", "man"
	Sims       int64    // simulations run so far
	Visited    []uint64 // Visited[l]: visited regions at k = 2^l
	Total      []uint64 // Total[l]: regions of S at k = 2^l (saturating)
	OutOfRange int      // distinct visited states outside S
	// OutOfRangeDropped counts the states outside S not kept because
	// OutOfRange reached the store's limit (LimitOutOfRange): > 0 means
	// OutOfRange is capped.
	OutOfRangeDropped uint64
}

// Snapshot returns the current coverage of s, labelled with a method name and
// the number of simulations run.
func (s *Store) Snapshot(method string, sims int64) Snapshot {
	sn := Snapshot{Method: method, Sims: sims, OutOfRange: s.oor.len(), OutOfRangeDropped: s.oorDropped}
	for l := 0; l <= s.ly.L; l++ {
		sn.Visited = append(sn.Visited, s.VisitedRegions(1<<l))
		sn.Total = append(sn.Total, s.ly.sp.Regions(1<<l))
	}
	return sn
}

// Coverage is coverage(S,k) as a fraction in [0,1], or NaN when the snapshot
// has no level for k.
func (sn Snapshot) Coverage(k int) float64 {
	l, ok := levelOf(k)
	if !ok || l >= len(sn.Visited) || l >= len(sn.Total) || sn.Total[l] == 0 {
		return nan()
	}
	return float64(sn.Visited[l]) / float64(sn.Total[l])
}

// Rows returns the coverage table as strings: a header, then one row per
// region size k = 1, 2, 4, …, with the regions of S at k (one total column:
// S is the same for every method) and, for each snapshot in order, one
// column "visited (percent %)": narrow enough for a terminal with three
// methods side by side.
func Rows(snaps ...Snapshot) (header []string, rows [][]string) {
	header = []string{"k", "regions of S"}
	levels := 0
	for _, sn := range snaps {
		header = append(header, sn.Method+" visited (%)")
		levels = max(levels, len(sn.Visited))
	}
	for l := range levels {
		total := ""
		for _, sn := range snaps {
			if l < len(sn.Total) {
				total = strconv.FormatUint(sn.Total[l], 10)
				break
			}
		}
		row := []string{strconv.Itoa(1 << l), total}
		for _, sn := range snaps {
			if l >= len(sn.Visited) || l >= len(sn.Total) {
				row = append(row, "")
				continue
			}
			row = append(row, strconv.FormatUint(sn.Visited[l], 10)+" ("+FormatPercent(sn.Coverage(1<<l))+" %)")
		}
		rows = append(rows, row)
	}
	return header, rows
}

// FormatPercent formats a coverage fraction as a percentage, in one format
// for every size: three significant digits in plain decimals, never an
// exponent ("80.0", "1.66", "0.0166", "0.0000992"), "100" for all, "0"
// for none and "-" for NaN.
func FormatPercent(f float64) string {
	p := 100 * f
	switch {
	case p != p:
		return "-"
	case p == 0:
		return "0"
	case p >= 100:
		return strconv.FormatFloat(p, 'f', 0, 64)
	}
	// Round to three significant digits first: 9.996 is "10.0", not "10.00".
	e := int(math.Floor(math.Log10(math.Abs(p))))
	r, _ := strconv.ParseFloat(strconv.FormatFloat(p, 'e', 2, 64), 64)
	if e2 := int(math.Floor(math.Log10(math.Abs(r)))); e2 > e {
		e = e2
	}
	return strconv.FormatFloat(r, 'f', max(0, 2-e), 64)
}

func summary(snaps []Snapshot) string {
	var sims, oor []string
	for _, sn := range snaps {
		sims = append(sims, fmt.Sprintf("%s=%d", sn.Method, sn.Sims))
		o := fmt.Sprintf("%s=%d", sn.Method, sn.OutOfRange)
		if sn.OutOfRangeDropped > 0 {
			o += fmt.Sprintf(" (capped at %d)", sn.OutOfRange)
		}
		oor = append(oor, o)
	}
	return "simulations: " + strings.Join(sims, ", ") +
		"; visited states outside S: " + strings.Join(oor, ", ") + "\n"
}

func render(t *tablewriter.Table, snaps []Snapshot) error {
	header, rows := Rows(snaps...)
	t.Header(header)
	if err := t.Bulk(rows); err != nil {
		return err
	}
	return t.Render()
}

// WriteTable writes the coverage table of the snapshots (one row per k; for
// each method the visited regions, the total and the percentage) as an ASCII
// table, followed by a line with the simulations and the out-of-range states
// of each method.
func WriteTable(w io.Writer, snaps ...Snapshot) error {
	t := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignCenter),
		tablewriter.WithRowAlignment(tw.AlignRight))
	if err := render(t, snaps); err != nil {
		return err
	}
	_, err := io.WriteString(w, summary(snaps))
	return err
}

// WriteMarkdown writes the same table as WriteTable in Markdown.
func WriteMarkdown(w io.Writer, snaps ...Snapshot) error {
	t := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewMarkdown()),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAlignment(tw.AlignRight))
	if err := render(t, snaps); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n"+summary(snaps))
	return err
}

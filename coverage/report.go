package coverage

import (
	"fmt"
	"io"
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
}

// Snapshot returns the current coverage of s, labelled with a method name and
// the number of simulations run.
func (s *Store) Snapshot(method string, sims int64) Snapshot {
	sn := Snapshot{Method: method, Sims: sims, OutOfRange: s.oor.len()}
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
// region size k = 1, 2, 4, …, with, for each snapshot in order, the visited
// regions, the total regions and the percentage.
func Rows(snaps ...Snapshot) (header []string, rows [][]string) {
	header = []string{"k"}
	levels := 0
	for _, sn := range snaps {
		header = append(header, sn.Method+" visited", sn.Method+" total", sn.Method+" %")
		levels = max(levels, len(sn.Visited))
	}
	for l := range levels {
		row := []string{strconv.Itoa(1 << l)}
		for _, sn := range snaps {
			if l >= len(sn.Visited) || l >= len(sn.Total) {
				row = append(row, "", "", "")
				continue
			}
			row = append(row,
				strconv.FormatUint(sn.Visited[l], 10),
				strconv.FormatUint(sn.Total[l], 10),
				FormatPercent(sn.Coverage(1<<l)))
		}
		rows = append(rows, row)
	}
	return header, rows
}

// FormatPercent formats a coverage fraction as a percentage with three
// significant digits for small values ("0.0123", "4.5e-05") and two decimals
// from 1% up ("12.34").
func FormatPercent(f float64) string {
	p := 100 * f
	switch {
	case p != p:
		return "-"
	case p == 0:
		return "0"
	case p >= 1:
		return strconv.FormatFloat(p, 'f', 2, 64)
	}
	return strconv.FormatFloat(p, 'g', 3, 64)
}

func summary(snaps []Snapshot) string {
	var sims, oor []string
	for _, sn := range snaps {
		sims = append(sims, fmt.Sprintf("%s=%d", sn.Method, sn.Sims))
		oor = append(oor, fmt.Sprintf("%s=%d", sn.Method, sn.OutOfRange))
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

package symbolic

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
)

// PaperTable2 is SEIB's Table 2 (udp4 branches, n = 1…4; 0: did not finish
// in 24 hours).
var PaperTable2 = map[string][4]int{
	"none": {11, 215, 6013, 0},
	"S":    {8, 109, 2098, 0},
	"C":    {8, 130, 3184, 0},
	"I":    {5, 41, 677, 13591},
	"SC":   {5, 53, 858, 18677},
	"SCI":  {4, 30, 337, 5065},
}

// TableConfig selects what Table measures.
type TableConfig struct {
	MaxN      int           // udp4 windows 1…MaxN (0: 4)
	DMax      []int         // tcp-bulk dmax values in ms (nil: 4, 16, …, 16384)
	Cell      time.Duration // time limit of one exploration (0: 120 s)
	Reduction []string      // settings (nil: none S C I SC SCI, I and SCI at node granularity, then H and SCH on udp4)
	Progress  io.Writer     // optional: one line per finished cell
}

type tableCell struct {
	branches int
	complete bool
	wall     float64
	outcomes int
}

func (c tableCell) String() string {
	if !c.complete {
		return fmt.Sprintf(">%d", c.branches)
	}
	return fmt.Sprint(c.branches)
}

// Table measures branch counts: udp4 for n = 1…MaxN beside SEIB's Table 2,
// and tcp-bulk (n = 3) for each dmax (SEIB's Fig. 9), as Markdown tables.
// A cell that hits its time limit shows ">branches so far".
func Table(ctx context.Context, w io.Writer, cfg TableConfig) error {
	if cfg.MaxN == 0 {
		cfg.MaxN = 4
	}
	if cfg.DMax == nil {
		cfg.DMax = []int{4, 16, 64, 256, 1024, 4096, 16384}
	}
	if cfg.Cell == 0 {
		cfg.Cell = 120 * time.Second
	}
	if cfg.Reduction == nil {
		cfg.Reduction = []string{"none", "S", "C", "I", "SC", "SCI", "I/node", "SCI/node", "H", "SCH"}
	}
	run := func(sc *Scenario, setting string) (tableCell, error) {
		name, byNode := strings.CutSuffix(setting, "/node")
		red, err := ParseReductions(name)
		if err != nil {
			return tableCell{}, err
		}
		rep, err := Explore(ctx, sc, Options{Reductions: red, NodeGranularity: byNode, KeepBranches: -1, TimeLimit: cfg.Cell})
		if err != nil {
			return tableCell{}, err
		}
		c := tableCell{rep.Branches, rep.Complete, rep.WallSeconds, len(rep.Outcomes)}
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "%s n=%d hi=%v %s: %s branches in %.1f s\n", sc.Name, sc.Window.N, sc.Window.Hi, setting, c, c.wall)
		}
		return c, nil
	}

	fmt.Fprintf(w, "### udp4: branches (last n packets from node 0 to node 2 uncertain in [1, 1024] ms)\n\n")
	fmt.Fprintf(w, "| n | %s | SCI time (s) | paper: %s |\n", strings.Join(cfg.Reduction, " | "), strings.Join(paperCols(), " | "))
	fmt.Fprintf(w, "|---|%s---|%s\n", strings.Repeat("---|", len(cfg.Reduction)), strings.Repeat("---|", len(paperCols())))
	for n := 1; n <= cfg.MaxN; n++ {
		var cells []string
		sciTime := "–"
		for _, s := range cfg.Reduction {
			c, err := run(UDP4(n, time.Millisecond, 1024*time.Millisecond), s)
			if err != nil {
				return err
			}
			cells = append(cells, c.String())
			if s == "SCI" {
				sciTime = fmt.Sprintf("%.2f", c.wall)
			}
		}
		var paper []string
		for _, p := range paperCols() {
			v := "–"
			if n <= 4 {
				if x := PaperTable2[p][n-1]; x > 0 {
					v = fmt.Sprint(x)
				}
			}
			paper = append(paper, v)
		}
		fmt.Fprintf(w, "| %d | %s | %s | %s |\n", n, strings.Join(cells, " | "), sciTime, strings.Join(paper, " | "))
	}

	fmt.Fprintf(w, "\n### tcp-bulk: branches (last 3 data packets uncertain in [1, dmax] ms; SEIB Fig. 9)\n\n")
	fmt.Fprintf(w, "| dmax (ms) | %s | outcomes |\n", strings.Join(cfg.Reduction, " | "))
	fmt.Fprintf(w, "|---|%s---|\n", strings.Repeat("---|", len(cfg.Reduction)))
	for _, d := range cfg.DMax {
		var cells []string
		outcomes := 0
		for _, s := range cfg.Reduction {
			if strings.Contains(s, "H") {
				cells = append(cells, "n/a") // state hashing needs a topology scenario
				continue
			}
			sc := TCPBulk(3, time.Duration(d)*time.Millisecond)
			c, err := run(sc, s)
			if err != nil {
				return err
			}
			cells = append(cells, c.String())
			if c.complete {
				outcomes = c.outcomes
			}
		}
		o := "–"
		if outcomes > 0 {
			o = fmt.Sprint(outcomes)
		}
		fmt.Fprintf(w, "| %d | %s | %s |\n", d, strings.Join(cells, " | "), o)
	}
	return nil
}

func paperCols() []string { return []string{"none", "S", "C", "I", "SC", "SCI"} }

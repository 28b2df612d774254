// Command usecases runs the ACT paper's use cases as benchmarks (issue 21):
// each campaign over several seeds, budgets and modes, and prints for each
// condition the found-rate (seeds with a hit within the budget) and the
// median number of simulations to the first hit (over the seeds that found
// it; a seed that did not counts as budget+1 in the "all" median). wall_s is
// the wall time of the mode over all its seeds; first_hits lists each
// seed's first hit ("-": none).
//
//	go run ./bench/usecases [-seeds 5] [-budgets 2000,10000] [-modes paper,adaptive,directed,ran] [-workers N] CAMPAIGN.yaml...
//
// Modes: paper (ACT with ACT §3's step schedule), adaptive (ACT with the
// adaptive schedule), directed (adaptive with the directed step), ran
// (uniform random); paper and adaptive run without the directed step. A run stops at the batch in
// which every condition has been hit: the first hit does not depend on
// what comes after it, so this saves time without changing the figures.
// bench/usecases.sh runs it over the shipped examples.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/actfuzz/actfuzz/act"
)

func main() {
	seeds := flag.Int("seeds", 5, "campaign seeds 1..N")
	budgets := flag.String("budgets", "2000,10000", "comma-separated budgets (simulations)")
	modes := flag.String("modes", "paper,adaptive,directed,ran", "comma-separated modes: paper, adaptive, directed, ran")
	workers := flag.Int("workers", 0, "parallel simulations (0: GOMAXPROCS)")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: usecases [flags] CAMPAIGN.yaml...")
		os.Exit(2)
	}
	var bs []int
	for _, s := range strings.Split(*budgets, ",") {
		b, err := strconv.Atoi(s)
		if err != nil || b <= 0 {
			fmt.Fprintf(os.Stderr, "usecases: budget %q\n", s)
			os.Exit(2)
		}
		bs = append(bs, b)
	}
	fmt.Printf("%-18s %-22s %7s %-9s %6s %10s %10s %8s  %s\n", "campaign", "condition", "budget", "mode", "found", "median_hit", "median_all", "wall_s", "first_hits")
	for _, path := range flag.Args() {
		for _, budget := range bs {
			for _, mode := range strings.Split(*modes, ",") {
				if err := one(path, budget, mode, *seeds, *workers); err != nil {
					fmt.Fprintf(os.Stderr, "usecases: %s: %v\n", path, err)
					os.Exit(1)
				}
			}
		}
	}
}

func one(path string, budget int, mode string, seeds, workers int) error {
	c, err := act.LoadCampaign(path)
	if err != nil {
		return err
	}
	method := "act"
	switch mode {
	case "paper":
		c.Schedule, c.Directed = act.SchedulePaper, "off"
	case "adaptive":
		c.Schedule, c.Directed = act.ScheduleAdaptive, "off"
	case "directed":
		c.Schedule, c.Directed = act.ScheduleAdaptive, "on"
	case "ran":
		method = "ran"
	default:
		return fmt.Errorf("mode %q: want paper, adaptive, directed or ran", mode)
	}
	first := map[string][]int{} // condition → first hit (simulations) per seed; 0: none
	var wall time.Duration
	for seed := 1; seed <= seeds; seed++ {
		c.Seed = uint64(seed)
		ctx, cancel := context.WithCancel(context.Background())
		found := map[string]bool{}
		onFinding := func(g *act.FindingGroup) {
			if g.Seed.Finding.Kind == "condition" {
				found[g.Seed.Finding.Condition] = true
			}
			if len(found) == len(c.Conditions) {
				cancel()
			}
		}
		start := time.Now()
		rep, err := act.Run(ctx, c, act.Options{Method: method, Budget: budget, Workers: workers, OnFinding: onFinding})
		cancel()
		wall += time.Since(start)
		if err != nil {
			return err
		}
		for _, cond := range c.Conditions {
			hit := 0
			for _, g := range rep.Findings {
				if g.Seed.Finding.Kind == "condition" && g.Seed.Finding.Condition == cond.Name && (hit == 0 || g.FirstSim+1 < hit) {
					hit = g.FirstSim + 1
				}
			}
			first[cond.Name] = append(first[cond.Name], hit)
		}
	}
	for _, cond := range c.Conditions {
		hits := first[cond.Name]
		var got, all []int
		for _, h := range hits {
			if h > 0 {
				got = append(got, h)
				all = append(all, h)
			} else {
				all = append(all, budget+1)
			}
		}
		per := make([]string, len(hits))
		for i, h := range hits {
			per[i] = "-"
			if h > 0 {
				per[i] = strconv.Itoa(h)
			}
		}
		fmt.Printf("%-18s %-22s %7d %-9s %3d/%-2d %10s %10s %8.0f  %s\n", strings.TrimSuffix(filepath.Base(path), ".yaml"), cond.Name, budget, mode,
			len(got), len(hits), median(got), median(all), wall.Seconds(), strings.Join(per, ","))
	}
	return nil
}

func median(xs []int) string {
	if len(xs) == 0 {
		return "-"
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return strconv.Itoa(s[n/2])
	}
	return strconv.FormatFloat(float64(s[n/2-1]+s[n/2])/2, 'f', -1, 64)
}

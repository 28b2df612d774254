// Command fuzzcompare measures region coverage of ACT, the baselines and the
// fuzzers of package fuzz on equal budgets of simulations: the experiment
// behind ACT §6.2 (state-region feedback against code-coverage feedback).
//
//	go run ./fuzz/cmd/fuzzcompare -budget 2000 -methods act,ran,fuzz,fuzz-regions
//
// Methods: act, ran, man (act.Run), fuzz (code-coverage proxy feedback),
// fuzz-regions (the same mutation loop with region feedback) and
// fuzz-gocover (real Go block coverage), which needs a coverage build:
//
//	go build -cover -covermode=atomic \
//	  -coverpkg=github.com/actfuzz/actfuzz/netenv/...,github.com/actfuzz/actfuzz/ccai \
//	  -o /tmp/fuzzcompare ./fuzz/cmd/fuzzcompare
//	GOCOVERDIR=$(mktemp -d) /tmp/fuzzcompare -methods fuzz-gocover
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/coverage"
	"github.com/actfuzz/actfuzz/fuzz"
)

func main() {
	campaign := flag.String("campaign", "", "campaign file (default: the embedded default CUBIC campaign)")
	budget := flag.Int("budget", 2000, "simulations per method")
	bytes := flag.Uint64("bytes", 0, "override the campaign's bytes per flow")
	methods := flag.String("methods", "act,ran,fuzz,fuzz-regions", "comma-separated methods")
	seeds := flag.String("seeds", "", "comma-separated campaign seeds (default: the campaign's)")
	workers := flag.Int("workers", 0, "parallel simulations (0: GOMAXPROCS)")
	ks := flag.String("k", "1,16,128", "region sizes to report")
	flag.Parse()

	c := act.DefaultCampaign()
	if *campaign != "" {
		var err error
		if c, err = act.LoadCampaign(*campaign); err != nil {
			fail(err)
		}
	}
	if *bytes > 0 {
		c.Bytes = *bytes
	}
	seedList := []uint64{c.Seed}
	if *seeds != "" {
		seedList = nil
		for _, f := range strings.Split(*seeds, ",") {
			v, err := strconv.ParseUint(f, 10, 64)
			if err != nil {
				fail(err)
			}
			seedList = append(seedList, v)
		}
	}
	var kList []int
	for _, f := range strings.Split(*ks, ",") {
		k, err := strconv.Atoi(f)
		if err != nil {
			fail(err)
		}
		kList = append(kList, k)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	fmt.Printf("# campaign %s, ccai %v, bytes %d, budget %d sims per method\n", c.Path, c.CCAI, c.Bytes, *budget)
	fmt.Printf("%-13s %6s", "method", "seed")
	for _, k := range kList {
		fmt.Printf(" %10s", "k="+strconv.Itoa(k))
	}
	fmt.Printf(" %8s  %s\n", "wall", "notes")
	for _, seed := range seedList {
		c.Seed = seed
		for _, m := range strings.Split(*methods, ",") {
			start := time.Now()
			var st *coverage.Store
			var sims int
			notes := ""
			switch m {
			case "act", "ran", "man":
				rep, err := act.Run(ctx, c, act.Options{Method: m, Budget: *budget, Workers: *workers})
				if err != nil {
					fail(err)
				}
				st, sims = rep.Store, rep.Sims
				notes = fmt.Sprintf("findings %d", len(rep.Findings))
			case "fuzz", "fuzz-regions", "fuzz-gocover":
				fb := map[string]fuzz.Feedback{"fuzz": fuzz.FeedbackCode, "fuzz-regions": fuzz.FeedbackRegions,
					"fuzz-gocover": fuzz.FeedbackGoCover}[m]
				rep, err := fuzz.Run(ctx, c, fuzz.Options{Budget: *budget, Workers: *workers, Feedback: fb})
				if err != nil {
					fail(err)
				}
				st, sims = rep.Store, rep.Sims
				notes = fmt.Sprintf("corpus %d, features %d (with buckets %d), finding runs %d",
					rep.Corpus, rep.Edges, rep.Features, rep.Findings)
			default:
				fail(fmt.Errorf("unknown method %q", m))
			}
			fmt.Printf("%-13s %6d", m, seed)
			for _, k := range kList {
				fmt.Printf(" %10d", st.VisitedRegions(k))
			}
			fmt.Printf(" %7.1fs  %d sims, %s\n", time.Since(start).Seconds(), sims, notes)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "fuzzcompare:", err)
	os.Exit(1)
}

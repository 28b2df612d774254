package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/netenv"
)

// confirmReport is the result of `actfuzz confirm`: how often a finding's
// condition held in repeated runs on a subject that is not deterministic
// (the kernel), and when.
type confirmReport struct {
	Seed      string    `json:"seed"`
	Subject   string    `json:"subject"`
	Kernel    string    `json:"kernel,omitempty"`
	Condition string    `json:"condition"`
	When      string    `json:"when"`
	Runs      int       `json:"runs"`
	Held      int       `json:"held"`
	Failed    int       `json:"failed"`      // runs that ended in an error
	HitTimesS []float64 `json:"hit_times_s"` // first hit of each run that held, sorted
	// RecordedS is the hit time the seed recorded (on its own subject).
	RecordedS float64  `json:"recorded_s"`
	MinS      float64  `json:"min_s,omitempty"`
	MedianS   float64  `json:"median_s,omitempty"`
	MaxS      float64  `json:"max_s,omitempty"`
	Errors    []string `json:"errors,omitempty"`
}

// runConfirm is `actfuzz confirm SEED.json --subject linux --runs 20`: it
// re-runs a condition finding (from any subject) several times on a
// subject and prints how often the condition held, with the spread of the
// hit time. Exit 0: it held in at least one run; 1: in none.
func runConfirm(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("actfuzz confirm", flag.ContinueOnError)
	subject := fs.String("subject", "linux", "the subject to confirm on: linux (the running kernel), or any other")
	runs := fs.Int("runs", 20, "how many runs")
	workers := fs.Int("workers", 1, "runs at once (a kernel run mostly waits on real time)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	_ = addVerbosityFlags(fs)
	positional, ok, code := parseInterleaved(fs, args, stderr)
	if !ok {
		return code
	}
	if len(positional) != 1 {
		fmt.Fprintln(stderr, "usage: actfuzz confirm SEED.json [--subject linux] [--runs 20] [--workers 1] [--json]")
		return exitUsage
	}
	if *runs < 1 {
		fmt.Fprintf(stderr, "actfuzz confirm: --runs %d: want at least 1\n", *runs)
		return exitUsage
	}
	if *workers < 1 {
		fmt.Fprintf(stderr, "actfuzz confirm: --workers %d: want at least 1\n", *workers)
		return exitUsage
	}
	seed, err := corpus.ReadSeed(positional[0])
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz confirm: %v\n", err)
		return exitUsage
	}
	subj, ok := subjectFlag(*subject, "confirm", stderr)
	if !ok {
		return exitUsage
	}
	defer closeSubject(subj)
	return confirmSeed(ctx, "confirm", positional[0], seed, subj, *runs, *workers, *asJSON, stdout, stderr)
}

// confirmSeed runs seed n times on subj (workers at once) and reports.
func confirmSeed(ctx context.Context, cmd, path string, seed *corpus.Seed, subj netenv.Subject, n, workers int, asJSON bool, stdout, stderr io.Writer) int {
	f := seed.Finding
	if f == nil || f.Kind != "condition" {
		kind := "no finding"
		if f != nil {
			kind = "a " + f.Kind + " finding"
		}
		fmt.Fprintf(stderr, "actfuzz %s: %s: the seed has %s; confirm re-runs a condition finding\n", cmd, path, kind)
		return exitUsage
	}
	if seed.Pinned != nil {
		fmt.Fprintf(stderr, "actfuzz %s: %s: the seed pins a window's extra delays on the native simulator, which is deterministic: actfuzz replay checks it\n", cmd, path)
		return exitUsage
	}
	cfg, err := seed.Config()
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz %s: %s: %v\n", cmd, path, err)
		return exitUsage
	}
	for i, fl := range cfg.Flows {
		if err := checkCCA(subj, fl.CCA); err != nil {
			fmt.Fprintf(stderr, "actfuzz %s: %s: flow %d: %v\n", cmd, path, i, err)
			return exitUsage
		}
	}
	if err := checkConfig(subj, &cfg); err != nil {
		fmt.Fprintf(stderr, "actfuzz %s: %s: %v\n", cmd, path, err)
		return exitUsage
	}
	specs := []corpus.ConditionSpec{f.Spec()}
	if err := corpus.ProvidedVars(subj, seed.CCAI, specs); err != nil {
		fmt.Fprintf(stderr, "actfuzz %s: %s: %v\n", cmd, path, err)
		return exitUsage
	}
	rep := confirmReport{Seed: path, Subject: subj.Name(), Kernel: kernelOf(subj), Condition: f.Condition,
		When: f.When, Runs: n, RecordedS: float64(f.TimeNS) / 1e9}
	var mu sync.Mutex
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range jobs {
				at, held, _, err := corpus.FirstHit(ctx, subj, seed, cfg, specs, nil)
				mu.Lock()
				switch {
				case err != nil:
					rep.Failed++
					rep.Errors = append(rep.Errors, err.Error())
				case held:
					rep.Held++
					rep.HitTimesS = append(rep.HitTimesS, at.Seconds())
				}
				mu.Unlock()
			}
		}()
	}
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if ctx.Err() != nil {
		fmt.Fprintf(stderr, "actfuzz %s: interrupted\n", cmd)
		return exitInterrupted
	}
	slices.Sort(rep.HitTimesS)
	if k := len(rep.HitTimesS); k > 0 {
		rep.MinS, rep.MaxS = rep.HitTimesS[0], rep.HitTimesS[k-1]
		rep.MedianS = rep.HitTimesS[k/2]
		if k%2 == 0 {
			rep.MedianS = (rep.HitTimesS[k/2-1] + rep.HitTimesS[k/2]) / 2
		}
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(rep)
	} else {
		on := rep.Subject
		if rep.Kernel != "" {
			on += " (kernel " + rep.Kernel + ")"
		}
		fmt.Fprintf(stdout, "%s: %s held in %d/%d runs on %s", path, f.Condition, rep.Held, n, on)
		if rep.Failed > 0 {
			fmt.Fprintf(stdout, ", %d failed", rep.Failed)
		}
		fmt.Fprintln(stdout)
		if rep.Held > 0 {
			fmt.Fprintf(stdout, "  first hit at %.3f s median, %.3f–%.3f s (recorded %.3f s on %s)\n",
				rep.MedianS, rep.MinS, rep.MaxS, rep.RecordedS, seed.Subject)
		}
		for _, e := range rep.Errors {
			fmt.Fprintf(stdout, "  error: %s\n", e)
		}
	}
	if rep.Failed == n {
		return exitInternal
	}
	if rep.Held == 0 {
		return exitFound
	}
	return exitOK
}

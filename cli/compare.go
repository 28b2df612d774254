package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/coverage"
	"github.com/actfuzz/actfuzz/fuzz"
	"github.com/actfuzz/actfuzz/internal/suggest"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/report"
)

// actfuzz compare: the methods side by side on one campaign (ACT §5).

func runCompare(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("actfuzz compare", flag.ContinueOnError)
	budget := fs.Int("budget", 0, "simulations per method (0: the campaign's budget)")
	workers := fs.Int("workers", 0, "parallel simulations (0: GOMAXPROCS)")
	methods := fs.String("methods", "act,ran,man", "comma-separated methods: act, ran, man, fuzz (code-coverage-guided)")
	plot := fs.String("plot", "", "write the coverage(S,k) plot (Fig. 8) here, .png or .svg, with the growth plots (Figs. 9–10) beside it as FILE-growth-k2 and -k128 (default: no plots)")
	subject := fs.String("subject", "native", "what runs the simulations: "+suggest.OrList(netenv.SubjectNames()))
	asJSON := fs.Bool("json", false, "print JSON")
	verbosity := addVerbosityFlags(fs)
	memory := fs.String("memory", "", "memory budget of each method's campaign, e.g. 2GB (default: the campaign's memory:, else 2GB)")
	outDir := fs.String("out", "", "also keep every method's campaign in `DIR` (findings, checkpoints) and write DIR/report/index.html with ACT against the baselines (default: keep nothing)")
	isoFlags := addIsolateFlags(fs, false)
	positional, ok, code := parseInterleaved(fs, args, stderr)
	if !ok {
		return code
	}
	mem, ok := memoryFlag(*memory, stderr, "compare")
	if !ok {
		return exitUsage
	}
	iso, ok := isoFlags.options("compare", stderr)
	if !ok {
		return exitUsage
	}
	if *budget < 0 || *workers < 0 {
		fmt.Fprintln(stderr, "actfuzz compare: --budget and --workers must be ≥ 0")
		return exitUsage
	}
	if *plot != "" && !plotExt(*plot) {
		fmt.Fprintf(stderr, "actfuzz compare: --plot %q: want a .png or .svg file\n", *plot)
		return exitUsage
	}
	ms := strings.Split(*methods, ",")
	for _, m := range ms {
		if m != "act" && m != "ran" && m != "man" && m != "fuzz" {
			fmt.Fprintf(stderr, "actfuzz compare: --methods: unknown method %q (want act, ran, man, fuzz)\n", m)
			return exitUsage
		}
	}
	subj, ok := subjectFlag(*subject, "compare", stderr)
	if !ok {
		return exitUsage
	}
	defer closeSubject(subj)
	c, ok := loadCampaign(positional, subj, stderr, "compare")
	if !ok {
		return exitUsage
	}
	if err := checkCampaignSubject(c, subj); err != nil {
		fmt.Fprintf(stderr, "actfuzz compare: --subject %s: %v\n", subj.Name(), err)
		return exitUsage
	}
	if *outDir != "" {
		unlock, code := lockOut("compare", *outDir, infoWriter(*verbosity.quiet, stderr), stderr)
		if code != exitOK {
			return code
		}
		defer unlock()
		if code := checkOut("compare", *outDir, c, false, stderr); code != exitOK {
			return code
		}
	}
	var reps []*act.Report // kept for the report (--out)
	out := map[string]methodJSON{}
	var snaps []coverage.Snapshot
	var series []*coverage.Series
	setMemoryLimit(ctx, c, mem, verbosity.logger(stderr))
	for _, m := range ms {
		if m == "fuzz" {
			rep, code := compareFuzz(ctx, c, *budget, *workers, subj, stderr)
			if code != exitOK {
				return code
			}
			out[m] = methodReport(rep)
			snaps = append(snaps, rep.Store.Snapshot(m, int64(rep.Sims)))
			continue
		}
		opt := act.Options{Method: m, Budget: *budget, Workers: *workers, Subject: subj, Memory: mem, Isolate: *isoFlags.isolate, IsolateOptions: iso,
			Logger: verbosity.logger(stderr), Out: *outDir}
		pr := newProgress(stderr)
		if !*asJSON && !*verbosity.quiet {
			opt.Progress = pr.update
		}
		rep, err := act.Run(ctx, c, opt)
		pr.done()
		if errors.Is(err, act.ErrSubjectLacks) {
			fmt.Fprintf(stderr, "actfuzz compare: %s: %v\n", m, err)
			return exitUsage
		}
		if err != nil {
			fmt.Fprintf(stderr, "actfuzz compare: %s: %v\n", m, err)
			return exitInternal
		}
		out[m] = methodReport(rep)
		snaps = append(snaps, rep.Store.Snapshot(m, int64(rep.Sims)))
		series = append(series, rep.Series)
		reps = append(reps, rep)
	}
	status := exitOK
	if *outDir != "" && len(reps) > 0 {
		path, err := report.Write(*outDir, c, reps, reportOptions(commandName()))
		if err != nil {
			fmt.Fprintf(stderr, "actfuzz compare: report: %v\n", err)
			status = exitInternal
		} else if !*asJSON {
			defer fmt.Fprintf(stdout, "report: %s\n", path)
		}
	}
	if *plot != "" && !writeComparePlots(*plot, snaps, series, stderr) {
		status = exitInternal
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(map[string]any{"methods": out})
		return status
	}
	printCompareTable(stdout, out, snaps)
	if *plot != "" && status == exitOK {
		fmt.Fprintf(stdout, "plot: %s\n", *plot)
	}
	return status
}

// num prints integral floats without an exponent.
func num(v any) string {
	if f, ok := v.(float64); ok && f == float64(int64(f)) {
		return strconv.FormatInt(int64(f), 10)
	}
	return fmt.Sprint(v)
}

// compareFuzz runs the code-coverage-guided fuzzer (package fuzz) for
// compare, measured by the regions its simulations reach (ACT §6.2), as a
// report like the other methods'. The exit code is exitOK, or the one to
// stop with after the message on stderr.
func compareFuzz(ctx context.Context, c *act.Campaign, budget, workers int, subj netenv.Subject, stderr io.Writer) (*act.Report, int) {
	if budget == 0 {
		budget = c.Budget
	}
	start := time.Now()
	fr, err := fuzz.Run(ctx, c, fuzz.Options{Budget: budget, Workers: workers, Subject: subj})
	if errors.Is(err, act.ErrSubjectLacks) {
		fmt.Fprintf(stderr, "actfuzz compare: fuzz: %v\n", err)
		return nil, exitUsage
	}
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz compare: fuzz: %v\n", err)
		return nil, exitInternal
	}
	return &act.Report{Method: "fuzz", Sims: fr.Sims, Store: fr.Store, Wall: time.Since(start)}, exitOK
}

// writeComparePlots writes the coverage(S,k) plot (ACT Fig. 8) to plot and
// the growth plots (Figs. 9–10) beside it, reporting on stderr what fails.
func writeComparePlots(plot string, snaps []coverage.Snapshot, series []*coverage.Series, stderr io.Writer) bool {
	err := os.MkdirAll(filepath.Dir(plot), 0o755)
	if err == nil {
		err = coverage.SaveCoveragePlot(plot, snaps...)
	}
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz compare: --plot: %v\n", err)
		return false
	}
	ok := true
	ext := filepath.Ext(plot)
	for _, k := range []int{2, 128} {
		path := strings.TrimSuffix(plot, ext) + fmt.Sprintf("-growth-k%d", k) + ext
		if err := coverage.SaveGrowthPlot(path, k, series...); err != nil {
			fmt.Fprintf(stderr, "actfuzz compare: growth plot: %v\n", err)
			ok = false
		}
	}
	return ok
}

// printCompareTable prints the methods' coverage table, ACT's ratio over
// RAN at k = 16, and each method's simulations and
// wall time, by method name.
func printCompareTable(stdout io.Writer, out map[string]methodJSON, snaps []coverage.Snapshot) {
	_ = coverage.WriteTable(stdout, snaps...)
	if a, ok := out["act"]; ok {
		if r, ok := out["ran"]; ok && r.Regions["16"] > 0 {
			fmt.Fprintf(stdout, "ACT/RAN distinct regions at k=16: %.2f×\n", float64(a.Regions["16"])/float64(r.Regions["16"]))
		}
	}
	keys := make([]string, 0, len(out))
	for k := range out {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(stdout, "%s: %d sims in %.1f s\n", k, out[k].Sims, out[k].WallS)
	}
}

package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/report"
)

// runReport is `actfuzz report DIR`: the campaign's HTML report,
// DIR/report/index.html, from what the run left in DIR (its campaign.yaml
// and checkpoints). Every method checkpointed in DIR is compared with the
// campaign's own (--method, default act).
func runReport(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("actfuzz report", flag.ContinueOnError)
	method := fs.String("method", "", "the run to report on when DIR holds several (default: act); the others are shown beside it")
	verbosity := addVerbosityFlags(fs)
	positional, ok, code := parseInterleaved(fs, args, stderr)
	if !ok {
		return code
	}
	if len(positional) != 1 {
		fmt.Fprintln(stderr, "usage: actfuzz report DIR [--method act|ran|man]: DIR is a campaign's output directory (run --out)")
		return exitUsage
	}
	dir := positional[0]
	switch *method {
	case "", "act", "ran", "man":
	default:
		fmt.Fprintf(stderr, "actfuzz report: --method %q: want act, ran or man\n", *method)
		return exitUsage
	}
	c, reps, err := report.Load(dir, *method)
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz report: DIR %s is not a campaign's output directory: %v\n", dir, err)
		return exitUsage
	}
	path, err := report.Write(dir, c, reps, report.Options{Program: progName()})
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz report: %v\n", err)
		return exitInternal
	}
	verbosity.logger(stderr).Info("report written", "path", path, "methods", len(reps))
	fmt.Fprintln(stdout, path)
	return exitOK
}

// reportHook regenerates out's report at each checkpoint of a run; a
// failure is logged, never the end of the campaign.
func reportHook(out string, c *act.Campaign, log *slog.Logger) func(*act.Report) {
	return func(rep *act.Report) {
		// Wall is set once Run finishes: the last call.
		opt := report.Options{Program: progName(), Live: rep.Wall == 0, PeakRSS: report.PeakRSS()}
		if _, err := report.Write(out, c, []*act.Report{rep}, opt); err != nil {
			log.Error("writing the report", "dir", out, "err", err)
		}
	}
}

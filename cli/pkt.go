package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv/pkt"
)

// exitUnsupported is `actfuzz pkt`'s status for a script the native model
// cannot run (a syscall, sysctl, TCP_INFO field or packet form it does not
// model): never a pass, and not a failure of the model either.
const exitUnsupported = 4

const pktUsage = "usage: actfuzz pkt SCRIPT.pkt|DIR [--profile linux|linux-3.10] [--strict]"

// runPkt is `actfuzz pkt`: a packetdrill script run against the native
// model (netenv/pkt). On a directory it runs every .pkt below it and
// prints counts per topic (subdirectory).
func runPkt(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("actfuzz pkt", flag.ContinueOnError)
	profile := fset.String("profile", "linux", "the native model's profile: linux or linux-3.10")
	strict := fset.Bool("strict", false, "a sysctl the model only approximates (RACK, TLP, TSO deferral) makes the script unsupported")
	vf := addVerbosityFlags(fset)
	fset.Usage = func() {
		fmt.Fprintln(stderr, pktUsage)
		fset.PrintDefaults()
		fmt.Fprint(stderr, "\nexit status:\n  0    the script passed (a directory: no script failed)\n  1    the first mismatch: expected vs seen, time, line (a directory: a script failed)\n  2    bad script (a syntax error, naming its line) or bad flags\n  4    unsupported: a construct the native model cannot run, named\n")
	}
	positional, ok, code := parseInterleaved(fset, args, stderr)
	if !ok {
		return code
	}
	if len(positional) != 1 {
		fmt.Fprintln(stderr, pktUsage)
		return exitUsage
	}
	prof, err := ccai.ParseProfile(*profile)
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz pkt: --profile: %v\n", err)
		return exitUsage
	}
	cfg := pkt.Config{Profile: prof, Strict: *strict}
	path := positional[0]
	st, err := os.Stat(path)
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz pkt: %v\n", err)
		return exitUsage
	}
	if st.IsDir() {
		return pktSummary(ctx, path, cfg, *vf.verbose, stdout, stderr)
	}
	if *vf.debug {
		cfg.Trace = stdout
	}
	r := pkt.RunFile(path, cfg)
	printPktResult(stdout, path, r, *vf.verbose)
	return pktExit(r.Status)
}

func pktExit(s pkt.Status) int {
	switch s {
	case pkt.Pass:
		return exitOK
	case pkt.Fail:
		return exitFound
	case pkt.BadScript:
		return exitUsage
	}
	return exitUnsupported
}

func printPktResult(w io.Writer, path string, r pkt.Result, verbose bool) {
	fmt.Fprintf(w, "%s: %v\n", path, r)
	if verbose || r.Status == pkt.Pass {
		for _, a := range r.Approx {
			fmt.Fprintf(w, "  approximated: %s\n", a)
		}
	}
}

// pktSummary runs every script under dir.
func pktSummary(ctx context.Context, dir string, cfg pkt.Config, verbose bool, stdout, stderr io.Writer) int {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".pkt") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz pkt: %v\n", err)
		return exitUsage
	}
	if len(files) == 0 {
		fmt.Fprintf(stderr, "actfuzz pkt: no .pkt scripts under %s\n", dir)
		return exitUsage
	}
	type tally struct{ scripts, pass, fail, unsupported, bad int }
	topics := map[string]*tally{}
	var total tally
	for _, f := range files {
		if ctx.Err() != nil {
			return exitInterrupted
		}
		r := pkt.RunFile(f, cfg)
		printPktResult(stdout, f, r, verbose)
		rel, _ := filepath.Rel(dir, f)
		topic := filepath.Dir(rel)
		if topics[topic] == nil {
			topics[topic] = &tally{}
		}
		for _, t := range []*tally{topics[topic], &total} {
			t.scripts++
			switch r.Status {
			case pkt.Pass:
				t.pass++
			case pkt.Fail:
				t.fail++
			case pkt.BadScript:
				t.bad++
			default:
				t.unsupported++
			}
		}
	}
	names := make([]string, 0, len(topics))
	for n := range topics {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintf(stdout, "\n%-28s %7s %9s %5s %5s %11s %3s\n", "topic", "scripts", "supported", "pass", "fail", "unsupported", "bad")
	row := func(name string, t *tally) {
		fmt.Fprintf(stdout, "%-28s %7d %9d %5d %5d %11d %3d\n", name, t.scripts, t.pass+t.fail, t.pass, t.fail, t.unsupported, t.bad)
	}
	for _, n := range names {
		row(n, topics[n])
	}
	row("total", &total)
	switch {
	case total.bad > 0:
		return exitUsage
	case total.fail > 0:
		return exitFound
	}
	return exitOK
}

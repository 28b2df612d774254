package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/netenv/ns3"
)

// runDiff runs one configuration on two subjects and reports where their
// traces disagree: throughput, loss events, cwnd at time points.
func runDiff(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("actfuzz diff", flag.ContinueOnError)
	subject := fs.String("subject", "native", "first subject")
	vs := fs.String("vs", "ns3", "second subject")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	_ = addVerbosityFlags(fs)
	positional, ok, code := parseInterleaved(fs, args, stderr)
	if !ok {
		return code
	}
	if len(positional) != 1 {
		fmt.Fprintln(stderr, "usage: actfuzz diff SEED.json [--subject native] [--vs ns3] [--json]")
		return exitUsage
	}
	seed, err := corpus.ReadSeed(positional[0])
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz diff: %v\n", err)
		return exitUsage
	}
	if seed.Pinned != nil {
		fmt.Fprintf(stderr, "actfuzz diff: %s: the seed pins a window's extra delays, which only the native simulator can (actfuzz replay runs it)\n", positional[0])
		return exitUsage
	}
	a, ok := subjectFlag(*subject, "diff", stderr)
	if !ok {
		return exitUsage
	}
	defer closeSubject(a)
	b, err := openSubject(*vs)
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz diff: --vs: %v\n", err)
		return exitUsage
	}
	defer closeSubject(b)
	cfg, err := seed.Config()
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz diff: %v\n", err)
		return exitUsage
	}
	if side, err := diffRefusal(cfg, a.Capabilities(), b.Capabilities()); err != nil {
		name := a.Name()
		if side == "--vs" {
			name = b.Name()
		}
		fmt.Fprintf(stderr, "actfuzz diff: %s %s: %s: %v\n", side, name, positional[0], err)
		return exitUsage
	}
	rep, err := ns3.Diff(ctx, cfg, a, b)
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz diff: %v\n", err)
		return exitInternal
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(rep)
	} else if err := rep.Format(stdout); err != nil {
		fmt.Fprintf(stderr, "actfuzz diff: %v\n", err)
		return exitInternal
	}
	if !rep.Agree() {
		return exitFound
	}
	return exitOK
}

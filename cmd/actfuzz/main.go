// Command actfuzz finds bugs in TCP congestion-control implementations by
// automatic congestion-control testing (ACT, NSDI 2019) on a deterministic
// network simulator.
//
// Usage:
//
//	actfuzz sim [flags]          run one simulation and print its summary
//	actfuzz list                 list CCAIs, parameters and state variables
//	actfuzz run CAMPAIGN.yaml    run a campaign (ACT, RAN or MAN)
//	actfuzz compare              ACT against RAN and MAN on one budget
//	actfuzz replay SEED.json     replay a seed and check its finding
//	actfuzz minimize SEED.json   shrink a finding's seed
//	actfuzz diff SEED.json       one configuration on two subjects
//	actfuzz sym                  symbolic exploration of uncertain delays
//	actfuzz worker               a worker process (started by run and compare)
//
// Run `actfuzz COMMAND -h` for a command's flags. Bad input exits with
// status 2 and a message naming the flag.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/netenv/symbolic"
)

// Exit statuses: bad input, and an I/O or internal error.
const (
	exitUsage    = 2
	exitInternal = 3
)

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

func commands() []command {
	return []command{
		{"sim", "run one simulation and print its summary", runSim},
		{"list", "list CCAIs, environment parameters and state variables", runList},
		{"run", "run a campaign: actfuzz run [CAMPAIGN.yaml] [--method act|ran|man] [--budget N] [--out DIR]", runRun},
		{"compare", "run ACT, RAN and MAN on the same budget and compare coverage", runCompare},
		{"replay", "replay a seed file and check that its finding reproduces", runReplay},
		{"minimize", "shrink a finding's seed: fewest phases, simplest parameters, earliest hit", runMinimize},
		{"diff", "run a seed on two subjects and report where they disagree", runDiff},
		{"sym", "explore every event order of a window of uncertain packet delays (SEIB)", symbolic.Command{WriteSeeds: corpus.WriteWitnessSeeds}.Main},
		{"worker", "serve a campaign's simulations on stdin/stdout (started by run and compare)", runWorker},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := dispatch(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return exitUsage
		}
		return 0
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "actfuzz: unknown command %q\n", args[0])
	usage(stderr)
	return exitUsage
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: actfuzz COMMAND [flags]\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
}

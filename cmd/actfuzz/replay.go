package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/tcp"
)

func runReplay(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("actfuzz replay", flag.ContinueOnError)
	tracePath := fs.String("trace", "", "write the state trace as CSV to `FILE.csv`")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	var positional []string
	rest := args
	for {
		if ok, code := parseFlags(fs, rest, stderr); !ok {
			return code
		}
		if fs.NArg() == 0 {
			break
		}
		positional = append(positional, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(positional) != 1 {
		fmt.Fprintln(stderr, "usage: actfuzz replay SEED.json [--trace out.csv] [--json]")
		return exitUsage
	}
	seed, err := corpus.ReadSeed(positional[0])
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz replay: %v\n", err)
		return exitUsage
	}
	var obs tcp.Observer
	var trace *netenv.CSVTrace
	if *tracePath != "" {
		f, err := os.Create(*tracePath)
		if err != nil {
			fmt.Fprintf(stderr, "actfuzz replay: --trace: %v\n", err)
			return exitUsage
		}
		defer f.Close()
		trace = netenv.NewCSVTrace(f, seed.CCAI[0])
		obs = trace
	}
	res, err := corpus.Replay(ctx, seed, obs)
	if trace != nil {
		_ = trace.Flush()
	}
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz replay: %v\n", err)
		return 1
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(res)
	} else if seed.Finding != nil {
		if res.Reproduced {
			fmt.Fprintf(stdout, "reproduced: %s (%s) at %.6f s, trace sha256 %s\n", seed.Finding.Condition, seed.Finding.Kind, float64(res.HitTimeNS)/1e9, res.Result.TraceSHA256)
		} else {
			fmt.Fprintf(stdout, "NOT reproduced: %s\n", seed.Finding.Condition)
			for _, d := range res.Diff {
				fmt.Fprintf(stdout, "  %s\n", d)
			}
		}
	} else {
		fmt.Fprintf(stdout, "ran: trace sha256 %s\n", res.Result.TraceSHA256)
	}
	if !res.Reproduced {
		return 1
	}
	return 0
}

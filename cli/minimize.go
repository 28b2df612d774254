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
	"strings"

	"github.com/actfuzz/actfuzz/corpus"
)

func runMinimize(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("actfuzz minimize", flag.ContinueOnError)
	out := fs.String("out", "", "write the minimized seed here (default: SEED.min.json)")
	runs := fs.Int("runs", 400, "at most this many simulations")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	_ = addVerbosityFlags(fs)
	positional, ok, code := parseInterleaved(fs, args, stderr)
	if !ok {
		return code
	}
	if len(positional) != 1 || *runs <= 0 {
		fmt.Fprintln(stderr, "usage: actfuzz minimize SEED.json [--out FILE] [--runs N]")
		return exitUsage
	}
	seed, subj, ok := openSeed(positional[0], "minimize", stderr)
	if !ok {
		return exitUsage
	}
	defer closeSubject(subj)
	path := *out
	if path == "" {
		path = strings.TrimSuffix(positional[0], ".json") + ".min.json"
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		fmt.Fprintf(stderr, "actfuzz minimize: --out: %v\n", err)
		return exitInternal
	}
	if seed.Witness != nil {
		fmt.Fprintf(stderr, "actfuzz minimize: %s: a witness seed is already one point of a symbolic class; nothing to minimize\n", positional[0])
		return exitUsage
	}
	if seed.Pinned != nil {
		fmt.Fprintf(stderr, "actfuzz minimize: %s: the seed pins a window's extra delays (actfuzz sym --seed); minimize the seed it came from\n", positional[0])
		return exitUsage
	}
	if seed.SymWindow != nil {
		// Its finding is a hang of the window's exploration (wall clock),
		// which no replay of the configuration shows: minimizing needs a
		// replay that hits.
		fmt.Fprintf(stderr, "actfuzz minimize: %s: the seed's finding is a hang of a symbolic window, which replays of its configuration do not show; actfuzz replay explores the window again\n", positional[0])
		return exitUsage
	}
	min, rep, err := corpus.Minimize(ctx, subj, seed, *runs)
	if errors.Is(err, corpus.ErrNoHit) {
		fmt.Fprintf(stderr, "actfuzz minimize: %v\n", err)
		return exitFound
	}
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz minimize: %v\n", err)
		return exitInternal
	}
	if err := corpus.WriteArtifacts(ctx, subj, min, path); err != nil {
		fmt.Fprintf(stderr, "actfuzz minimize: --out: %v\n", err)
		return exitInternal
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(map[string]any{"seed": path, "report": rep})
		return 0
	}
	fmt.Fprintf(stdout, "minimized in %d runs: %d → %d phases, hit at %.3f s → %.3f s, %d → %d bytes\n",
		rep.Runs, rep.PhasesFrom, rep.PhasesTo, float64(rep.HitFromNS)/1e9, float64(rep.HitToNS)/1e9, rep.BytesFrom, rep.BytesTo)
	for _, s := range rep.Simplified {
		fmt.Fprintf(stdout, "  %s\n", s)
	}
	fmt.Fprintf(stdout, "seed: %s\nreplay: %s replay %s\n", path, progName(), path)
	return 0
}

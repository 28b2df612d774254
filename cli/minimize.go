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
	"time"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/internal/bounded"
	"github.com/actfuzz/actfuzz/internal/shell"
)

func runMinimize(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("actfuzz minimize", flag.ContinueOnError)
	out := fs.String("out", "", "write the minimized seed here (default: SEED.min.json)")
	runs := fs.Int("runs", 400, "at most this many simulations")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	watchdog := fs.Duration("watchdog", 60*time.Second, "wall-clock limit of each simulation: a candidate whose run goes past it does not hit (0: none)")
	_ = addVerbosityFlags(fs)
	positional, ok, code := parseInterleaved(fs, args, stderr)
	if !ok {
		return code
	}
	if len(positional) != 1 || *runs <= 0 {
		fmt.Fprintln(stderr, "usage: actfuzz minimize SEED.json [--out FILE] [--runs N] [--watchdog D]")
		return exitUsage
	}
	if *watchdog < 0 {
		fmt.Fprintln(stderr, "actfuzz minimize: --watchdog must be ≥ 0")
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
	// Each simulation under --watchdog; the whole under the signals,
	// even if a run never looks at its context (internal/bounded).
	type minimized struct {
		seed *corpus.Seed
		rep  *corpus.MinimizeReport
	}
	m, err := bounded.Run(ctx, 0, func(ctx context.Context) (minimized, error) {
		s, r, err := corpus.MinimizeWith(ctx, subj, seed, *runs, *watchdog)
		return minimized{s, r}, err
	})
	min, rep := m.seed, m.rep
	if errors.Is(err, bounded.ErrAbandoned) {
		fmt.Fprintf(stderr, "actfuzz minimize: a simulation %v: stopped (%s replay %s --watchdog D shows it)\n", err, commandName(), shell.Quote(positional[0]))
		return exitFound
	}
	if errors.Is(err, corpus.ErrNoHit) {
		fmt.Fprintf(stderr, "actfuzz minimize: %v\n", err)
		return exitFound
	}
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz minimize: %v\n", err)
		return exitInternal
	}
	if _, err := bounded.Run(ctx, *watchdog, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, corpus.WriteArtifacts(ctx, subj, min, path)
	}); err != nil {
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
	if rep.Hung > 0 {
		fmt.Fprintf(stdout, "  %d candidates went past --watchdog %v and counted as not hitting\n", rep.Hung, *watchdog)
	}
	fmt.Fprintf(stdout, "seed: %s\nreplay: %s replay %s\n", path, commandName(), shell.Quote(path))
	return 0
}

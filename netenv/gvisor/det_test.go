package gvisor

import (
	"context"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/actfuzz/actfuzz/netenv"
)

// TestDeterminismMany is the long determinism sweep: GVDET=<seeds> runs
// every seed 3 times on 4 environments × 2 CCAs, GVDETPAR runs at once.
func TestDeterminismMany(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("GVDET"))
	if n == 0 {
		t.Skip("set GVDET=<seeds>")
	}
	envs := []netenv.Env{
		{Loss: 1e-2, BW: 10, Delay: 20, App: 10000, Buffer: 100},
		{Loss: 1e-3, BW: 50, Delay: 10, QShape: 2, QScale: 1, App: 10000, Buffer: 50},
		{Loss: 0, BW: 5, Delay: 40, QShape: 1, QScale: 5, App: 2, Buffer: 20},
		{Loss: 2e-2, BW: 100, Delay: 5, QShape: 0.5, QScale: 4, App: 10000, Buffer: 200},
	}
	var mu sync.Mutex
	mismatch, runs := 0, 0
	var wg sync.WaitGroup
	par, _ := strconv.Atoi(os.Getenv("GVDETPAR"))
	sem := make(chan struct{}, max(par, 2))
	for _, cca := range []string{"reno", "cubic"} {
		for ei, env := range envs {
			for seed := uint64(1); seed <= uint64(n); seed++ {
				wg.Add(1)
				sem <- struct{}{}
				go func() {
					defer wg.Done()
					defer func() { <-sem }()
					cfg := config(cca, seed, env, 300_000)
					var hs [3]string
					for k := range hs {
						res, err := (&Subject{}).Run(context.Background(), cfg, nil)
						if err != nil {
							t.Errorf("%s env%d seed %d: %v", cca, ei, seed, err)
							return
						}
						hs[k] = res.TraceSHA256
					}
					mu.Lock()
					runs++
					if hs[0] != hs[1] || hs[0] != hs[2] {
						mismatch++
						t.Errorf("%s env%d seed %d: hashes differ %v", cca, ei, seed, hs)
					}
					mu.Unlock()
				}()
			}
		}
	}
	wg.Wait()
	t.Logf("%d configurations × 3 runs, %d nondeterministic", runs, mismatch)
}

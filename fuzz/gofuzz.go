//go:build gofuzz

package fuzz

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"

	"github.com/actfuzz/actfuzz/act"
)

// go-fuzz harness (built by go-fuzz-build, which sets the gofuzz tag; see
// `make gofuzz`). Settings come from the environment, which go-fuzz passes
// to its workers:
//
//	ACTFUZZ_CAMPAIGN  campaign file (default: the embedded default CUBIC campaign)
//	ACTFUZZ_BYTES     override the campaign's bytes per flow (cheaper runs)
//	ACTFUZZ_REGIONS   region store file, shared by all workers (default
//	                  actfuzz-regions.bin in the working directory; `make
//	                  gofuzz` puts it in the go-fuzz workdir)
//	ACTFUZZ_K         region size whose novelty makes Fuzz return 1 (default 16)
//	ACTFUZZ_GATE      if 1, return -1 for inputs that reach no new region
//
// go-fuzz admits an input to its corpus only when the input increases go-fuzz's
// own code coverage; a return value of 1 raises the input's priority and -1
// keeps it out. So with the default settings the corpus grows by code
// coverage and inputs that reach new regions of S are mutated more often;
// with ACTFUZZ_GATE=1 only inputs that reach new code and a new region are
// kept. Region novelty alone cannot add an input: that is how go-fuzz works,
// and why the "fuzz-regions" feedback of Run exists.

var gofuzz struct {
	once    sync.Once
	err     error
	c       *act.Campaign
	runner  *Runner
	regions *RegionStore
	gate    bool
}

func gofuzzSetup() {
	c, err := CampaignFromEnv()
	if err != nil {
		gofuzz.err = err
		return
	}
	gofuzz.c = c
	if gofuzz.runner, err = NewRunner(c, nil); err != nil {
		gofuzz.err = err
		return
	}
	gofuzz.runner.Limits = HarnessLimits
	path := os.Getenv("ACTFUZZ_REGIONS")
	if path == "" {
		path = "actfuzz-regions.bin"
	}
	if gofuzz.regions, err = OpenRegionStore(path, c.Space, c.Seed); err != nil {
		gofuzz.err = err
		return
	}
	if k, err := strconv.Atoi(os.Getenv("ACTFUZZ_K")); err == nil && k > 0 {
		gofuzz.regions.K = k
	}
	gofuzz.gate = os.Getenv("ACTFUZZ_GATE") == "1"
}

// Fuzz is the go-fuzz entry point: it decodes data into a configuration G
// of the campaign, simulates it and returns 1 when the run reached a new
// region of S at size K. A condition hit or a subject fault panics, so that
// go-fuzz's crashers directory holds the input (a reproducer: decode it with
// Decode, or see the panic message for G as JSON).
func Fuzz(data []byte) int {
	gofuzz.once.Do(gofuzzSetup)
	if gofuzz.err != nil {
		panic("actfuzz: fuzz setup: " + gofuzz.err.Error())
	}
	g := Decode(gofuzz.c, data)
	out := gofuzz.runner.Run(context.Background(), g)
	if out.Err != nil {
		panic(fmt.Sprintf("actfuzz: decoded configuration rejected: %v", out.Err))
	}
	m := gofuzz.regions.Add(gofuzz.runner.Batch())
	if out.Finding() {
		_ = gofuzz.regions.Flush()
		panic(findingMessage(&out, g))
	}
	_ = gofuzz.regions.Save()
	switch {
	case gofuzz.regions.New(m):
		return 1
	case gofuzz.gate:
		return -1
	}
	return 0
}

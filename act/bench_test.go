package act

import (
	"context"
	"testing"

	"github.com/actfuzz/actfuzz/coverage"
	"github.com/actfuzz/actfuzz/netenv"
)

// BenchmarkDefaultCampaign measures campaign throughput (sims/s) on the
// paper's default CUBIC input, by worker count.
func BenchmarkDefaultCampaign(b *testing.B) {
	for _, w := range []int{1, 2} {
		b.Run(map[int]string{1: "workers=1", 2: "workers=2"}[w], func(b *testing.B) {
			c := DefaultCampaign()
			sims := 0
			for i := 0; i < b.N; i++ {
				rep, err := Run(context.Background(), c, Options{Budget: 256, Workers: w})
				if err != nil {
					b.Fatal(err)
				}
				sims += rep.Sims
			}
			b.ReportMetric(float64(sims)/b.Elapsed().Seconds(), "sims/s")
		})
	}
}

// BenchmarkRunnerDirected is the cost of directed ACT's distances on the
// run tail: one simulation of the make-run mix (three conditions, all with
// a distance) through a Runner with directed off and on.
func BenchmarkRunnerDirected(b *testing.B) {
	for _, mode := range []string{"off", "on"} {
		b.Run("directed="+mode, func(b *testing.B) {
			c, err := LoadCampaign("../examples/make-run.yaml")
			if err != nil {
				b.Fatal(err)
			}
			c.Directed = mode
			r, err := NewRunner(c, nil, coverage.Space{})
			if err != nil {
				b.Fatal(err)
			}
			batch, err := coverage.NewBatch(c.Space)
			if err != nil {
				b.Fatal(err)
			}
			g := Config{Seed: 1, Schedule: netenv.Constant(netenv.DefaultEnv())}
			for b.Loop() {
				batch.Reset()
				r.Run(context.Background(), g, batch)
			}
		})
	}
}

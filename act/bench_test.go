package act

import (
	"context"
	"testing"
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

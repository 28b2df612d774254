package netenv_test

import (
	"context"
	"testing"

	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

type countObs struct{ n int }

func (c *countObs) Observe(*observe.Record) { c.n++ }

// BenchmarkDefaultScenario is `actfuzz sim` with no flags: CUBIC, 15 MB over
// 10 Mbit/s, 20 ms, loss 1e-4, 100-packet buffer (ns-3.37 takes ~0.8 s).
func BenchmarkDefaultScenario(b *testing.B) {
	for _, hash := range []bool{false, true} {
		name := "observer"
		if hash {
			name = "sha256"
		}
		b.Run(name, func(b *testing.B) {
			cfg := netenv.Config{Seed: 1, Schedule: netenv.Constant(netenv.DefaultEnv()), Flows: []netenv.Flow{{CCA: "cubic", Bytes: netenv.DefaultBytes}}, SACK: true, HashTrace: hash}
			b.ReportAllocs()
			var events uint64
			for i := 0; i < b.N; i++ {
				cfg.Seed = uint64(i + 1)
				res, err := netenv.Run(context.Background(), cfg, &countObs{})
				if err != nil {
					b.Fatal(err)
				}
				events += res.Events
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(events)/float64(b.N), "events/op")
		})
	}
}

// BenchmarkGigabitLossy is a long fat path: CUBIC over 1 Gbit/s, 100 ms
// one-way. "loss1pct" has 1% random loss; "overflow" has 0.01% random loss
// and a 2,000-packet buffer, so that slow start overshoots the path's
// ~17,000-packet BDP and recovery runs with thousands of segments in the
// retransmission queue: the cost of SACK processing and RFC 6675 loss
// marking per ACK shows.
func BenchmarkGigabitLossy(b *testing.B) {
	for _, tc := range []struct {
		name   string
		loss   float64
		buffer int
	}{{"loss1pct", 0.01, 20000}, {"overflow", 1e-4, 2000}} {
		b.Run(tc.name, func(b *testing.B) {
			env := netenv.DefaultEnv()
			env.BW, env.Delay, env.App = 1000, 100, 1e6
			env.Loss, env.Buffer = tc.loss, tc.buffer
			cfg := netenv.Config{Schedule: netenv.Constant(env), Flows: []netenv.Flow{{CCA: "cubic", Bytes: netenv.DefaultBytes}}, SACK: true, HashTrace: true}
			b.ReportAllocs()
			var events uint64
			for i := 0; i < b.N; i++ {
				cfg.Seed = uint64(i + 1)
				res, err := netenv.Run(context.Background(), cfg, nil)
				if err != nil {
					b.Fatal(err)
				}
				events += res.Events
			}
			b.ReportMetric(float64(events)/float64(b.N), "events/op")
		})
	}
}

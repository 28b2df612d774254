package ns3

import (
	"context"
	"testing"

	"github.com/actfuzz/actfuzz/netenv"
)

// The default scenario of `actfuzz sim` (15 MB CUBIC over 10 Mbit/s,
// 20 ms, loss 1e-4, 100-packet buffer) on each subject:
//
//	go test -run '^$' -bench Default -benchtime 20x ./netenv/ns3
func benchDefault(b *testing.B, s netenv.Subject, cca string) {
	cfg := netenv.Config{SACK: true, HashTrace: true, Schedule: netenv.Constant(netenv.DefaultEnv()),
		Flows: []netenv.Flow{{CCA: cca, Bytes: netenv.DefaultBytes}}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cfg.Seed = uint64(i + 1)
		if _, err := s.Run(context.Background(), cfg, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "sims/s")
}

func BenchmarkDefaultNative(b *testing.B) { benchDefault(b, netenv.Native{}, "cubic") }

func BenchmarkDefaultNS3(b *testing.B) { benchDefault(b, realSubject(b), "TcpCubic") }

package gvisor

import (
	"context"
	"testing"

	"github.com/actfuzz/actfuzz/netenv"
)

// benchRun runs b.N simulations of one configuration on a subject and
// reports sims/s (seeds 1..N, trace hashing on, as `actfuzz sim --json`).
func benchRun(b *testing.B, s netenv.Subject, cca string, bytes uint64, env netenv.Env) {
	b.ReportAllocs()
	var events uint64
	for i := 0; i < b.N; i++ {
		cfg := config(cca, uint64(i+1), env, bytes)
		res, err := s.Run(context.Background(), cfg, nil)
		if err != nil {
			b.Fatal(err)
		}
		if !res.Flows[0].Done {
			b.Fatalf("seed %d: not done", i+1)
		}
		events += res.Events
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "sims/s")
	b.ReportMetric(float64(events)/float64(b.N), "events/op")
}

// BenchmarkSubjects compares gVisor with the native subject on the same
// configurations: the default environment (10 Mbit/s, 20 ms, loss 1e-4,
// 100-packet buffer) with 1 MB and 15 MB transfers.
func BenchmarkSubjects(b *testing.B) {
	env := netenv.DefaultEnv()
	for _, size := range []struct {
		name  string
		bytes uint64
	}{{"1MB", 1_000_000}, {"15MB", netenv.DefaultBytes}} {
		for _, cca := range []string{"reno", "cubic"} {
			b.Run("gvisor/"+cca+"/"+size.name, func(b *testing.B) { benchRun(b, &Subject{}, cca, size.bytes, env) })
			b.Run("native/"+cca+"/"+size.name, func(b *testing.B) { benchRun(b, netenv.Native{}, cca, size.bytes, env) })
		}
	}
}

// BenchmarkQuiesceIdle is the harness's fixed cost per settle: a
// Pause/Resume round trip with gVisor's idle processor goroutines.
func BenchmarkQuiesceIdle(b *testing.B) {
	cfg := config("cubic", 1, netenv.DefaultEnv(), 1000)
	h := newHarness(&cfg, nil, hooks{})
	ho, err := newHost(h, hostConfig{name: "x", node: 0, addr: senderAddr, seed: 1, sndBuf: sndBufRange, rcvBuf: rcvBufRange})
	if err != nil {
		b.Fatal(err)
	}
	defer ho.st.Destroy()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ho.quiesce()
	}
}

package oracle

import (
	"context"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/netenv"
)

// BenchmarkOracles is a native simulation's cost with the observer alone
// (none) and with every oracle that applies (all), side by side: CUBIC
// and Reno sharing 10 Mbit/s, 20 ms one-way, loss 1e-3, 2 MB each (the
// issue's goal: all oracles within 5% of a simulation's CPU).
//
//	go test -run '^$' -bench Oracles -count 6 ./oracle
func BenchmarkOracles(b *testing.B) {
	ccas := []string{"cubic", "reno"}
	env := netenv.DefaultEnv()
	env.Set(netenv.ParamIndex("loss"), 1e-3)
	env.Set(netenv.ParamIndex("bw"), 10)
	env.Set(netenv.ParamIndex("delay"), 20)
	sched := netenv.Schedule{{Env: env}}
	setup := netenv.Setup{CCAI: ccas, Topology: netenv.TopoSingleLink, SACK: true, Bytes: 2 << 20}
	caps := netenv.NativeCapabilities()
	all, _ := Select(Choice{}, caps, ccas, ccai.ProfileLinux)
	for _, bc := range []struct {
		name  string
		specs []corpus.ConditionSpec
	}{{"none", nil}, {"all", all}} {
		b.Run(bc.name, func(b *testing.B) {
			w, err := corpus.NewWatcherFor(caps, ccas, bc.specs)
			if err != nil {
				b.Fatal(err)
			}
			hits := 0
			w.OnHit = func(int, *corpus.Condition, []float64, time.Duration) { hits++ }
			for b.Loop() {
				w.Start(sched)
				if _, err := netenv.Run(context.Background(), setup.Config(1, sched), w); err != nil {
					b.Fatal(err)
				}
				if w.Err != nil {
					b.Fatal(w.Err)
				}
			}
			b.ReportMetric(float64(hits)/float64(b.N), "hits/op")
		})
	}
}

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
// (none) and with every oracle that applies (all): CUBIC and Reno sharing
// 10 Mbit/s, 20 ms one-way, loss 1e-3, 2 MB each (the goal: all
// oracles within 5% of a simulation's CPU).
//
//	go test -run '^$' -bench Oracles -count 6 -benchmem ./oracle
//
// none and all run one after the other, so that a machine shared with
// other jobs can load one more than the other; paired alternates them,
// one simulation each in turn, and reports both and their ratio (wall
// time and, where the system says it, CPU time). Each watcher simulates
// once before it is measured: its first simulation compiles the plans of
// the states it meets (corpus's dispatch), which a campaign's thousands
// of simulations share.
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
	hits := 0
	watcher := func(b *testing.B, specs []corpus.ConditionSpec) *corpus.Watcher {
		w, err := corpus.NewWatcherFor(caps, ccas, specs)
		if err != nil {
			b.Fatal(err)
		}
		w.OnHit = func(int, *corpus.Condition, []float64, time.Duration) { hits++ }
		return w
	}
	simulate := func(b *testing.B, w *corpus.Watcher) {
		w.Start(sched)
		if _, err := netenv.Run(context.Background(), setup.Config(1, sched), w); err != nil {
			b.Fatal(err)
		}
		if w.Err != nil {
			b.Fatal(w.Err)
		}
	}
	for _, bc := range []struct {
		name  string
		specs []corpus.ConditionSpec
	}{{"none", nil}, {"all", all}} {
		b.Run(bc.name, func(b *testing.B) {
			w := watcher(b, bc.specs)
			simulate(b, w)
			hits = 0
			cpu0, cpuOK := cpuTime()
			for b.Loop() {
				simulate(b, w)
			}
			if cpu1, ok := cpuTime(); ok && cpuOK {
				b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
			}
			b.ReportMetric(float64(hits)/float64(b.N), "hits/op")
		})
	}
	b.Run("paired", func(b *testing.B) {
		ws := []*corpus.Watcher{watcher(b, nil), watcher(b, all)}
		var wall, cpu [2]int64
		cpuOK := true
		for _, w := range ws {
			simulate(b, w)
		}
		for b.Loop() {
			for k, w := range ws {
				c0, ok0 := cpuTime()
				t0 := time.Now()
				simulate(b, w)
				wall[k] += int64(time.Since(t0))
				c1, ok1 := cpuTime()
				cpu[k] += c1 - c0
				cpuOK = cpuOK && ok0 && ok1
			}
		}
		n := float64(b.N)
		b.ReportMetric(float64(wall[0])/n, "none-ns/op")
		b.ReportMetric(float64(wall[1])/n, "all-ns/op")
		b.ReportMetric(float64(wall[1])/float64(wall[0]), "all/none")
		if cpuOK {
			b.ReportMetric(float64(cpu[0])/n, "none-cpu-ns/op")
			b.ReportMetric(float64(cpu[1])/n, "all-cpu-ns/op")
			b.ReportMetric(float64(cpu[1])/float64(cpu[0]), "all/none-cpu")
		}
	})
}

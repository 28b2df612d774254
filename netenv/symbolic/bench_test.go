package symbolic

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/tcp"
)

// The full tables (every setting at udp4 n=4 and tcp-bulk up to 16384 ms)
// take long for the settings without I or C; set ACTFUZZ_SYM_FULL=1 to run
// them, or use bench/sym.sh.
func fullBench() bool { return os.Getenv("ACTFUZZ_SYM_FULL") != "" }

func benchExplore(b *testing.B, sc *Scenario, setting string) {
	name, byNode := strings.CutSuffix(setting, "/node")
	red, err := ParseReductions(name)
	if err != nil {
		b.Fatal(err)
	}
	var rep *Report
	for i := 0; i < b.N; i++ {
		rep, err = Explore(context.Background(), sc, Options{Reductions: red, NodeGranularity: byNode, KeepBranches: -1})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(rep.Branches), "branches")
	b.ReportMetric(float64(rep.Comparisons), "comparisons")
	b.ReportMetric(float64(len(rep.Outcomes)), "outcomes")
}

// BenchmarkUDP4 is SEIB Table 2: udp4, the last n packets from node 0 to
// node 2 uncertain in [1, 1024] ms.
func BenchmarkUDP4(b *testing.B) {
	for n := 1; n <= 4; n++ {
		for _, s := range []string{"none", "S", "C", "I", "SC", "SCI", "I/node", "SCI/node"} {
			heavy := n == 4 && s != "I" && s != "SCI" || n >= 3 && strings.HasSuffix(s, "/node")
			if heavy && !fullBench() {
				continue
			}
			b.Run(fmt.Sprintf("n=%d/%s", n, s), func(b *testing.B) {
				benchExplore(b, UDP4(n, time.Millisecond, 1024*time.Millisecond), s)
			})
		}
	}
}

// BenchmarkTCPBulk is SEIB Fig. 9: tcp-bulk, the last 3 data packets
// uncertain in [1, dmax] ms.
func BenchmarkTCPBulk(b *testing.B) {
	for _, d := range []int{4, 16, 64, 256, 1024, 4096, 16384} {
		for _, s := range []string{"none", "S", "C", "I", "SC", "SCI"} {
			heavy := d >= 1024 && !strings.Contains(s, "C") || d >= 4096
			if heavy && !fullBench() {
				continue
			}
			b.Run(fmt.Sprintf("dmax=%d/%s", d, s), func(b *testing.B) {
				benchExplore(b, TCPBulk(3, time.Duration(d)*time.Millisecond), s)
			})
		}
	}
}

// defaultRunWindow is a window of two data segments in the last second of
// `actfuzz sim`'s default run (cubic, 15 MB, seed 1, the default
// environment: 10 Mbit/s, 20 ms, loss 1e-4, 100 packets), as extra delays
// in [1, 200] ms on top of the run's own (issue 22, item 3's benchmark).
// The default run takes about 12.6 s and sends about 800 segments a
// second: segment total−300 leaves about 0.4 s before the end.
func defaultRunWindow() *Scenario {
	st := netenv.Setup{CCAI: []string{"cubic"}, Bytes: netenv.DefaultBytes, SACK: true}
	base := st.Config(1, netenv.Constant(netenv.DefaultEnv()))
	segs := int((netenv.DefaultBytes + tcp.DefaultMSS - 1) / tcp.DefaultMSS)
	return &Scenario{
		Name: "default-run",
		TCP:  &TCPSpec{Base: &base},
		End:  60 * time.Second,
		Window: Window{Flow: 0, N: 2, Select: "kind", Kind: "data", From: segs - 300,
			Lo: time.Millisecond, Hi: 200 * time.Millisecond, Res: time.Millisecond},
	}
}

// BenchmarkPrefixSnapshot explores the first 100 branches of
// defaultRunWindow with every run from time zero and with runs from the
// prefix snapshot, alternately in every iteration, so that both see the
// same machine load. It reports, for each, branches per second of wall
// time and per second of CPU time (the process's user+sys: on a shared
// machine wall time mostly measures the other processes) and the events
// simulated per branch (the one-time prefix runs included), and the
// ratios.
func BenchmarkPrefixSnapshot(b *testing.B) {
	c, err := defaultRunWindow().compile()
	if err != nil {
		b.Fatal(err)
	}
	red, _ := ParseReductions("SCI")
	opt := Options{Reductions: red, MaxBranches: 100, KeepBranches: -1}
	var wall, cpu [2]time.Duration
	var branches, simulated [2]uint64
	var note string
	for i := 0; i < b.N; i++ {
		for k, off := range []bool{true, false} {
			opt.NoSnapshot = off
			start, cpu0 := time.Now(), cpuTime()
			rep, err := explore(context.Background(), c, opt)
			if err != nil {
				b.Fatal(err)
			}
			wall[k] += time.Since(start)
			cpu[k] += cpuTime() - cpu0
			branches[k] += uint64(rep.Branches)
			simulated[k] += rep.EventsSimulated
			if !off {
				note = rep.Snapshot
			}
		}
	}
	b.Logf("snapshot %s", note)
	var bps, cbps, epb [2]float64
	for k := range wall {
		bps[k] = float64(branches[k]) / wall[k].Seconds()
		cbps[k] = float64(branches[k]) / cpu[k].Seconds()
		epb[k] = float64(simulated[k]) / float64(branches[k])
	}
	b.ReportMetric(bps[0], "zero-branches/s")
	b.ReportMetric(bps[1], "snap-branches/s")
	b.ReportMetric(bps[1]/bps[0], "wall-speedup")
	b.ReportMetric(cbps[0], "zero-branches/cpu-s")
	b.ReportMetric(cbps[1], "snap-branches/cpu-s")
	b.ReportMetric(cbps[1]/cbps[0], "cpu-speedup")
	b.ReportMetric(epb[0], "zero-events/branch")
	b.ReportMetric(epb[1], "snap-events/branch")
	b.ReportMetric(epb[0]/epb[1], "events-ratio")
}

// cpuTime is the process's user+sys CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

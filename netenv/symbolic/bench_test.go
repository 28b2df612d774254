package symbolic

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
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

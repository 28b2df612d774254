package gvisor

import (
	"context"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/oracle"
)

// gvisorDepartures are the oracles that report gVisor CUBIC's own
// departures from its RFCs, found by the campaigns of issue 46:
// cubic-target-bound and cubic-growth (getCwnd bounds the target W_cubic(t
// + RTT) below by cwnd but not above by 1.5·cwnd, RFC 9438 §4.2, and the
// epoch is not restarted after a HyStart exit, §4.10, or an idle period,
// §5.8), cwnd-validation (cwnd grows on every ACK whether or not it
// limits the sender, RFC 7661 / RFC 9438 §5.8, for Reno as for CUBIC:
// snd.go handleRcvdSegment calls cc.Update on every ACK outside fast
// recovery, and neither reno.go nor cubic.go Update asks whether cwnd
// limited the sender; gVisor's phantom in-flight packets,
// google/gvisor#14092, make that frequent), window-overflow
// (both together: a cwnd of millions of packets) and hystart-exit (a
// HyStart exit sets ssthresh = cwnd, but the same ACK's growth runs
// getCwnd on an epoch never started, WMax 0 and T from the connection's
// start, RFC 9438 §4.10, so cwnd jumps far past ssthresh: cubic.go
// updateHyStart skips enterCongestionAvoidance; 53 groups in a campaign
// of 2,000).
var gvisorDepartures = []string{"cubic-target-bound", "cubic-growth", "cwnd-validation", "window-overflow", "hystart-exit"}

// TestGvisorOracleSeeds replays simulations of a 300-run gVisor CUBIC
// campaign (testdata/campaign-*.json) with every oracle on. With the
// harness as it was they hit cubic-beta and reduction-bound (prior_cwnd
// before the entering ACK's growth), ssthresh-steady (two recoveries on
// one ACK), recovery-exit (the exit ACK's growth), stall and rto-backoff
// (delivered going backwards, and missing progress of less than an MSS),
// one-reduction-per-window (a jitter-inflated srtt_min) and undo-restores
// (gVisor undoes nothing). Now only the oracles of gVisor's departures
// fire, and cubic-target-bound, the detection case, on every one.
func TestGvisorOracleSeeds(t *testing.T) {
	files, err := filepath.Glob("testdata/campaign-*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no seeds: %v", err)
	}
	for _, fn := range files {
		t.Run(filepath.Base(fn), func(t *testing.T) {
			hits, first := runOracles(t, fn)
			var names []string
			for n := range hits {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				t.Logf("%s: %d hits, the first at %v", n, hits[n], first[n])
				if !slices.Contains(gvisorDepartures, n) {
					t.Errorf("%s fires (%d hits, the first at %v): not one of gVisor's known departures", n, hits[n], first[n])
				}
			}
			if hits["cubic-target-bound"] == 0 {
				t.Error("cubic-target-bound does not fire: gVisor CUBIC's target above 1.5·cwnd went unseen")
			}
		})
	}
}

// runOracles runs seed file fn on the gVisor subject with every oracle
// on, and counts each oracle's hits and the time of its first.
func runOracles(t *testing.T, fn string) (map[string]int, map[string]time.Duration) {
	t.Helper()
	subj := &Subject{}
	caps := subj.Capabilities()
	s, err := corpus.ReadSeed(fn)
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.Setup()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := s.Config()
	if err != nil {
		t.Fatal(err)
	}
	specs, _ := oracle.Select(oracle.Choice{}, caps, s.CCAI, st.Profile)
	w, err := corpus.NewWatcherFor(caps, s.CCAI, specs)
	if err != nil {
		t.Fatal(err)
	}
	w.Start(cfg.Schedule)
	hits := map[string]int{}
	first := map[string]time.Duration{}
	w.OnHit = func(_ int, c *corpus.Condition, _ []float64, at time.Duration) {
		if hits[c.Name] == 0 {
			first[c.Name] = at
		}
		hits[c.Name]++
	}
	if _, err := subj.Run(context.Background(), cfg, w); err != nil {
		t.Fatal(err)
	}
	if w.Err != nil {
		t.Fatal(w.Err)
	}
	return hits, first
}

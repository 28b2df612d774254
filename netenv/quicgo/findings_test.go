package quicgo

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/netenv"
)

// findingsEnv gates the finding reproducers: they run quic-go in real
// time for several seconds, so `make test` skips them; `make
// quic-findings` sets it.
const findingsEnv = "ACTFUZZ_QUIC_FINDINGS"

// RFC 9002 constants the reproducer computes the persistent congestion
// duration with (§7.6.1, Appendix B.1), and quic-go's max_ack_delay
// (protocol.DefaultMaxAckDelay, 25 ms, which the subject's server keeps).
const (
	persistentCongestionThreshold = 3
	granularity                   = time.Millisecond
	maxAckDelay                   = 25 * time.Millisecond
	minimumWindowDatagrams        = 2 // kMinimumWindow (§7.2), in 1280-byte datagrams
)

// blackoutSeed is the finding seed the reproducer runs (one home for the
// scenario: `actfuzz confirm --subject quic` replays the same file).
const blackoutSeed = "../../testdata/quicgo/findings/no-persistent-congestion.json"

// TestNoPersistentCongestion reproduces docs/bugs/quicgo-no-persistent-congestion.md:
// a bulk transfer at 20 Mbit/s and 20 ms RTT whose data direction drops
// every datagram for 2 s (schedule phase 2 of the seed). That is ten
// times RFC 9002 §7.6.1's persistent congestion duration; the ACK that
// follows the blackout declares the blackout's ack-eliciting packets lost,
// which establishes persistent congestion (§7.6.2) and MUST reduce cwnd to
// kMinimumWindow. The test asserts what quic-go v0.65.0 does instead (one
// ordinary NewReno reduction to 0.7 of cwnd, §7.3.2) and fails once
// quic-go collapses cwnd.
func TestNoPersistentCongestion(t *testing.T) {
	if os.Getenv(findingsEnv) != "1" {
		t.Skip("real-time reproducer: set " + findingsEnv + "=1 (make quic-findings)")
	}
	cfg := blackoutConfig(t)
	start, end := cfg.Schedule[0].Until, cfg.Schedule[1].Until
	s, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	var c collect
	if _, err := s.Run(context.Background(), cfg, &c); err != nil {
		t.Fatal(err)
	}
	lost := -1.0
	var before, after int = -1, -1
	for i, r := range c.recs {
		switch {
		case r.Time < start:
			before, lost = i, r.Vars[varLost]
		case r.Time >= end && r.Vars[varLost] > lost && after < 0:
			after = i
		}
	}
	if before < 0 || after < 0 {
		t.Fatalf("no record before the blackout (%d) or no loss declared after it (%d) in %d records", before, after, len(c.recs))
	}
	b, a := c.recs[before], c.recs[after]
	lowest := a.Cwnd
	for _, r := range c.recs[after:] {
		lowest = min(lowest, r.Cwnd)
	}
	pc := (b.SRTT + max(4*b.RTTVar, granularity) + maxAckDelay) * persistentCongestionThreshold
	t.Logf("before the blackout (t=%v): cwnd %d datagrams, srtt %v, rttvar %v: persistent congestion duration %v, blackout %v",
		b.Time, b.Cwnd, b.SRTT, b.RTTVar, pc, end-start)
	t.Logf("first ACK declaring losses after it (t=%v): %v packets declared lost (%v before the blackout), cwnd %d datagrams (%v bytes), state %s; RFC 9002 §7.6.2: %d",
		a.Time, a.Vars[varLost]-b.Vars[varLost], b.Vars[varLost], a.Cwnd, a.Vars[varCwndBytes], a.CAState, minimumWindowDatagrams)
	t.Logf("lowest cwnd from that ACK to the end of the run (%d records, last at t=%v): %d datagrams", len(c.recs)-after, c.recs[len(c.recs)-1].Time, lowest)
	if end-start <= pc {
		t.Fatalf("the blackout %v does not exceed the persistent congestion duration %v: the scenario does not establish persistent congestion", end-start, pc)
	}
	if a.Cwnd <= minimumWindowDatagrams {
		t.Fatalf("cwnd %d datagrams after the blackout: quic-go collapsed to kMinimumWindow (persistent congestion established): update the write-up", a.Cwnd)
	}
	// quic-go's one reduction per recovery period (cubic_sender.go
	// OnCongestionEvent, renoBeta 0.7) leaves cwnd near 0.7 of the window
	// before the blackout; at least a quarter of it shows cwnd far above
	// kMinimumWindow whatever the exact reduction, then and for the rest
	// of the run.
	if 4*lowest < b.Cwnd {
		t.Fatalf("cwnd fell to %d datagrams after the blackout, below a quarter of the %d before it: not quic-go v0.65.0's single reduction", lowest, b.Cwnd)
	}
}

// blackoutConfig reads the seed's scenario (bytes and schedule; the seed
// format's reader lives in package corpus, which imports this one's
// parent, so only the fields needed are decoded here).
func blackoutConfig(t *testing.T) netenv.Config {
	t.Helper()
	raw, err := os.ReadFile(blackoutSeed)
	if err != nil {
		t.Fatal(err)
	}
	var seed struct {
		Bytes    uint64          `json:"bytes"`
		Seed     uint64          `json:"seed"`
		Schedule netenv.Schedule `json:"schedule"`
	}
	if err := json.Unmarshal(raw, &seed); err != nil {
		t.Fatalf("%s: %v", blackoutSeed, err)
	}
	if len(seed.Schedule) != 3 || seed.Schedule[1].Env.Loss != 1 {
		t.Fatalf("%s: want three phases, the second a blackout (loss 1)", blackoutSeed)
	}
	return netenv.Config{Seed: seed.Seed, Schedule: seed.Schedule, Flows: []netenv.Flow{{CCA: "reno", Bytes: seed.Bytes}}}
}

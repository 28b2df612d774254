package gvisor

import (
	"fmt"
	"testing"
	"time"

	"gvisor.dev/gvisor/pkg/tcpip/seqnum"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

// TestAckBoard: delivered counts every packet once, when first
// cumulatively ACKed or SACKed, whatever order the ACKs report them in,
// and never decreases.
func TestAckBoard(t *testing.T) {
	const mss = 1000
	seg := func(i int) seqnum.Value { return seqnum.Value(1 + i*mss) } // segment i starts here
	blk := func(from, to int) seqRange { return seqRange{seg(from), seg(to)} }
	var b ackBoard
	b.start(seg(0))
	sent := seg(20)
	steps := []struct {
		name      string
		ack       seqnum.Value
		blocks    []seqRange
		delivered uint64
		sacked    uint64 // bytes SACKed above una
	}{
		{"two segments ACKed", seg(2), nil, 2, 0},
		{"a stale ACK", seg(1), nil, 2, 0},
		{"segments 4-5 SACKed", seg(2), []seqRange{blk(4, 6)}, 4, 2 * mss},
		{"the same SACK again", seg(2), []seqRange{blk(4, 6)}, 4, 2 * mss},
		{"3-7 SACKed: 3, 6 new", seg(2), []seqRange{blk(3, 7)}, 6, 4 * mss},
		{"9 SACKed, and 4-5 again", seg(2), []seqRange{blk(9, 10), blk(4, 6)}, 7, 5 * mss},
		{"a D-SACK below the ACK", seg(2), []seqRange{blk(0, 1)}, 7, 5 * mss},
		{"a block past what was sent", seg(2), []seqRange{{seg(19), seg(21)}}, 7, 5 * mss},
		{"the hole 2 filled: up to 7", seg(7), nil, 8, 1 * mss},
		{"a runt hole of 10 bytes", seg(7) + 10, nil, 9, 1 * mss},
		{"up to 10: 7-8 and 9 SACKed", seg(10), nil, 11, 0},
		{"an ACK past what was sent", seg(21), nil, 11, 0},
		{"everything", sent, nil, 21, 0},
	}
	for _, s := range steps {
		b.ack(s.ack, s.blocks, sent, mss)
		if b.delivered != s.delivered || b.sbytes != s.sacked {
			t.Fatalf("%s: delivered %d, SACKed %d bytes; want %d, %d (ranges %v)", s.name, b.delivered, b.sbytes, s.delivered, s.sacked, b.sacked)
		}
	}
}

// TestRecordInvariants runs CUBIC and Reno on lossy, reordering paths and
// checks what the records must keep whatever gVisor does: delivered never
// decreases; a new recovery is entered from Open (an ACK that completes a
// recovery and starts another shows both: passOpen), so ssthresh does not
// fall between two recovery records; a CUBIC reduction's prior_cwnd is
// the window gVisor reduced (ssthresh = ⌊0.7·prior_cwnd⌋, cubic.go
// reduceSlowStartThreshold); target is 0 in fast recovery, where gVisor
// does not run CUBIC's update; no record is emitted twice.
func TestRecordInvariants(t *testing.T) {
	envs := []netenv.Env{
		lossy(),
		{Loss: 0.05, BW: 50, Delay: 100, QShape: 10, QScale: 20, App: 10000, Buffer: 500},
		{Loss: 0.02, BW: 5, Delay: 300, QShape: 2, QScale: 30, App: 10000, Buffer: 2000},
		// Round trips of seconds: CUBIC's target, unbounded above
		// (cubic-target-bound), grows cwnd by several packets on the
		// ACK on which RACK then detects a loss.
		{Loss: 0.07, BW: 1000, Delay: 950, QShape: 6, QScale: 80, App: 10000, Buffer: 1200},
	}
	type runCase struct {
		cca  string
		name string
		cfg  netenv.Config
	}
	var runs []runCase
	for _, cca := range []string{"cubic", "reno"} {
		for ei, env := range envs {
			for seed := uint64(1); seed <= 4; seed++ {
				bytes := uint64(400_000)
				if env.Delay > 500 {
					bytes = 3_000_000
				}
				runs = append(runs, runCase{cca, fmt.Sprintf("env %d seed %d", ei, seed), config(cca, seed, env, bytes)})
			}
		}
	}
	// A simulation of a 300-run CUBIC campaign (issue 46, its seed
	// act-0000003) in which the ACK that entered recovery at 862.7 s
	// first grew cwnd from 4 to 8 (CUBIC's unbounded target on a 3 s
	// round trip): prior_cwnd was the 4 last recorded, and cubic-beta
	// fired.
	runs = append(runs, runCase{"cubic", "campaign act-0000003", config("cubic", 4556451357087488421,
		netenv.Env{Loss: 0.05459, BW: 9285.3, Delay: 803, QShape: 19.7, QScale: 73.98, App: 5570.801, Buffer: 1373}, 15_000_000)})
	passes, entries, exits := 0, 0, 0
	for _, rc := range runs {
		cca := rc.cca
		obs := &recObs{}
		run(t, rc.cfg, obs)
		for i := 1; i < len(obs.recs); i++ {
			p, r := &obs.recs[i-1], &obs.recs[i]
			where := func() string {
				return fmt.Sprintf("%s %s at %v (%v %v cwnd %d ssthresh %d prior %d, after %v %v cwnd %d ssthresh %d)",
					cca, rc.name, r.Time, r.Reason, r.CAState, r.Cwnd, r.SSThresh, r.PriorCwnd, p.Reason, p.CAState, p.Cwnd, p.SSThresh)
			}
			if r.Delivered < p.Delivered {
				t.Fatalf("delivered fell from %d to %d: %s", p.Delivered, r.Delivered, where())
			}
			if p.CAState == ccai.StateRecovery && r.CAState == ccai.StateRecovery && r.SSThresh < p.SSThresh {
				t.Fatalf("ssthresh fell within a recovery: %s", where())
			}
			if r.Time == p.Time && r.Reason == p.Reason && r.CAState == p.CAState && r.Cwnd == p.Cwnd && r.SSThresh == p.SSThresh && r.InFlight == p.InFlight {
				t.Fatalf("record emitted twice: %s", where())
			}
			if r.CAState == ccai.StateRecovery && p.CAState != ccai.StateRecovery {
				if p.Time == r.Time && p.Reason == observe.ReasonState && p.CAState == ccai.StateOpen && i > 1 &&
					(obs.recs[i-2].CAState == ccai.StateRecovery || obs.recs[i-2].CAState == ccai.StateLoss) {
					passes++
				}
				if cca == "cubic" && (p.CAState == ccai.StateOpen || p.CAState == ccai.StateDisorder) {
					entries++
					if want := max(int(0.7*float64(r.PriorCwnd)), 2); int(r.SSThresh) != want {
						t.Fatalf("CUBIC reduction: ssthresh %d, want ⌊0.7·prior_cwnd⌋ = %d: %s", r.SSThresh, want, where())
					}
				}
			}
			// Leaving a fast recovery, gVisor sets cwnd = ssthresh
			// (leaveRecovery) before the ACK's growth, which the
			// next record shows.
			if p.CAState == ccai.StateRecovery && r.CAState != ccai.StateRecovery && r.CAState != ccai.StateLoss {
				exits++
				if r.Cwnd != p.SSThresh || r.SSThresh != p.SSThresh || r.Reason != observe.ReasonState {
					t.Fatalf("a recovery's exit record is not the completed reduction: %s", where())
				}
			}
			if cca == "cubic" && r.CAState == ccai.StateRecovery && r.Vars[0] != 0 {
				t.Fatalf("target %v in recovery: %s", r.Vars[0], where())
			}
		}
	}
	t.Logf("%d CUBIC reductions from Open checked, %d recovery exits, %d passes through Open between two reductions", entries, exits, passes)
	if entries == 0 || exits == 0 || passes == 0 {
		t.Fatalf("the runs did not exercise what the test checks: %d reductions, %d exits, %d passes", entries, exits, passes)
	}
}

// TestIdleRestartRecorded: an application that writes a segment every few
// RTOs finds its cwnd restarted at the initial window by gVisor's sendData
// (RFC 5681 §4.1); that change, made by the write, not an ACK, is
// recorded, so no record shows cwnd jump from the window before the idle
// period.
func TestIdleRestartRecorded(t *testing.T) {
	// An application of 2 Mbit/s for 2 s (cwnd grows past the initial
	// window), then one of 10 kbit/s: a 1448-byte segment every 1.2 s,
	// on a 20 ms round trip (RTO 200 ms at least), without loss.
	fast := netenv.Env{BW: 10, Delay: 10, App: 2, Buffer: 1000}
	slow := fast
	slow.App = 0.01
	cfg := config("reno", 1, fast, 10_000_000)
	cfg.Schedule = netenv.Schedule{{Env: fast, Until: 2 * time.Second}, {Env: slow}}
	cfg.Limits.MaxTime = 20 * time.Second
	obs := &recObs{}
	run(t, cfg, obs)
	restarts := 0
	for i := 1; i < len(obs.recs); i++ {
		p, r := &obs.recs[i-1], &obs.recs[i]
		if r.Time < 2*time.Second {
			continue
		}
		if r.Reason == observe.ReasonState && r.CAState == p.CAState && r.Cwnd == 10 && p.Cwnd > 10 {
			restarts++
		}
		if r.Reason == observe.ReasonAck && r.Cwnd > p.Cwnd+1 {
			t.Fatalf("cwnd %d → %d on one ACK at %v", p.Cwnd, r.Cwnd, r.Time)
		}
	}
	if restarts == 0 {
		t.Fatal("no idle restart recorded")
	}
}

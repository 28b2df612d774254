package gvisor

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

type recObs struct{ recs []observe.Record }

func (o *recObs) Observe(r *observe.Record) {
	c := *r
	c.Vars = append([]float64(nil), r.Vars...)
	o.recs = append(o.recs, c)
}

func config(cca string, seed uint64, env netenv.Env, bytes uint64) netenv.Config {
	return netenv.Config{Seed: seed, Schedule: netenv.Constant(env), Flows: []netenv.Flow{{CCA: cca, Bytes: bytes}}, SACK: true, HashTrace: true}
}

func run(t *testing.T, cfg netenv.Config, obs observe.Observer) netenv.Result {
	t.Helper()
	res, err := (&Subject{}).Run(context.Background(), cfg, obs)
	if err != nil {
		var f *netenv.Fault
		if errors.As(err, &f) {
			t.Fatalf("fault: %v\n%s", f, f.Stack)
		}
		t.Fatal(err)
	}
	return res
}

// lossy is an environment with loss and reordering queuing delay, so that
// every random process of the link is exercised.
func lossy() netenv.Env {
	return netenv.Env{Loss: 2e-2, BW: 20, Delay: 10, QShape: 2, QScale: 0.5, App: 10000, Buffer: 60}
}

func TestSubject(t *testing.T) {
	s, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	if s.Name() != "gvisor" || len(s.Capabilities().CCAs) != 2 {
		t.Fatalf("name %q, ccas %v", s.Name(), s.Capabilities().CCAs)
	}
	cfg := config("bbr", 1, netenv.DefaultEnv(), 1000)
	if _, err := s.Run(context.Background(), cfg, nil); err == nil {
		t.Fatal("bbr accepted")
	}
}

func TestTransfer(t *testing.T) {
	for _, cca := range []string{"reno", "cubic"} {
		t.Run(cca, func(t *testing.T) {
			obs := &recObs{}
			const bytes = 300_000
			res := run(t, config(cca, 1, lossy(), bytes), obs)
			fr := res.Flows[0]
			t.Logf("sim %v wall %v events %d segs %d retx %d rto %d rec %d records %d final %+v",
				res.SimTime, res.Wall, res.Events, fr.SegmentsSent, fr.Retransmits, fr.Timeouts, fr.Recoveries, len(obs.recs), fr.Final)
			if !fr.Done || fr.DeliveredBytes != bytes || res.Capped {
				t.Fatalf("transfer incomplete: %+v capped=%v", fr, res.Capped)
			}
			if len(res.TraceSHA256) != 64 || len(obs.recs) < 100 {
				t.Fatalf("hash %q, %d records", res.TraceSHA256, len(obs.recs))
			}
			if fr.SegmentsSent < bytes/1500 {
				t.Fatalf("%d segments for %d bytes", fr.SegmentsSent, bytes)
			}
			first := obs.recs[0]
			if first.Reason != observe.ReasonState || first.Cwnd != 10 || first.SSThresh != ccai.InfiniteSSThresh {
				t.Fatalf("first record %+v", first)
			}
			var last time.Duration
			sawSRTT := false
			for _, r := range obs.recs {
				if r.Time < last {
					t.Fatalf("records out of time order at %v", r.Time)
				}
				last = r.Time
				if r.Cwnd == 0 {
					t.Fatalf("zero cwnd at %v", r.Time)
				}
				sawSRTT = sawSRTT || r.SRTT >= 2*10*time.Millisecond
				if want := len(Vars(cca)); len(r.Vars) != want {
					t.Fatalf("%d vars, want %d", len(r.Vars), want)
				}
			}
			if !sawSRTT {
				t.Fatal("srtt never reached the propagation RTT")
			}
			if res.Losses == 0 || fr.Retransmits == 0 {
				t.Fatalf("no loss on a lossy link: losses %d, retransmits %d", res.Losses, fr.Retransmits)
			}
		})
	}
}

// TestCubicVars checks that CUBIC's state is read: after a loss, w_max is
// the cwnd before the reduction and target follows the cubic curve.
func TestCubicVars(t *testing.T) {
	obs := &recObs{}
	run(t, config("cubic", 3, lossy(), 300_000), obs)
	ok, withTarget := false, 0
	for i := 1; i < len(obs.recs); i++ {
		r, p := obs.recs[i], obs.recs[i-1]
		if r.CAState == ccai.StateRecovery && p.CAState != ccai.StateRecovery {
			if r.Vars[1] <= 0 || r.Vars[2] <= 0 {
				t.Fatalf("entering recovery at %v: w_max %v, k %v", r.Time, r.Vars[1], r.Vars[2])
			}
			ok = true
		}
		// Where gVisor grows cwnd toward the curve (congestion
		// avoidance in Open, outside the TCP-friendly region: w_c ≥
		// w_est), target is reported; in recovery it is not.
		if r.CAState == ccai.StateOpen && r.Reason == observe.ReasonAck && r.Cwnd >= r.SSThresh && r.Vars[1] > 0 && r.Vars[5] >= r.Vars[3] {
			if r.Vars[0] == 0 {
				t.Fatalf("no target in congestion avoidance at %v: %v", r.Time, r.Vars)
			}
			withTarget++
		}
		if r.CAState == ccai.StateRecovery && r.Vars[0] != 0 {
			t.Fatalf("target in recovery at %v: %v", r.Time, r.Vars)
		}
	}
	if !ok || withTarget == 0 {
		t.Fatalf("recovery episode: %v; records with a target: %d", ok, withTarget)
	}
}

// TestDeterminism runs the same seed several times, on both CCAs, and
// checks that the trace hash is the same; different seeds differ.
func TestDeterminism(t *testing.T) {
	seeds := 50
	if testing.Short() {
		seeds = 8
	}
	for _, cca := range []string{"reno", "cubic"} {
		distinct := map[string]bool{}
		for seed := uint64(1); seed <= uint64(seeds); seed++ {
			cfg := config(cca, seed, lossy(), 150_000)
			a := run(t, cfg, nil).TraceSHA256
			b := run(t, cfg, nil).TraceSHA256
			if a != b {
				t.Fatalf("%s seed %d: %s then %s", cca, seed, a, b)
			}
			distinct[a] = true
		}
		if len(distinct) < seeds/2 {
			t.Fatalf("%s: %d distinct hashes over %d seeds", cca, len(distinct), seeds)
		}
	}
}

// TestDeterminismGOMAXPROCS: the number of gVisor processor goroutines
// (GOMAXPROCS) does not change the trace.
func TestDeterminismGOMAXPROCS(t *testing.T) {
	cfg := config("cubic", 7, lossy(), 150_000)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var hashes []string
	for _, p := range []int{1, 2, 4} {
		runtime.GOMAXPROCS(p)
		hashes = append(hashes, run(t, cfg, nil).TraceSHA256)
	}
	if hashes[0] != hashes[1] || hashes[0] != hashes[2] {
		t.Fatalf("hashes differ with GOMAXPROCS: %v", hashes)
	}
}

// TestHashMatchesNativeLayout: trace_sha256 is computed over the emitted
// records exactly as the native subject computes it.
func TestHashMatchesNativeLayout(t *testing.T) {
	obs := &recObs{}
	res := run(t, config("cubic", 2, lossy(), 100_000), obs)
	h := netenv.NewTraceHasher(nil)
	for i := range obs.recs {
		h.Observe(&obs.recs[i])
	}
	if h.Sum() != res.TraceSHA256 {
		t.Fatalf("rehash %s != %s", h.Sum(), res.TraceSHA256)
	}
}

// TestSchedule: an environment switch takes effect at its time.
func TestSchedule(t *testing.T) {
	base := netenv.Env{BW: 10, Delay: 10, App: 10000, Buffer: 1000}
	const bytes = 1_000_000
	constant := run(t, config("cubic", 1, base, bytes), nil)
	if constant.Losses != 0 || constant.Drops != 0 {
		t.Fatalf("losses on a clean link: %+v", constant)
	}

	// Random loss from 300 ms on.
	lossy := base
	lossy.Loss = 0.02
	cfg := config("cubic", 1, base, bytes)
	cfg.Schedule = netenv.Schedule{{Env: base, Until: 300 * time.Millisecond}, {Env: lossy}}
	obs := &recObs{}
	switched := run(t, cfg, obs)
	if switched.Losses == 0 || switched.TraceSHA256 == constant.TraceSHA256 {
		t.Fatalf("loss phase had no effect: %d losses", switched.Losses)
	}
	for _, r := range obs.recs {
		if r.Time < 300*time.Millisecond && r.CAState != ccai.StateOpen {
			t.Fatalf("ca_state %v at %v, before the lossy phase", r.CAState, r.Time)
		}
	}

	// The bottleneck slows to 1 Mbit/s after 200 ms.
	slow := base
	slow.BW = 1
	cfg = config("cubic", 1, base, bytes)
	cfg.Schedule = netenv.Schedule{{Env: base, Until: 200 * time.Millisecond}, {Env: slow}}
	slowed := run(t, cfg, nil)
	if slowed.Flows[0].DoneAtS < 2*constant.Flows[0].DoneAtS {
		t.Fatalf("slower phase: done at %.3fs vs %.3fs", slowed.Flows[0].DoneAtS, constant.Flows[0].DoneAtS)
	}
}

// TestAppRate: a rate-limited application paces the transfer.
func TestAppRate(t *testing.T) {
	env := netenv.Env{BW: 10, Delay: 5, App: 1, Buffer: 100}
	res := run(t, config("reno", 1, env, 200_000), nil)
	fr := res.Flows[0]
	// 200 kB at 1 Mbit/s is 1.6 s.
	if !fr.Done || fr.DoneAtS < 1.6 || fr.DoneAtS > 2.0 {
		t.Fatalf("app-limited transfer done=%v at %.3fs, want ≈1.6 s", fr.Done, fr.DoneAtS)
	}
}

func TestTwoFlows(t *testing.T) {
	cfg := config("cubic", 1, netenv.DefaultEnv(), 200_000)
	cfg.Flows = append(cfg.Flows, netenv.Flow{CCA: "reno", Bytes: 100_000})
	obs := &recObs{}
	res := run(t, cfg, obs)
	seen := map[int32]bool{}
	for _, r := range obs.recs {
		seen[r.Flow] = true
	}
	for i, fr := range res.Flows {
		if !fr.Done || fr.DeliveredBytes != cfg.Flows[i].Bytes {
			t.Fatalf("flow %d: %+v", i, fr)
		}
	}
	if !seen[0] || !seen[1] {
		t.Fatalf("records for flows %v", seen)
	}
}

func TestCaps(t *testing.T) {
	cfg := config("cubic", 1, netenv.DefaultEnv(), 10_000_000)
	cfg.Limits.MaxTime = 500 * time.Millisecond
	res := run(t, cfg, nil)
	if !res.Capped || res.CapReason != "time" || res.Flows[0].Done {
		t.Fatalf("time cap: %+v", res)
	}
	cfg.Limits = netenv.Config{}.Limits
	cfg.Limits.MaxEvents = 500
	res = run(t, cfg, nil)
	if !res.Capped || res.CapReason != "events" {
		t.Fatalf("event cap: %+v", res)
	}
}

type panicObs struct{ n int }

func (p *panicObs) Observe(*observe.Record) {
	p.n++
	if p.n == 50 {
		panic("observer exploded")
	}
}

// TestFault: a panic during the run is a *netenv.Fault, not a crash.
func TestFault(t *testing.T) {
	_, err := (&Subject{}).Run(context.Background(), config("cubic", 1, lossy(), 200_000), &panicObs{})
	var f *netenv.Fault
	if !errors.As(err, &f) || f.Kind != "panic" {
		t.Fatalf("got %v, want a panic fault", err)
	}
	// The subject still works afterwards.
	run(t, config("cubic", 1, lossy(), 50_000), nil)
}

func TestContextCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := (&Subject{}).Run(ctx, config("cubic", 1, netenv.DefaultEnv(), netenv.DefaultBytes), nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
}

// TestPeek: the reflective read of the sender's state (used on timer
// events) agrees with the TCP probe after every ACK; it fails when a gVisor
// upgrade changes the fields it reads.
func TestPeek(t *testing.T) {
	checked := 0
	subj := &Subject{}
	subj.hooks.afterAck = func(f *flow, s *snapshot) {
		snd, cubic, isCubic, ok := peekSender(f.ep)
		if !ok || !isCubic {
			t.Errorf("peek: ok=%v cubic=%v", ok, isCubic)
			return
		}
		if snd.SndCwnd != s.cwnd || snd.Ssthresh != s.ssthresh || snd.SndUna != s.una || snd.Outstanding != s.outstanding ||
			cubic.WMax != s.cubic.wMax || cubic.K != s.cubic.k || cubic.WEst != s.cubic.wEst {
			t.Errorf("peek disagrees with the probe: %+v vs %+v", snd, s)
		}
		checked++
	}
	if _, err := subj.Run(context.Background(), config("cubic", 1, lossy(), 100_000), nil); err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("nothing checked")
	}
}

type blockObs struct{ release chan struct{} }

func (b *blockObs) Observe(*observe.Record) { <-b.release }

// TestHang: a run that stops making progress is a "hang" fault.
func TestHang(t *testing.T) {
	obs := &blockObs{release: make(chan struct{})}
	defer close(obs.release)
	s := &Subject{StallTimeout: 300 * time.Millisecond}
	_, err := s.Run(context.Background(), config("cubic", 1, netenv.DefaultEnv(), 100_000), obs)
	var f *netenv.Fault
	if !errors.As(err, &f) || f.Kind != "hang" {
		t.Fatalf("got %v, want a hang fault", err)
	}
}

// TestNoSACK: without SACK gVisor recovers with NewReno.
func TestNoSACK(t *testing.T) {
	cfg := config("reno", 2, lossy(), 200_000)
	cfg.SACK = false
	res := run(t, cfg, nil)
	if fr := res.Flows[0]; !fr.Done || fr.Retransmits == 0 {
		t.Fatalf("%+v", fr)
	}
}

// TestNoGoroutineLeak: a run stops its stacks' goroutines.
func TestNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	for seed := uint64(1); seed <= 5; seed++ {
		run(t, config("cubic", seed, lossy(), 50_000), nil)
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before+2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before+2 {
		t.Fatalf("%d goroutines before, %d after", before, n)
	}
}

// TestAbort: when gVisor gives up on a connection (here every SYN is lost)
// the flow ends, not done, and the run ends with it.
func TestAbort(t *testing.T) {
	env := netenv.DefaultEnv()
	env.Loss = 1
	res := run(t, config("cubic", 1, env, 100_000), nil)
	if fr := res.Flows[0]; fr.Done || res.Capped || fr.DeliveredBytes != 0 {
		t.Fatalf("%+v capped=%v", fr, res.Capped)
	}
	t.Logf("gave up after %v", res.SimTime)
}

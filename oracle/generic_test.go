package oracle

import (
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

// Fire/silent cases of the oracles of every congestion control (generic):
// each runs a test CCAI that breaks the oracle's rule and the native one
// it was made from, on the same path, or feeds hand-built records where a
// congestion control cannot break the rule (the machinery's timers and
// states) or a simulation would take long to get there.

// The planted bugs: Reno but for one thing each.
type (
	// nofloorReno forgets ssthresh's floor of 2 segments: cwnd/4.
	nofloorReno struct{ ccai.Reno }
	// fifthReno keeps a fifth of the window (below Reno's β = ½).
	fifthReno struct{ ccai.Reno }
	// noreduceReno raises ssthresh above the window on a loss.
	noreduceReno struct{ ccai.Reno }
	// ungatedReno grows cwnd whether or not the window limits sending
	// (no tcp_is_cwnd_limited check).
	ungatedReno struct{ ccai.Reno }
	// driftReno lowers ssthresh on every ACK of a recovery.
	driftReno struct{ ccai.Reno }
	// halfexitReno leaves a reduction half-way between ssthresh and the
	// window before it.
	halfexitReno struct{ ccai.Reno }
	// doubleundoReno restores twice the window from before the
	// reduction on an undo.
	doubleundoReno struct{ ccai.Reno }
)

func (*nofloorReno) SSThresh(s *ccai.Sock) uint32  { return s.Cwnd / 4 }
func (*fifthReno) SSThresh(s *ccai.Sock) uint32    { return max(s.Cwnd/5, 2) }
func (*noreduceReno) SSThresh(s *ccai.Sock) uint32 { return s.Cwnd + 4 }

func (*ungatedReno) CongAvoid(s *ccai.Sock, acked uint32) {
	if s.InSlowStart() {
		if acked = s.SlowStart(acked); acked == 0 {
			return
		}
	}
	s.CongAvoidAI(s.Cwnd, acked)
}

func (*driftReno) PktsAcked(s *ccai.Sock, _ ccai.AckSample) {
	if s.CAState == ccai.StateRecovery && s.SSThresh > 2 {
		s.SSThresh--
	}
}

func (*halfexitReno) CwndEvent(s *ccai.Sock, ev ccai.Event) {
	if ev == ccai.EventCompleteCWR && s.PriorCwnd > s.SSThresh {
		s.Cwnd = (s.SSThresh + s.PriorCwnd) / 2
	}
}

func (*doubleundoReno) UndoCwnd(s *ccai.Sock) uint32 { return max(s.Cwnd, 2*s.PriorCwnd) }

func init() {
	for _, r := range []struct {
		name string
		new  func() ccai.Algorithm
	}{
		{"test-nofloor", func() ccai.Algorithm { return &nofloorReno{} }},
		{"test-fifth", func() ccai.Algorithm { return &fifthReno{} }},
		{"test-noreduce", func() ccai.Algorithm { return &noreduceReno{} }},
		{"test-ungated", func() ccai.Algorithm { return &ungatedReno{} }},
		{"test-drift", func() ccai.Algorithm { return &driftReno{} }},
		{"test-halfexit", func() ccai.Algorithm { return &halfexitReno{} }},
		{"test-doubleundo", func() ccai.Algorithm { return &doubleundoReno{} }},
	} {
		ccai.Register(ccai.Info{Name: r.name, Description: "Reno with a planted bug (oracle tests)", Family: ccai.FamilyReno, Beta: 0.5, New: r.new})
	}
}

// simCase is an oracle's pair of runs: bug breaks its rule on path run,
// good (the native congestion control bug was made from) keeps it. need
// and premise, if set, say what the good run must have gone through for
// its silence to mean something (the situation the rule is about): a
// counter of its result, a condition that held at some record.
type simCase struct {
	oracle    string
	bug, good string
	run       simRun
	need      string // "recoveries", "undos" or "ecn"
	premise   string
}

func (tc simCase) test(t *testing.T) {
	t.Helper()
	r := tc.run
	if r.bytes == 0 {
		r.bytes = 1 << 20
	}
	if r.seed == 0 {
		r.seed = 1
	}
	bug, good := r, r
	bug.ccas, good.ccas = []string{tc.bug}, []string{tc.good}
	hits, res := simulate(t, tc.oracle, bug)
	logRun(t, tc.bug, hits, res)
	expect(t, tc.oracle, tc.bug, hits, true)
	hits, res = simulate(t, tc.oracle, good)
	logRun(t, tc.good, hits, res)
	expect(t, tc.oracle, tc.good, hits, false)
	f := res.Flows[0]
	if n := map[string]uint64{"recoveries": f.Recoveries, "undos": f.Undos, "ecn": f.ECNReductions}[tc.need]; tc.need != "" && n == 0 {
		t.Errorf("%s's run had no %s: its silence says nothing", tc.good, tc.need)
	}
	if tc.premise != "" && !holds(t, good, tc.premise) {
		t.Errorf("%s's run never had %s: its silence says nothing", tc.good, tc.premise)
	}
}

func TestGenericOraclesSimulated(t *testing.T) {
	for _, tc := range []simCase{
		// 5% loss keeps the window below 8 segments: cwnd/4 is below 2.
		{oracle: "cwnd-floor", bug: "test-nofloor", good: "reno", run: simRun{env: env("loss", 0.05), bytes: 300_000}, need: "recoveries"},
		// Reordering from the start: test-doubleundo doubles cwnd on
		// every undo, to millions of packets.
		{oracle: "window-overflow", bug: "test-doubleundo", good: "reno", run: simRun{env: env("loss", 0, "qshape", 2, "qscale", 2)}, need: "undos"},
		{oracle: "reduction-bound", bug: "test-fifth", good: "reno", run: simRun{env: env("loss", 0.002)}, need: "recoveries"},
		{oracle: "reduction-bound", bug: "test-noreduce", good: "reno", run: simRun{env: env("loss", 0.002)}, need: "recoveries"},
		// An application at 1 Mbit/s on a 10 Mbit/s path never fills
		// the window.
		{oracle: "cwnd-validation", bug: "test-ungated", good: "reno", run: simRun{env: env("loss", 0, "app", 1), bytes: 500_000},
			premise: `ca_state == "open" && time > 1 && 2 * in_flight < cwnd`},
		{oracle: "ssthresh-steady", bug: "test-drift", good: "reno", run: simRun{env: env("loss", 0.002)}, need: "recoveries"},
		{oracle: "recovery-exit", bug: "test-halfexit", good: "reno", run: simRun{env: env("loss", 0.002)}, need: "recoveries"},
		// A real loss ends slow start in the first second; then random
		// queuing delay reorders packets, and the spurious recoveries
		// are undone. (An undo in slow start restores an infinite
		// ssthresh, which the oracle does not judge: see
		// TestUndoRestoresInSlowStart.)
		{oracle: "undo-restores", bug: "test-doubleundo", good: "reno", run: simRun{bytes: 3 << 20, sched: netenv.Schedule{
			{Env: env("loss", 0.002), Until: time.Second}, {Env: env("loss", 0, "qshape", 2, "qscale", 2)}}}, need: "undos"},
	} {
		t.Run(tc.oracle+"/"+tc.bug, tc.test)
	}
}

// recCase is a hand-built stream of records and whether the oracle fires
// on it.
type recCase struct {
	name string
	env  netenv.Env
	recs []observe.Record
	fire bool
}

func runRecCases(t *testing.T, oracle string, caps netenv.Capabilities, ccas []string, cases []recCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(oracle+"/"+tc.name, func(t *testing.T) {
			e := tc.env
			if e == (netenv.Env{}) {
				e = netenv.DefaultEnv()
			}
			expect(t, oracle, tc.name, replay(t, oracle, caps, ccas, e, tc.recs), tc.fire)
		})
	}
}

func TestGenericOraclesRecords(t *testing.T) {
	native := netenv.NativeCapabilities()
	reno := []string{"reno"}
	const rto, ack, state = observe.ReasonRTO, observe.ReasonAck, observe.ReasonState

	// cwnd-floor: cwnd 0 at any record; ssthresh below 2 in a reduction
	// state only (Linux's Vegas leaves slow start with ssthresh cwnd − 1).
	runRecCases(t, "cwnd-floor", native, reno, []recCase{
		{name: "cwnd 0", fire: true, recs: records(
			rec{ms: 100, state: "open", cwnd: 10, ssthresh: 20, srttMS: 40},
			rec{ms: 110, state: "open", cwnd: 0, ssthresh: 20, srttMS: 40})},
		{name: "ssthresh 1 in cwr", fire: true, recs: records(
			rec{ms: 100, state: "open", cwnd: 3, ssthresh: 20, srttMS: 40},
			rec{ms: 110, reason: state, state: "cwr", cwnd: 3, ssthresh: 1, prior: 3, srttMS: 40})},
		{name: "ssthresh 1 in open", fire: false, recs: records(
			rec{ms: 100, state: "open", cwnd: 2, ssthresh: 20, srttMS: 40},
			rec{ms: 110, state: "open", cwnd: 2, ssthresh: 1, srttMS: 40})},
	})

	// window-overflow: 10 Mbit/s, 20 ms and 100 packets of buffer hold
	// 2·(34.5 + 100) + 16 = 285 packets; 2³¹ bytes are 1,483,028.
	runRecCases(t, "window-overflow", native, reno, []recCase{
		{name: "cwnd past 2^31 bytes", fire: true, recs: records(
			rec{ms: 100, state: "open", cwnd: 1_000_000, ssthresh: 1 << 30, srttMS: 40, delivered: 10},
			rec{ms: 110, state: "open", cwnd: 1_500_000, ssthresh: 1 << 30, srttMS: 40, delivered: 11})},
		{name: "ssthresh wrapped", fire: true, recs: records(
			rec{ms: 100, state: "open", cwnd: 40, ssthresh: ccai.InfiniteSSThresh, srttMS: 40},
			rec{ms: 110, state: "recovery", cwnd: 40, ssthresh: 0xfffffffe, prior: 40, srttMS: 40})},
		{name: "infinite ssthresh and a large window", fire: false, recs: records(
			rec{ms: 100, state: "open", cwnd: 280, ssthresh: ccai.InfiniteSSThresh, srttMS: 40},
			rec{ms: 110, state: "open", cwnd: 1_000_000, ssthresh: ccai.InfiniteSSThresh, srttMS: 40})},
		// 10 Gbit/s, 1 s one way: a BDP of 1.7 million packets.
		{name: "a path that holds 2^31 bytes", env: env("bw", 10000, "delay", 1000), fire: false, recs: records(
			rec{ms: 100, state: "open", cwnd: 1_500_000, ssthresh: ccai.InfiniteSSThresh, srttMS: 2000})},
	})

	// stall: delivered stops at 2 s with 20 packets in flight; rto 1 s.
	// The bound is 3·rto + 10 s + 100·11.584/10 ms ≈ 13.1 s.
	stalled := func(rtoMS float64, lastMS float64, progress bool) []observe.Record {
		rs := []rec{{ms: 1000, state: "open", cwnd: 20, ssthresh: 50, inFlight: 20, delivered: 100, srttMS: 40, rtoMS: rtoMS}}
		d := uint64(100)
		for ms := 2000.0; ms <= lastMS; ms += 1000 {
			if progress {
				d++
			}
			rs = append(rs, rec{ms: ms, reason: rto, state: "loss", cwnd: 1, ssthresh: 10, prior: 20, inFlight: 20, delivered: d, srttMS: 40, rtoMS: rtoMS})
		}
		return records(rs...)
	}
	runRecCases(t, "stall", native, reno, []recCase{
		{name: "nothing delivered for 15 s", fire: true, recs: stalled(1000, 17000, false)},
		{name: "nothing delivered for 12 s", fire: false, recs: stalled(1000, 13000, false)},
		{name: "a backed-off rto of 5 s", fire: false, recs: stalled(5000, 17000, false)},
		{name: "a packet delivered every second", fire: false, recs: stalled(1000, 17000, true)},
		{name: "nothing in flight", fire: false, recs: records(
			rec{ms: 1000, state: "open", cwnd: 20, ssthresh: 50, delivered: 100, srttMS: 40, rtoMS: 1000},
			rec{ms: 30000, state: "open", cwnd: 20, ssthresh: 50, delivered: 100, srttMS: 40, rtoMS: 1000})},
	})

	// rto-backoff: timeouts in a row in Loss, without progress.
	timeouts := func(deliveredBetween bool, rtos ...float64) []observe.Record {
		rs := []rec{{ms: 1000, state: "open", cwnd: 20, ssthresh: 50, inFlight: 20, delivered: 100, srttMS: 40, rtoMS: rtos[0]}}
		now, d := 1000.0, uint64(100)
		for _, r := range rtos {
			now += r
			rs = append(rs, rec{ms: now, reason: rto, state: "loss", cwnd: 1, ssthresh: 10, prior: 20, inFlight: 20, delivered: d, srttMS: 40, rtoMS: r})
			if deliveredBetween {
				d++
				rs = append(rs, rec{ms: now + 50, reason: ack, state: "loss", cwnd: 2, ssthresh: 10, prior: 20, inFlight: 19, delivered: d, srttMS: 40, rtoMS: r})
			}
		}
		return records(rs...)
	}
	runRecCases(t, "rto-backoff", native, reno, []recCase{
		{name: "rto not doubled", fire: true, recs: timeouts(false, 1000, 1000)},
		{name: "rto grew by half", fire: true, recs: timeouts(false, 400, 800, 1200)},
		{name: "rto doubled", fire: false, recs: timeouts(false, 1000, 2000, 4000)},
		{name: "rto at its 60 s cap", fire: false, recs: timeouts(false, 40000, 60000, 60000)},
		{name: "progress between timeouts", fire: false, recs: timeouts(true, 1000, 1000, 1000)},
	})

	// one-reduction-per-window: srtt_min 100 ms, the default path's
	// propagation round trip 40 ms (p.delay 20), 20 packets in flight at
	// the first recovery; a second one 10 ms later, 10 packets
	// delivered since, is within its window.
	twoReductions := func(gapMS float64, undone bool, deliveredSince uint64) []observe.Record {
		exitCwnd := uint32(10)
		if undone {
			exitCwnd = 20 // restored: the first reduction is undone
		}
		return records(
			rec{ms: 1000, state: "open", cwnd: 20, ssthresh: 50, srttMS: 100, delivered: 100, inFlight: 20},
			rec{ms: 1010, reason: state, state: "recovery", cwnd: 20, ssthresh: 10, prior: 20, srttMS: 100, delivered: 100, inFlight: 20},
			rec{ms: 1015, reason: state, state: "open", cwnd: exitCwnd, ssthresh: 10, prior: 20, srttMS: 100, delivered: 100 + deliveredSince, inFlight: 10},
			rec{ms: 1010 + gapMS, reason: state, state: "recovery", cwnd: exitCwnd, ssthresh: 5, prior: exitCwnd, srttMS: 100, delivered: 100 + deliveredSince, inFlight: 10})
	}
	runRecCases(t, "one-reduction-per-window", native, reno, []recCase{
		{name: "second recovery after 10 ms", fire: true, recs: twoReductions(10, false, 10)},
		{name: "second recovery after 200 ms", fire: false, recs: twoReductions(200, false, 10)},
		// 30 ms is within half srtt_min, not within half the
		// propagation round trip: a jittery path's srtt_min is no
		// round trip's lower bound.
		{name: "second recovery after 30 ms", fire: false, recs: twoReductions(30, false, 10)},
		{name: "after an undone recovery", fire: false, recs: twoReductions(10, true, 10)},
		// Random queuing delay (mean 250 ms) kept srtt at 100 ms and
		// more, but on a 5 ms path one packet can make the round trip in
		// 10: the recovery ended and a new loss came 15 ms after it.
		{name: "second recovery after 15 ms on a 5 ms path", env: env("delay", 5, "qshape", 10, "qscale", 25), fire: false, recs: twoReductions(15, false, 10)},
		// Everything in flight at the first recovery was delivered: its
		// recovery point may have been acknowledged (a sender that had
		// stalled sent it long before).
		{name: "in-flight window delivered", fire: false, recs: twoReductions(10, false, 20)},
		{name: "all but 3 delivered", fire: true, recs: twoReductions(10, false, 17)},
	})

	// And the records of the seed a 2,000-simulation native Hybla
	// campaign hit before the bound took the path's round trip (its run
	// moved since, with tcp_cwnd_validate as Linux has it since 6.1, and
	// no longer goes there): the delay fell from 149 ms one way to 6 ms
	// behind a queue of seconds, srtt_min 203 ms; a timeout at 9.888 s
	// with 4 packets out ended at 9.934 s (recovery point acknowledged),
	// and a loss in the next window began a recovery at 9.975 s, 86 ms
	// after the timeout.
	hybla1031 := records(
		rec{ms: 4100, state: "open", cwnd: 300, ssthresh: 938, delivered: 4000, srttMS: 202.81},
		rec{ms: 7018.55, reason: state, state: "recovery", cwnd: 685, ssthresh: 342, prior: 685, inFlight: 472, delivered: 5648, srttMS: 3493.52},
		rec{ms: 8884.86, state: "recovery", cwnd: 123, ssthresh: 342, prior: 685, inFlight: 4, delivered: 6116, srttMS: 2878.17},
		rec{ms: 9888.08, reason: rto, state: "loss", cwnd: 1, ssthresh: 342, prior: 685, delivered: 6116, srttMS: 2878.17},
		rec{ms: 9903.40, state: "loss", cwnd: 2, ssthresh: 342, prior: 685, delivered: 6117, srttMS: 2520.31},
		rec{ms: 9918.71, state: "loss", cwnd: 3, ssthresh: 342, prior: 685, inFlight: 1, delivered: 6118, srttMS: 2207.18},
		rec{ms: 9921.85, state: "loss", cwnd: 4, ssthresh: 342, prior: 685, inFlight: 2, delivered: 6119, srttMS: 1933.59},
		rec{ms: 9933.98, reason: state, state: "open", cwnd: 4, ssthresh: 342, prior: 685, inFlight: 3, delivered: 6120, srttMS: 1693.80},
		rec{ms: 9933.98, state: "open", cwnd: 342, ssthresh: 342, prior: 685, inFlight: 3, delivered: 6120, srttMS: 1693.80},
		rec{ms: 9961.90, state: "open", cwnd: 345, ssthresh: 342, prior: 685, inFlight: 344, delivered: 6128, srttMS: 596.25},
		rec{ms: 9968.21, reason: state, state: "disorder", cwnd: 345, ssthresh: 342, prior: 685, inFlight: 344, delivered: 6129, srttMS: 526.00},
		rec{ms: 9974.53, reason: state, state: "recovery", cwnd: 345, ssthresh: 172, prior: 345, inFlight: 344, delivered: 6131, srttMS: 411.89})
	runRecCases(t, "one-reduction-per-window", native, reno, []recCase{
		{name: "Hybla seed: recovery 86 ms after a timeout on a 6 ms path", env: env("delay", 6), fire: false, recs: hybla1031},
		// And on a 149 ms path too: the timeout's 4 packets in flight
		// were delivered before the recovery (reduction_left).
		{name: "Hybla seed's records on a 149 ms path", env: env("delay", 149), fire: false, recs: hybla1031},
	})
}

// TestUndoRestoresInSlowStart: an undo of a recovery entered in slow start
// restores an infinite ssthresh, above any window. With reordering from
// the start, test-doubleundo doubles cwnd on every undo of its slow start,
// to millions of packets (window-overflow sees that); undo-restores must
// see the first over-restore (it missed them all while it judged only
// undos that left cwnd above ssthresh).
func TestUndoRestoresInSlowStart(t *testing.T) {
	run := simRun{ccas: []string{"test-doubleundo"}, env: env("loss", 0, "qshape", 2, "qscale", 2), bytes: 1 << 20, seed: 1}
	overflow, _ := simulate(t, "window-overflow", run)
	if len(overflow) == 0 {
		t.Fatal("test-doubleundo's undos did not blow the window up: the case no longer shows what it is about")
	}
	hits, res := simulate(t, "undo-restores", run)
	logRun(t, "test-doubleundo", hits, res)
	if len(hits) == 0 {
		t.Errorf("undo-restores fires on none of the run's %d undos, each restoring twice prior_cwnd: its guard cwnd > ssthresh + SLACK never holds, "+
			"as each undo restores an ssthresh above the doubled window (2147483647 in slow start; the first: recovery -> open at 49.6 ms, cwnd 10 -> 22, prior_cwnd 11); "+
			"window-overflow fired first at %v (cwnd %v)",
			res.Flows[0].Undos, overflow[0].at, overflow[0].state["cwnd"])
	}
}

// TestCwndValidationAfterDecay: cwnd-validation stays silent on an
// application-limited Hybla flow whose window RFC 2861 decays (the seed a
// 2,000-simulation native campaign hit while the decay went unrecorded):
// 0.5 Mbit/s over a 1.9 s round trip keeps about 80 packets in flight;
// the decay takes cwnd 174 → 128, below 2·max_packets_out, so slow start
// is cwnd-limited again and Hybla's one increment (2^ρ − 1 per ACK, ρ =
// 40, at most 65535) takes it to ssthresh, 618, on the next ACK. The
// premise is that growth from a recorded decay.
func TestCwndValidationAfterDecay(t *testing.T) {
	seed211 := simRun{ccas: []string{"hybla"}, bytes: 15_000_000, seed: 14004472123628638790, sched: netenv.Schedule{
		{Env: env("loss", 0.09108899999999999, "bw", 9130.400000000001, "delay", 505, "qshape", 7.96, "qscale", 0.32, "app", 3090.7010000000005, "buffer", 2655), Until: 14378007271},
		{Env: env("loss", 0.000011, "bw", 9406.7, "delay", 930, "qshape", 11.42, "qscale", 0.03, "app", 0.501, "buffer", 1927)},
	}}
	hits, res := simulate(t, "cwnd-validation", seed211)
	logRun(t, "hybla", hits, res)
	expect(t, "cwnd-validation", "hybla", hits, false)
	if !holds(t, seed211, `ca_state == "open" && prev.reason == "idle" && reason == "ack" && cwnd > prev.cwnd && 2 * (rtt_max.in_flight + 4) < rtt_ago.cwnd`) {
		t.Error("the Hybla seed no longer grows its window from an RFC 2861 decay below the window of a round trip ago: its silence says nothing")
	}
}

package oracle

import (
	"strings"
	"testing"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

// The oracles on the ns-3 subject (fill's "ns3"), from records shaped as
// its driver emits them (netenv/ns3's doc, "State records"): the record
// that enters a reduction at the reduction itself, with the reduced
// ssthresh, cwnd = prior_cwnd and the flight ssthresh was computed from;
// the ACK's own record after it, at the same time. Each case says whether
// the oracle fires there, and the same records on the native subject
// where the two differ.

// ns3Caps are the ns-3 subject's capabilities as the oracles see them:
// every base variable, none of the models' own.
func ns3Caps() netenv.Capabilities {
	return netenv.Capabilities{Name: "ns3", Deterministic: true, Vars: func(string) []ccai.VarDesc { return nil }}
}

func TestOraclesOnNS3(t *testing.T) {
	ns3, native := ns3Caps(), netenv.NativeCapabilities()
	const ack, state, rto = observe.ReasonAck, observe.ReasonState, observe.ReasonRTO

	// A recovery entered from Open at 1 s (srtt 100 ms): the entry record
	// with ssthresh and in_flight as given, then the ACK's record with
	// cwnd and ssthresh after the rest of the ACK.
	recovery := func(prior, ssthresh, inFlight, ackCwnd, ackSSThresh uint32) []observe.Record {
		return records(
			rec{ms: 900, reason: ack, state: "open", cwnd: prior, ssthresh: 1000, inFlight: prior, delivered: 500, srttMS: 100},
			rec{ms: 1000, reason: state, state: "recovery", cwnd: prior, ssthresh: ssthresh, prior: prior, inFlight: inFlight, delivered: 501, srttMS: 100},
			rec{ms: 1000, reason: ack, state: "recovery", cwnd: ackCwnd, ssthresh: ackSSThresh, prior: prior, inFlight: ackCwnd, delivered: 501, srttMS: 100},
			rec{ms: 1020, reason: ack, state: "recovery", cwnd: ackCwnd, ssthresh: ackSSThresh, prior: prior, inFlight: ackCwnd, delivered: 502, srttMS: 100})
	}
	// A timeout from Open with in_flight before it: ns-3's loss record
	// follows the timeout (cwnd 1, everything marked lost).
	timeout := func(prior, inFlightBefore, ssthresh uint32) []observe.Record {
		return records(
			rec{ms: 900, reason: ack, state: "open", cwnd: prior, ssthresh: 1000, inFlight: inFlightBefore, delivered: 500, srttMS: 100},
			rec{ms: 1500, reason: state, state: "loss", cwnd: 1, ssthresh: ssthresh, prior: prior, inFlight: 1, delivered: 500, srttMS: 100, rtoMS: 600},
			rec{ms: 1500, reason: rto, state: "loss", cwnd: 1, ssthresh: ssthresh, prior: prior, inFlight: 1, delivered: 500, srttMS: 100, rtoMS: 600})
	}

	// reduction-bound: TcpNewReno halves the flight ns-3 gives it (RFC
	// 6675's pipe, 6 packets of a window of 10): RFC 5681 eq. (4) bounds
	// ssthresh from above only, so that is within the rule on ns-3; on
	// the native subject, whose congestion controls halve cwnd, the same
	// records break it.
	newreno := []string{"newreno"}
	runRecCases(t, "reduction-bound", ns3, newreno, []recCase{
		{name: "ns3: half the pipe at a recovery", fire: false, recs: recovery(10, 3, 6, 4, 3)},
		{name: "ns3: a fifth of the pipe at a recovery", fire: true, recs: recovery(20, 3, 20, 4, 3)},
		{name: "ns3: above the window", fire: true, recs: recovery(10, 12, 10, 10, 12)},
		{name: "ns3: half the flight before a timeout", fire: false, recs: timeout(20, 8, 4)},
		{name: "ns3: a tenth of the flight before a timeout", fire: true, recs: timeout(20, 20, 2)},
	})
	runRecCases(t, "reduction-bound", native, []string{"reno"}, []recCase{
		{name: "native: half the pipe, a third of cwnd", fire: true, recs: recovery(10, 3, 6, 4, 3)},
	})

	// cubic-beta: TcpCubic sets ssthresh = 0.7·cwnd, then, in the same
	// ACK, HyStart sets it to the cwnd PRR left (TcpCubic::PktsAcked →
	// HystartUpdate): the entry record has the first, the ACK's record
	// the second. cubic-beta judges the entry; ssthresh-steady sees the
	// fall.
	cubic := []string{"cubic"}
	hystart := recovery(100, 70, 90, 60, 60)
	runRecCases(t, "cubic-beta", ns3, cubic, []recCase{
		{name: "ns3: 0.7, then HyStart in the same ACK", fire: false, recs: hystart},
		{name: "ns3: half the window", fire: true, recs: recovery(100, 50, 90, 60, 50)},
	})
	runRecCases(t, "ssthresh-steady", ns3, cubic, []recCase{
		{name: "ns3: HyStart in the ACK that enters recovery", fire: true, recs: hystart},
		{name: "ns3: ssthresh kept", fire: false, recs: recovery(100, 70, 90, 60, 70)},
	})
	runRecCases(t, "reduction-bound", ns3, cubic, []recCase{
		{name: "ns3: 0.7, then HyStart in the same ACK", fire: false, recs: hystart},
	})

	// recovery-exit: ns-3.37 undoes nothing, so a window above ssthresh
	// at the end of a recovery is never a restored one: the ACK that
	// ends it took cwnd from ssthresh 2 to 5, above prior_cwnd 3 (ns-3
	// counts every segment from snd_una to that ACK, those SACKed during
	// the recovery included, TcpSocketBase::ProcessAck). Natively that
	// is an undo, which undo-restores judges.
	exit := func(exitCwnd uint32) []observe.Record {
		return records(
			rec{ms: 900, reason: ack, state: "open", cwnd: 3, ssthresh: 1000, inFlight: 3, delivered: 500, srttMS: 100},
			rec{ms: 1000, reason: state, state: "recovery", cwnd: 3, ssthresh: 2, prior: 3, inFlight: 2, delivered: 501, srttMS: 100},
			rec{ms: 1100, reason: ack, state: "recovery", cwnd: 2, ssthresh: 2, prior: 3, inFlight: 2, delivered: 502, srttMS: 100},
			rec{ms: 1200, reason: ack, state: "open", cwnd: exitCwnd, ssthresh: 2, prior: 3, inFlight: exitCwnd, delivered: 503, srttMS: 100},
			rec{ms: 1200, reason: state, state: "open", cwnd: exitCwnd, ssthresh: 2, prior: 3, inFlight: exitCwnd, delivered: 503, srttMS: 100})
	}
	reno := []string{"reno"}
	runRecCases(t, "recovery-exit", ns3, reno, []recCase{
		{name: "ns3: the exit ACK grows cwnd past the window before", fire: true, recs: exit(5)},
		{name: "ns3: ssthresh and the exit ACK's segment", fire: false, recs: exit(3)},
	})
	runRecCases(t, "recovery-exit", native, reno, []recCase{
		{name: "native: restored past the window before (undo-restores' case)", fire: false, recs: exit(5)},
	})

	// The CUBIC oracles that read CUBIC's own variables (target, w_max,
	// w_est), which ns-3's TcpCubic keeps private, are skipped with the
	// variable named: cubic-reno-friendly reads w_est only as
	// rtt_ago.w_est, which once compiled to a condition error on every
	// record.
	for _, name := range []string{"cubic-target-bound", "cubic-fast-convergence", "cubic-reno-friendly"} {
		specs, skips := Select(Choice{Names: []string{name}}, ns3, cubic, ccai.ProfileLinux)
		if len(specs) != 0 || len(skips) != 1 || !strings.Contains(skips[0].Why, "which ns3's cubic flows do not report") {
			t.Errorf("%s on ns3: %d conditions, skips %v; want none and a skip naming the variable", name, len(specs), skips)
		}
	}

	// undo-restores does not run on ns3, and says why.
	specs, skips := Select(Choice{Names: []string{"undo-restores"}}, ns3, reno, ccai.ProfileLinux)
	if len(specs) != 0 || len(skips) != 1 || !strings.Contains(skips[0].Why, "undoes no reduction") {
		t.Errorf("undo-restores on ns3: %d conditions, skips %v; want none and a skip naming ns-3's missing undo", len(specs), skips)
	}
}

// TestStallAfterIdle: an application that writes a segment every 12 s
// has nothing in flight between them; when one is lost and times out,
// the flow has waited on the network for the timeout only (ns-3's
// TcpNewReno at 1 kbit/s). A flow that stops delivering while it has
// data in flight still stalls, idle before or not.
func TestStallAfterIdle(t *testing.T) {
	const rto, ack = observe.ReasonRTO, observe.ReasonAck
	idleThen := func(stuckMS float64) []observe.Record {
		rs := []rec{
			{ms: 1000, reason: ack, state: "open", cwnd: 20, ssthresh: 50, inFlight: 1, delivered: 100, srttMS: 40, rtoMS: 250},
			{ms: 1040, reason: ack, state: "open", cwnd: 20, ssthresh: 50, inFlight: 0, delivered: 101, srttMS: 40, rtoMS: 250},
		}
		rto0 := 500.0
		for ms := 12900.0; ms <= 12900+stuckMS; ms += rto0 {
			rs = append(rs, rec{ms: ms, reason: rto, state: "loss", cwnd: 1, ssthresh: 10, prior: 20, inFlight: 1, delivered: 101, srttMS: 40, rtoMS: rto0})
		}
		return records(rs...)
	}
	runRecCases(t, "stall", netenv.NativeCapabilities(), []string{"reno"}, []recCase{
		{name: "a lone segment times out after 12 s idle", fire: false, recs: idleThen(0)},
		{name: "nothing delivered for 12 s after the idle", fire: true, recs: idleThen(12000)},
	})
}

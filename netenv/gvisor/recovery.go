package gvisor

// recovery.go holds the recovery episodes no probe shows: the Open state a
// full ACK passes through, and TLP episodes (effectiveState).

import (
	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

// passOpen records the Open state that an ACK acknowledging the recovery
// point of the recovery or timeout in force (RFC 6582 §3.2 step 3, full
// acknowledgment) puts the sender in before the rest of the ACK's
// processing, which no probe shows (the probe runs after the whole ACK).
// gVisor's handleRcvdSegment leaves a fast recovery with leaveRecovery
// (SndCwnd = Ssthresh: the reduction completed), then grows cwnd by
// cc.Update for every packet the ACK acknowledged (a full ACK after a
// recovery acknowledges the repaired hole and all that was SACKed above
// it: several packets of growth, 2 to 49 in the campaign's recovery-exit
// hits), and may enter a new recovery on the same ACK (RACK or the
// duplicate-ACK count: HandleLossDetected, enterRecovery). The record is
// the state the native subject records at the change itself: ca_state
// open, ssthresh and cwnd as leaveRecovery leaves them, or, after a
// timeout (no deflation), the last recorded cwnd; the CCA's variables
// stay as last recorded. The ACK's own record follows (reason ack, or
// state when it entered a new recovery). Without it the grown cwnd looked
// like a recovery ending half-way (recovery-exit), and two recoveries
// like one whose ssthresh fell twice (ssthresh-steady) whose second
// reduction was never checked as an entry from Open.
func (f *flow) passOpen(s *snapshot) {
	r := &f.rec
	cwnd := r.Cwnd
	if r.CAState == ccai.StateRecovery {
		cwnd = r.SSThresh
	}
	f.transition(ccai.StateOpen)
	r.Cwnd = cwnd
	r.InFlight = f.inFlight(s, ccai.StateOpen)
	f.emitKeepVars(observe.ReasonState)
}

// effectiveState is the ca_state of a sender whose TCP_INFO reports cc
// and whose latest snapshot is s: cc, but Open where cc is a recovery
// that is not active (FastRecovery.Active false). That is the state a TLP
// episode leaves: an ACK that ends a tail loss probe without a D-SACK
// calls HandleLossDetected, enterRecovery and leaveRecovery at once
// (pkg/tcpip/transport/tcp/rack.go detectTLPRecovery; RFC 8985 §7.4.2,
// a response "equivalent to fast recovery"), so the reduction is done
// and fast recovery is over, but enterRecovery's state (SACKRecovery,
// which CcState reports) stays until an ACK passes the recovery point
// (snd.go handleRcvdSegment sets Open only then). In between, gVisor
// acts as out of recovery: cc.Update grows cwnd on every ACK (snd.go
// handleRcvdSegment), and a loss RACK detects, on an ACK or on its
// reorder timer (rack.go reorderTimerExpired), starts a new recovery
// with a reduction of its own. Recorded as a recovery, the episode and
// that growth looked like a recovery whose ssthresh fell twice
// (ssthresh-steady) or that ended above ssthresh (recovery-exit). Linux
// does the same in its own terms: tcp_process_tlp_ack enters CWR, ends
// the reduction and returns to Open on the one ACK (net/ipv4/tcp_input.c).
func effectiveState(cc ccai.CAState, s *snapshot) ccai.CAState {
	if cc == ccai.StateRecovery && !s.recovering {
		return ccai.StateOpen
	}
	return cc
}

// tlpEpisode records the reduction of a TLP episode on the ACK of
// snapshot s (effectiveState): the record entering recovery with the
// reduced ssthresh and cwnd as leaveRecovery left it (= ssthresh), then
// the record of Open that leaveRecovery leaves, before the ACK's own
// record, which holds the ACK's growth (measured: cwnd 4 → 6 on the ACK
// of a Reno TLP episode; recorded as the recovery's end, it was a
// recovery-exit hit). The CCA's variables are those after the reduction.
func (f *flow) tlpEpisode(s *snapshot) {
	r := &f.rec
	f.transition(ccai.StateRecovery)
	r.Cwnd = clampWindow(s.ssthresh)
	r.SSThresh = clampWindow(s.ssthresh)
	r.InFlight = f.inFlight(s, ccai.StateOpen)
	f.emit(observe.ReasonState)
	// leaveRecovery's Open (cwnd = ssthresh), before the ACK's growth
	// (cc.Update, as on any ACK out of fast recovery), as for the end of
	// any recovery (passOpen).
	f.passOpen(s)
}

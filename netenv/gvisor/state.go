package gvisor

import (
	"math"
	"time"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/seqnum"
	"gvisor.dev/gvisor/pkg/tcpip/transport/tcp"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

// snapshot is what the harness keeps of one TCP probe call: the sender's
// state right after gVisor processed one ACK.
type snapshot struct {
	port        uint16 // local port: which flow
	una         seqnum.Value
	nxt         seqnum.Value // SndNxt
	recovering  bool         // FastRecovery.Active: gVisor's fast (or SACK) recovery
	recLast     seqnum.Value // FastRecovery.Last: the recovery point (RFC 6582 recover) of the last fast recovery or timeout
	cwnd        int
	ssthresh    int
	srtt        time.Duration
	rttvar      time.Duration
	rto         time.Duration
	outstanding int
	sackedOut   int
	mss         int // MaxPayloadSize
	cubic       cubicVars
}

// cubicVars is gVisor's CUBIC state (tcp.TCPCubicState) as of a probe.
type cubicVars struct {
	wMax, wLastMax float64
	k, c           float64
	wc, wEst       float64
	sinceEpoch     time.Duration // TimeSinceLastCongestion
}

func snapshotOf(s *tcp.TCPEndpointState) snapshot {
	snd := &s.Sender
	cs := &snd.Cubic
	return snapshot{
		port:        s.ID.LocalPort,
		una:         snd.SndUna,
		nxt:         snd.SndNxt,
		recovering:  snd.FastRecovery.Active,
		recLast:     snd.FastRecovery.Last,
		cwnd:        snd.SndCwnd,
		ssthresh:    snd.Ssthresh,
		srtt:        snd.RTTState.SRTT,
		rttvar:      snd.RTTState.RTTVar,
		rto:         snd.RTO,
		outstanding: snd.Outstanding,
		sackedOut:   snd.SackedOut,
		mss:         snd.MaxPayloadSize,
		cubic: cubicVars{
			wMax: cs.WMax, wLastMax: cs.WLastMax, k: cs.K, c: cs.C,
			wc: cs.WC, wEst: cs.WEst, sinceEpoch: cs.TimeSinceLastCongestion,
		},
	}
}

// caState maps gVisor's congestion-control state to ca_state. gVisor has
// no CWR state (it does not implement ECN).
func caState(s tcpip.CongestionControlState) ccai.CAState {
	switch s {
	case tcpip.Disorder:
		return ccai.StateDisorder
	case tcpip.FastRecovery, tcpip.SACKRecovery:
		return ccai.StateRecovery
	case tcpip.RTORecovery:
		return ccai.StateLoss
	}
	return ccai.StateOpen
}

// clampWindow converts a gVisor window (packets, an int whose initial
// ssthresh is math.MaxInt) to a record field: anything at or above
// ccai.InfiniteSSThresh is reported as ccai.InfiniteSSThresh.
func clampWindow(v int) uint32 {
	if v < 0 {
		return 0
	}
	if v >= int(ccai.InfiniteSSThresh) {
		return ccai.InfiniteSSThresh
	}
	return uint32(v)
}

// clampFloatWindow is clampWindow for a window gVisor keeps as a float64
// (CUBIC's WMax and WLastMax), rounded: at or above ccai.InfiniteSSThresh
// (+Inf included) it is ccai.InfiniteSSThresh, like the int windows it is
// compared with, and NaN or below 0 is 0. (Converting such a float to int
// first is implementation-defined in Go: on amd64 +Inf and anything past
// MaxInt64 become MinInt64, which clampWindow would report as 0.)
//
// A window reported as ccai.InfiniteSSThresh is saturated: gVisor's own
// window was at least that, and the record cannot say how much more. Its
// ratio to another saturated window (ssthresh to prior_cwnd after a
// reduction of a window of 5.8·10¹⁰ packets) is not gVisor's; the oracles
// that check a ratio skip a saturated window (cubic-beta), and
// window-overflow reports it.
func clampFloatWindow(v float64) uint32 {
	if !(v > 0) {
		return 0
	}
	if v >= float64(ccai.InfiniteSSThresh) {
		return ccai.InfiniteSSThresh
	}
	return min(uint32(math.Round(v)), ccai.InfiniteSSThresh)
}

// Vars lists the variables a gVisor CCA's records carry in
// observe.Record.Vars, in order. For cubic, target, w_max, k, w_est and
// epoch_s have the names and units of ccai's cubic (so a condition written
// for the native subject reads them the same way); gVisor's own w_c and
// w_last_max follow. ccai's cnt and delay_min_ms have no counterpart in
// gVisor and are not listed (a condition naming them is refused on this
// subject rather than reading a constant 0).
func Vars(cca string) []ccai.VarDesc {
	if cca == "cubic" {
		return cubicVarDescs
	}
	return nil
}

var cubicVarDescs = []ccai.VarDesc{
	{Name: "target", Doc: "W_cubic(t+srtt): the cubic curve one smoothed RTT ahead, as gVisor's getCwnd computes it before bounding it below by cwnd (packets); 0 where gVisor does not grow cwnd toward it (slow start, fast recovery, the TCP-friendly region)"},
	{Name: "w_max", Doc: "gVisor WMax: cwnd at the last congestion event, after fast convergence (packets)"},
	{Name: "k", Doc: "gVisor K: time from the epoch start to reach w_max (seconds)"},
	{Name: "w_est", Doc: "gVisor WEst: the TCP-friendly window as of the last update (packets)"},
	{Name: "epoch_s", Doc: "gVisor TimeSinceLastCongestion: seconds since the epoch T (the connection start until the first congestion event)"},
	{Name: "w_c", Doc: "gVisor WC: the cubic curve at the last update (packets)"},
	{Name: "w_last_max", Doc: "gVisor WLastMax: the previous w_max (packets)"},
}

// grows reports whether gVisor's CUBIC update grows cwnd toward the cubic
// curve one RTT ahead in the state of snapshot s and record r: in
// congestion avoidance (cwnd ≥ ssthresh) outside fast recovery, where
// cubicState.Update calls getCwnd (snd.go handleRcvdSegment calls
// cc.Update only when fast recovery is not active), and outside the
// TCP-friendly region, where getCwnd returns ⌊W_est⌋ instead (W_cubic(t)
// < W_est and cwnd < W_est before the update; after it, cwnd ≤ W_est).
// WC and WEst are those of the last getCwnd.
func (cv *cubicVars) grows(s *snapshot, r *observe.Record) bool {
	if s.recovering || r.Cwnd < r.SSThresh {
		return false
	}
	return !(cv.wc < cv.wEst && float64(r.Cwnd) <= cv.wEst)
}

// fill writes the cubic variables into dst (len(cubicVarDescs)). target
// is what gVisor's getCwnd computes on an ACK in congestion avoidance and
// grows cwnd toward: W_cubic(t + srtt) = C·(t + srtt − K)³ + WMax with t
// the time since the epoch T, before bounding it below by cwnd. It is
// reported only where gVisor uses it (grows: uses); elsewhere (slow
// start, fast recovery, the TCP-friendly region) it is 0. Note that T is
// the connection's start until the first congestion event (or slow start
// ending by crossing ssthresh), so after a HyStart exit WMax is 0 and the
// curve starts at the connection's start.
func (cv *cubicVars) fill(dst []float64, srtt time.Duration, uses bool) {
	since := cv.sinceEpoch.Seconds()
	target := 0.0
	if uses {
		t := since + srtt.Seconds() - cv.k
		target = cv.c*(t*t*t) + cv.wMax
	}
	dst[0] = target
	dst[1] = cv.wMax
	dst[2] = cv.k
	dst[3] = cv.wEst
	dst[4] = since
	dst[5] = cv.wc
	dst[6] = cv.wLastMax
	for i, v := range dst {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			dst[i] = 0 // keep traces and hashes free of NaN payloads
		}
	}
}

package corpus

import (
	"math"
	"time"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

// DerivedVars are the variables the observer (Watcher) computes from a
// flow's own records, and from the other flows' for share, on every
// subject: properties of a stretch of the trace that one record cannot
// give, which the oracles (package oracle) and a user's conditions read
// like any state variable. They come last in every schema (SchemaOf).
// Their Src is negative: Schema.Observe leaves them to the Watcher.
var DerivedVars = Schema{
	{Name: "reason", Values: []string{"ack", "state", "rto", "idle"}, Src: -1},
	{Name: "timeouts", Src: -2},
	{Name: "last_timeout_rto", Src: -3},
	{Name: "since_progress", Src: -4},
	{Name: "since_reduction", Src: -5},
	{Name: "share", Src: -6},
	{Name: "srtt_min", Src: -7},
	{Name: "reduction_left", Src: -8},
	{Name: "rtt_floor", Src: -9},
}

// DerivedDocs describe DerivedVars, in order, for `actfuzz list`.
var DerivedDocs = []string{
	"why the record was emitted: ack|state|rto|idle (rto: a retransmission timeout fired; idle: the sender shrank cwnd after idle or after an RTO of application-limited sending, RFC 2861 §3)",
	"retransmission timeouts in a row: in one stay in Loss without data delivered (RFC 6298 §5.5's backoff count)",
	"rto (ms) recorded at the previous of those timeouts (0 before the second)",
	"seconds since delivered last grew (0 at the record that delivered), or, if later, since the first record with data in flight after one in open with none (a flow waiting on its application is not waiting on the network)",
	"seconds since the flow last entered a window reduction that reduced (cwr or recovery with ssthresh below prior_cwnd, or loss), before this record; -1 if none, or if that reduction was undone",
	"this flow's delivery rate over the last 10 s over the highest of the active flows' (1 with one flow or before 11 s)",
	"the smallest srtt (ms) the flow has had (0 before its first RTT sample): what the flow's smoothed round trip has been at least; one round trip can take less when per-packet delays vary (random queuing delay), as srtt averages them",
	"packets in flight at the record that entered the reduction since_reduction counts from, less the packets delivered since, at least 0, before this record; -1 with since_reduction: a full acknowledgment of that reduction's recovery point delivers at least them (RFC 6582 §3.2 step 3)",
	"twice the smallest one-way delay p.delay (ms) of the phases in force since the flow's first record (0 without a schedule): no round trip of the flow took less, whatever it queued",
}

// shareWindow is the span over which share compares delivery rates.
const shareWindow = 10

// flowHistory is one flow's memory for the derived variables.
type flowHistory struct {
	started       bool
	delivered     float64
	progressAt    time.Duration
	idle          bool // the last record had nothing in flight in open
	timeouts      float64
	timeoutRTO    float64 // rto at the last timeout of the run
	lastTimeout   float64 // last_timeout_rto as reported
	reductionAt   time.Duration
	reducedTo     uint32  // ssthresh at the record that entered the reduction
	reducedFlight float64 // in_flight at that record
	reducedDeliv  float64 // delivered at that record
	srttMin       time.Duration
	rttFloor      float64 // ms; -1 before the first record with a schedule
	phase         int     // the schedule's phase at the last record
	caState       ccai.CAState
	lastRecord    time.Duration
	deliveredAt   []float64 // delivered at each whole second (bucket k: at k s)
	deliveredPrev float64
}

// derive fills the derived variables of flow f's observation cur (its
// last len(DerivedVars) entries) from record r.
func (w *Watcher) derive(f int, r *observe.Record, cur []float64) {
	h := &w.hist[f]
	d := cur[len(cur)-len(DerivedVars):]
	delivered := float64(r.Delivered)
	if !h.started {
		*h = flowHistory{started: true, delivered: delivered, progressAt: r.Time, caState: r.CAState, reductionAt: -1, rttFloor: -1, deliveredAt: h.deliveredAt[:0]}
	}
	// Buckets of whole seconds passed since the last record hold the
	// delivered count in force then (it is constant between records).
	for k := len(h.deliveredAt); time.Duration(k)*time.Second <= r.Time; k++ {
		h.deliveredAt = append(h.deliveredAt, h.deliveredPrev)
	}
	h.deliveredPrev = delivered
	h.lastRecord = r.Time
	progressed := delivered > h.delivered
	if progressed {
		h.delivered, h.progressAt = delivered, r.Time
	}
	// A flow with nothing in flight in Open has nothing to deliver: it
	// waits on its application (RFC 7661's application-limited period),
	// and what it sends next was sent after that record, at the latest at
	// the next record with data in flight, where the wait for delivery
	// starts (an application writing a segment every 12 s, one of them
	// lost, is not 12 s without progress). In Loss or recovery nothing in
	// flight can mean everything is marked lost: that wait goes on.
	if h.idle && r.InFlight > 0 {
		h.progressAt = max(h.progressAt, r.Time)
	}
	h.idle = r.InFlight == 0 && r.CAState == ccai.StateOpen
	// A run of timeouts ends with progress (an RTT sample may collapse
	// the backoff, RFC 6298 §5.7) or when the flow leaves Loss (an undo
	// may reinitialize the RTO, RFC 4015 §2).
	if progressed || r.CAState != ccai.StateLoss {
		h.timeouts, h.timeoutRTO, h.lastTimeout = 0, 0, 0
	}
	if r.Reason == observe.ReasonRTO {
		h.timeouts++
		h.lastTimeout = h.timeoutRTO
		h.timeoutRTO = float64(r.RTO) / 1e6
	}
	d[0] = float64(r.Reason)
	d[1] = h.timeouts
	d[2] = h.lastTimeout
	d[3] = (r.Time - h.progressAt).Seconds()
	d[4], d[7] = -1, -1
	if h.reductionAt >= 0 {
		d[4] = (r.Time - h.reductionAt).Seconds()
		d[7] = max(h.reducedFlight-(delivered-h.reducedDeliv), 0)
	}
	prev, st := h.caState, r.CAState
	switch {
	// A reduction that reduced: an entry that left ssthresh at
	// prior_cwnd or above (Scalable's ⌊cwnd/8⌋ of a small window, a
	// recovery begun at cwnd 1) takes nothing back, and an undo of it
	// would change nothing one could see.
	case st != prev && (st == ccai.StateCWR || st == ccai.StateRecovery) && prev <= ccai.StateDisorder && r.SSThresh < r.PriorCwnd,
		st == ccai.StateLoss && prev != ccai.StateLoss:
		h.reductionAt = r.Time
	case st <= ccai.StateDisorder && prev >= ccai.StateCWR && (r.Cwnd > r.SSThresh || r.SSThresh > h.reducedTo ||
		prev == ccai.StateLoss && r.Cwnd > 1 && r.Cwnd >= r.PriorCwnd):
		// An undone reduction (Linux's tcp_undo_cwnd_reduction restores
		// cwnd and raises ssthresh back; an undone timeout leaves Loss
		// with cwnd back at prior_cwnd) is no reduction: the next one is
		// the window's first.
		h.reductionAt = -1
	}
	if h.reductionAt == r.Time {
		h.reducedTo = r.SSThresh
		h.reducedFlight, h.reducedDeliv = float64(r.InFlight), delivered
	}
	h.caState = st
	d[5] = w.share(f, r.Time)
	if r.SRTT > 0 && (h.srttMin == 0 || r.SRTT < h.srttMin) {
		h.srttMin = r.SRTT
	}
	d[6] = float64(h.srttMin) / 1e6
	// Every packet of the flow crossed the path under the phases in
	// force since its first record (those between two records
	// included), each way at least their delay.
	if len(w.sched) > 0 {
		if h.rttFloor < 0 {
			h.phase = w.phase
		}
		for k := h.phase; k <= w.phase; k++ {
			if f := 2 * w.sched[k].Env.Delay; h.rttFloor < 0 || f < h.rttFloor {
				h.rttFloor = f
			}
		}
		h.phase = w.phase
	}
	d[8] = max(h.rttFloor, 0)
}

// share is flow f's delivery rate over the last shareWindow seconds over
// the highest of the flows that emitted a record in the last second
// (flows that finished their transfer are no longer compared).
func (w *Watcher) share(f int, now time.Duration) float64 {
	if len(w.hist) < 2 || now < (shareWindow+1)*time.Second {
		return 1
	}
	rate := func(h *flowHistory) float64 {
		k := int(now/time.Second) - shareWindow
		if k < 0 || k >= len(h.deliveredAt) {
			return math.NaN()
		}
		return (h.deliveredPrev - h.deliveredAt[k]) / (now - time.Duration(k)*time.Second).Seconds()
	}
	mine := rate(&w.hist[f])
	best := mine
	for g := range w.hist {
		h := &w.hist[g]
		if g == f || !h.started || now-h.lastRecord > time.Second {
			continue
		}
		if r := rate(h); r > best {
			best = r
		}
	}
	if math.IsNaN(mine) || !(best > 0) {
		return 1
	}
	return mine / best
}

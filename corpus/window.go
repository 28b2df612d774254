package corpus

import (
	"sort"
)

// The window of the last round trip: a condition reads rtt_ago.X, the
// value X had one smoothed RTT before the current record (the record in
// force at time − srtt), and rtt_max.X, the largest value X took at the
// records of the last two srtt (Linux's max_packets_out spans up to two
// round trips: it is reset when snd_una passes the snd_nxt of its last
// reset, tcp_cwnd_validate). They say what one record and prev.X cannot:
// "cwnd grew by more than half in one round trip" (cwnd > 1.5 *
// rtt_ago.cwnd) and "the sender was not cwnd-limited over the last round
// trip" (2 * rtt_max.in_flight < cwnd), the window Linux's
// tcp_is_cwnd_limited and RFC 7661 §4.3 judge over. Before the flow's
// first RTT sample (srtt 0) both are the current value.

// windowPoint is a value and the time (ns) it was recorded.
type windowPoint struct {
	t int64
	v float64
}

// agoWindow keeps the changes of one variable over the last two srtt
// (srtt may grow between records without losing the value one srtt back).
type agoWindow struct {
	pts  []windowPoint
	head int // pts[:head] are older than any lookup can reach
}

func (w *agoWindow) push(t int64, v float64, srttNS int64) {
	if n := len(w.pts); n == w.head || !same(w.pts[n-1].v, v) {
		w.pts = append(w.pts, windowPoint{t, v})
	}
	for w.head+1 < len(w.pts) && w.pts[w.head+1].t <= t-2*srttNS {
		w.head++
	}
	// Compacting only when most points are dead keeps a push O(1)
	// amortised.
	if w.head > 64 && w.head > len(w.pts)/2 {
		w.pts = append(w.pts[:0], w.pts[w.head:]...)
		w.head = 0
	}
}

// at is the value in force at time t: the last point at or before t, or
// the oldest kept.
func (w *agoWindow) at(t int64) float64 {
	live := w.pts[w.head:]
	i := sort.Search(len(live), func(i int) bool { return live[i].t > t })
	if i == 0 {
		return live[0].v
	}
	return live[i-1].v
}

// maxWindow is a monotonic deque: the largest value of the records of the
// last two srtt in O(1) amortised per record.
type maxWindow struct {
	pts  []windowPoint
	head int
}

func (w *maxWindow) push(t int64, v float64, srttNS int64) {
	for len(w.pts) > w.head && w.pts[len(w.pts)-1].v <= v {
		w.pts = w.pts[:len(w.pts)-1]
	}
	w.pts = append(w.pts, windowPoint{t, v})
	// Keep four srtt, answer for two: srtt may double between records
	// and still find the values of its longer window.
	for w.head < len(w.pts)-1 && w.pts[w.head].t < t-4*srttNS {
		w.head++
	}
	if w.head > 1024 && w.head > len(w.pts)/2 {
		w.pts = append(w.pts[:0], w.pts[w.head:]...)
		w.head = 0
	}
}

// max is the largest value of the records since t − 2·srtt. The deque
// decreases from its head: the first point inside the window is its
// largest value.
func (w *maxWindow) max(t int64, srttNS int64) float64 {
	live := w.pts[w.head:]
	return live[sort.Search(len(live)-1, func(i int) bool { return live[i].t >= t-2*srttNS })].v
}

// heldRun follows how long one variable has held a value: held.X is the
// time (seconds) the value X had at the previous record had lasted at this
// record, from the record where X took it. On a record where X changes it
// is the length of the run that just ended (ProbeRTT lasted held.mode when
// prev.mode == "probe_rtt" && mode != "probe_rtt"); on any other, how long
// the current value has held so far. 0 at a simulation's first record.
type heldRun struct {
	start   int64 // ns: the record where the current value began
	last    float64
	started bool
}

// push adds a record at t (ns) with value v and returns held.X.
func (h *heldRun) push(t int64, v float64) float64 {
	if !h.started {
		h.start, h.last, h.started = t, v, true
	}
	held := float64(t-h.start) / 1e9
	if !same(h.last, v) {
		h.start, h.last = t, v
	}
	return held
}

// rttWindows follows the variables a set of conditions reads through
// rtt_ago, rtt_max and held, for one flow.
type rttWindows struct {
	agoIdx, maxIdx, heldIdx []int // schema indices read as rtt_ago.X, rtt_max.X, held.X
	ago                     []agoWindow
	max                     []maxWindow
	held                    []heldRun
	agoVals                 []float64 // by schema index: the current rtt_ago.X
	maxVals                 []float64 // by schema index: the current rtt_max.X
	heldVals                []float64 // by schema index: the current held.X
	// t and srtt (ns) of the last record, and whether agoVals and maxVals
	// are its values yet: the look-ups run only when a condition reads a
	// window at that record (most records stop at a gate before).
	t, srtt  int64
	resolved bool
}

func newRTTWindows(n int, agoIdx, maxIdx, heldIdx []int) *rttWindows {
	return &rttWindows{agoIdx: agoIdx, maxIdx: maxIdx, heldIdx: heldIdx,
		ago: make([]agoWindow, len(agoIdx)), max: make([]maxWindow, len(maxIdx)), held: make([]heldRun, len(heldIdx)),
		agoVals: make([]float64, n), maxVals: make([]float64, n), heldVals: make([]float64, n)}
}

func (w *rttWindows) reset() {
	for i := range w.ago {
		w.ago[i].pts, w.ago[i].head = w.ago[i].pts[:0], 0
	}
	for i := range w.max {
		w.max[i].pts, w.max[i].head = w.max[i].pts[:0], 0
	}
	clear(w.held)
}

// observe adds the record cur at time (seconds) with srtt (ms).
func (w *rttWindows) observe(cur []float64, timeS, srttMS float64) {
	w.t = int64(timeS*1e9 + 0.5)
	w.srtt = int64(srttMS*1e6 + 0.5)
	w.resolved = false
	for k, i := range w.agoIdx {
		w.ago[k].push(w.t, cur[i], w.srtt)
	}
	for k, i := range w.maxIdx {
		w.max[k].push(w.t, cur[i], w.srtt)
	}
	for k, i := range w.heldIdx {
		w.heldVals[i] = w.held[k].push(w.t, cur[i])
	}
}

// resolve sets agoVals and maxVals for the last record observed.
func (w *rttWindows) resolve() {
	if w.resolved {
		return
	}
	w.resolved = true
	for k, i := range w.agoIdx {
		w.agoVals[i] = w.ago[k].at(w.t - w.srtt)
	}
	for k, i := range w.maxIdx {
		w.maxVals[i] = w.max[k].max(w.t, w.srtt)
	}
}

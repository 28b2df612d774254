package corpus

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

// agoTable keeps the records of the last two srtt (srtt may grow between
// records without losing the value one srtt back) for the variables read
// as rtt_ago.X: one time per record and the variables' values at it, so
// that a record costs one row and one look-up serves them all. Rows are
// kept in a ring, which a record writes without allocating or moving
// anything (rows head to tail, counted from the first record).
type agoTable struct {
	k          int       // values per row: len(rttWindows.agoIdx)
	t          []int64   // ring of times, a power of two long
	vals       []float64 // ring of rows, k values each
	head, tail int       // rows before head are older than any look-up can reach
	at         int       // the row of the last look-up, where the next starts
}

// push adds a record at t with the values cur[idx], and drops the rows
// before the last at or before from (t − 2·srtt): the one whose values
// were in force then.
func (a *agoTable) push(t, from int64, cur []float64, idx []int) {
	if a.tail-a.head == len(a.t) {
		a.grow()
	}
	m := len(a.t) - 1
	r := a.tail & m
	a.t[r] = t
	row := a.vals[r*a.k : r*a.k+a.k]
	for j, i := range idx {
		row[j] = cur[i]
	}
	a.tail++
	for a.head+1 < a.tail && a.t[(a.head+1)&m] <= from {
		a.head++
	}
}

// grow doubles the ring, keeping its rows.
func (a *agoTable) grow() {
	n := max(64, 2*len(a.t))
	t, vals := make([]int64, n), make([]float64, n*a.k)
	for r := a.head; r < a.tail; r++ {
		o, p := r&(len(a.t)-1), r&(n-1)
		t[p] = a.t[o]
		copy(vals[p*a.k:p*a.k+a.k], a.vals[o*a.k:o*a.k+a.k])
	}
	a.t, a.vals = t, vals
}

// row is the record in force at time t: the last at or before t, or the
// oldest kept. The look-up walks from the previous one's row, which is
// close: t is one srtt before the latest record, and records come in time
// order.
func (a *agoTable) row(t int64) int {
	m := len(a.t) - 1
	r := min(max(a.at, a.head), a.tail-1)
	for r+1 < a.tail && a.t[(r+1)&m] <= t {
		r++
	}
	for r > a.head && a.t[r&m] > t {
		r--
	}
	a.at = r
	return r
}

// value is the j-th value of row r.
func (a *agoTable) value(r, j int) float64 {
	return a.vals[(r&(len(a.t)-1))*a.k+j]
}

func (a *agoTable) reset() {
	a.head, a.tail, a.at = 0, 0, 0
}

// maxWindow is a monotonic deque: the largest value of the records of the
// last two srtt in O(1) amortised per record. Its points are kept in a
// ring, like agoTable's rows.
type maxWindow struct {
	pts        []windowPoint // a power of two long
	head, tail int
	at         int // the point of the last look-up, where the next starts
}

func (w *maxWindow) push(t int64, v float64, srttNS int64) {
	m := len(w.pts) - 1
	for w.tail > w.head && w.pts[(w.tail-1)&m].v <= v {
		w.tail--
	}
	if w.tail-w.head == len(w.pts) {
		w.grow()
		m = len(w.pts) - 1
	}
	w.pts[w.tail&m] = windowPoint{t, v}
	w.tail++
	// Keep four srtt, answer for two: srtt may double between records
	// and still find the values of its longer window.
	for w.head < w.tail-1 && w.pts[w.head&m].t < t-4*srttNS {
		w.head++
	}
}

// grow doubles the ring, keeping its points.
func (w *maxWindow) grow() {
	n := max(16, 2*len(w.pts))
	pts := make([]windowPoint, n)
	for r := w.head; r < w.tail; r++ {
		pts[r&(n-1)] = w.pts[r&(len(w.pts)-1)]
	}
	w.pts = pts
}

// max is the largest value of the records since t − 2·srtt. The deque
// decreases from its head: the first point inside the window (the last
// if none is) is its largest value. The look-up walks from the previous
// one's point.
func (w *maxWindow) max(t int64, srttNS int64) float64 {
	m := len(w.pts) - 1
	from := t - 2*srttNS
	last := w.tail - 1
	i := min(max(w.at, w.head), last)
	for i > w.head && w.pts[(i-1)&m].t >= from {
		i--
	}
	for i < last && w.pts[i&m].t < from {
		i++
	}
	w.at = i
	return w.pts[i&m].v
}

func (w *maxWindow) reset() {
	w.head, w.tail, w.at = 0, 0, 0
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
	ago                     agoTable
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
		ago: agoTable{k: len(agoIdx)}, max: make([]maxWindow, len(maxIdx)), held: make([]heldRun, len(heldIdx)),
		agoVals: make([]float64, n), maxVals: make([]float64, n), heldVals: make([]float64, n)}
}

func (w *rttWindows) reset() {
	w.ago.reset()
	for i := range w.max {
		w.max[i].reset()
	}
	clear(w.held)
}

// observe adds the record cur at time (seconds) with srtt (ms).
func (w *rttWindows) observe(cur []float64, timeS, srttMS float64) {
	w.t = int64(timeS*1e9 + 0.5)
	w.srtt = int64(srttMS*1e6 + 0.5)
	w.resolved = false
	if len(w.agoIdx) > 0 {
		w.ago.push(w.t, w.t-2*w.srtt, cur, w.agoIdx)
	}
	for k, i := range w.maxIdx {
		w.max[k].push(w.t, cur[i], w.srtt)
	}
	for k, i := range w.heldIdx {
		w.heldVals[i] = w.held[k].push(w.t, cur[i])
	}
}

// resolve sets agoVals and maxVals for the last record observed, if they
// are not yet: inlined where a closure tree reads them.
func (w *rttWindows) resolve() {
	if !w.resolved {
		w.lookUp()
	}
}

func (w *rttWindows) lookUp() {
	w.resolved = true
	if len(w.agoIdx) > 0 {
		r := w.ago.row(w.t - w.srtt)
		for k, i := range w.agoIdx {
			w.agoVals[i] = w.ago.value(r, k)
		}
	}
	for k, i := range w.maxIdx {
		w.maxVals[i] = w.max[k].max(w.t, w.srtt)
	}
}

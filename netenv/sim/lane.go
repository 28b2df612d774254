package sim

import "math"

// parkedIndex is the scheduler position of an event waiting in its lane
// behind the lane's head: queued, but not in the heap.
const parkedIndex = math.MaxInt32

// lane is a FIFO of one source's events in (At, Seq) order. Only its
// first event is in the heap; the others are parked here. A link with a
// hundred packets in flight then costs the heap one entry instead of a
// hundred, and a delivery costs O(1) in the lane plus one sift of a much
// smaller heap. The order of events is exactly the heap's: every parked
// event comes after its lane's head, which is in the heap.
type lane struct {
	buf  []*Event // ring
	head int
	n    int
}

func (l *lane) at(i int) *Event { return l.buf[(l.head+i)%len(l.buf)] }

func (l *lane) pushBack(e *Event) {
	if l.n == len(l.buf) {
		nb := make([]*Event, max(16, 2*len(l.buf)))
		for i := 0; i < l.n; i++ {
			nb[i] = l.at(i)
		}
		l.buf, l.head = nb, 0
	}
	l.buf[(l.head+l.n)%len(l.buf)] = e
	l.n++
}

func (l *lane) popFront() {
	l.buf[l.head] = nil
	l.head++
	if l.head == len(l.buf) {
		l.head = 0
	}
	l.n--
}

// laneInsert queues e in its lane and reports whether it did. An event
// earlier than its lane's last one (a random queuing delay reordered two
// deliveries of a link) is not: it goes into the heap on its own, so that
// the lane stays in order.
func (h *Heap) laneInsert(e *Event) bool {
	for int(e.Lane) > len(h.lanes) {
		h.lanes = append(h.lanes, lane{})
	}
	l := &h.lanes[e.Lane-1]
	if l.n == 0 {
		l.pushBack(e)
		h.push(e)
		return true
	}
	if before(e, l.at(l.n-1)) {
		return false
	}
	l.pushBack(e)
	e.index = parkedIndex
	h.parked++
	return true
}

// laneAdvance is called when e leaves the heap. If e was the head of its
// lane, the lane's next event (if any) is unparked and returned: the
// caller puts it into the heap.
func (h *Heap) laneAdvance(e *Event) *Event {
	if int(e.Lane) > len(h.lanes) {
		return nil
	}
	l := &h.lanes[e.Lane-1]
	if l.n == 0 || l.buf[l.head] != e {
		return nil
	}
	l.popFront()
	if l.n == 0 {
		return nil
	}
	h.parked--
	return l.buf[l.head]
}

// unpark removes a parked event from its lane (a cancellation; links never
// cancel a delivery, so this is the slow path).
func (h *Heap) unpark(e *Event) {
	l := &h.lanes[e.Lane-1]
	for i := 1; i < l.n; i++ {
		if l.at(i) != e {
			continue
		}
		for ; i < l.n-1; i++ {
			l.buf[(l.head+i)%len(l.buf)] = l.at(i + 1)
		}
		l.buf[(l.head+l.n-1)%len(l.buf)] = nil
		l.n--
		h.parked--
		e.index = -1
		return
	}
}

package sim

import "time"

// Scheduler is the pending-event queue. It owns every timestamp comparison
// of a run: Insert and PopMin decide event order, and nothing else in the
// simulator compares times.
type Scheduler interface {
	// Insert queues an unqueued event. Its At and Seq are set.
	Insert(e *Event)
	// Remove takes a queued event out (a cancelled timer).
	Remove(e *Event)
	// PopMin removes and returns the earliest event (ties: lowest Seq), or
	// nil when empty.
	PopMin() *Event
	// Len is the number of queued events.
	Len() int
}

// Heap is the default Scheduler: a binary min-heap ordered by (At, Seq),
// with each event's position kept in the event so that Remove never
// allocates. Each entry carries the key its event was inserted with, which
// lets two frequent patterns cost no sifting at all:
//
//   - a timer moved later (Remove then Insert with a later key: the
//     retransmission timer on almost every ACK, RFC 6298 §5.3) keeps its
//     entry; PopMin re-files it under its new key when the old one comes
//     up;
//   - a cancelled timer (Remove: the delayed-ACK timer on every second
//     segment, RFC 5681 §4.2) stays as a dead entry, to be dropped when it
//     comes up, unless it is inserted again first.
//
// Neither changes the order of events: an entry's old key precedes its
// event's new one, and a dead entry is never returned. Events of a FIFO
// lane (Event.Lane) wait in their lane, only its earliest event being in
// the heap (lane.go); they are removed for real.
type Heap struct {
	items []heapEntry
	lanes []lane
	// parked counts events waiting in a lane behind its head; dead
	// counts cancelled entries still in items.
	parked, dead int
}

// heapEntry is a queued event under the key it was filed with.
type heapEntry struct {
	at  time.Duration
	seq uint64
	e   *Event
}

// NewHeap returns an empty heap with room for n events.
func NewHeap(n int) *Heap { return &Heap{items: make([]heapEntry, 0, n)} }

// before and less are the only timestamp comparisons of the default
// scheduler.
func before(a, b *Event) bool {
	if a.At != b.At {
		return a.At < b.At
	}
	return a.Seq < b.Seq
}

func less(a, b *heapEntry) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

func (h *Heap) Len() int { return len(h.items) + h.parked - h.dead }

func (h *Heap) Insert(e *Event) {
	if e.cancelled {
		// Its dead entry is still here: revive it under the new key.
		e.cancelled = false
		h.dead--
		en := &h.items[e.index]
		if k := (heapEntry{e.At, e.Seq, e}); !less(&k, en) {
			return // later: PopMin re-files it when the old key comes up
		}
		en.at, en.seq = e.At, e.Seq
		h.up(int(e.index))
		return
	}
	if e.Lane > 0 && h.laneInsert(e) {
		return
	}
	h.push(e)
}

func (h *Heap) push(e *Event) {
	i := len(h.items)
	h.items = append(h.items, heapEntry{e.At, e.Seq, e})
	h.up(i)
}

func (h *Heap) Remove(e *Event) {
	if e.cancelled {
		return
	}
	if e.index == parkedIndex {
		h.unpark(e)
		return
	}
	i := int(e.index)
	if i < 0 || i >= len(h.items) || h.items[i].e != e {
		return
	}
	if e.Lane == 0 {
		e.cancelled = true
		h.dead++
		return
	}
	h.remove(i)
	if next := h.laneAdvance(e); next != nil {
		h.push(next)
	}
}

// remove takes items[i] out of the heap.
func (h *Heap) remove(i int) {
	e := h.items[i].e
	last := len(h.items) - 1
	if i != last {
		h.items[i] = h.items[last]
		h.items[i].e.index = int32(i)
	}
	h.items[last] = heapEntry{}
	h.items = h.items[:last]
	if i != last {
		if !h.down(i) {
			h.up(i)
		}
	}
	e.index = -1
}

func (h *Heap) PopMin() *Event {
	for len(h.items) > 0 {
		root := &h.items[0]
		e := root.e
		switch {
		case e.cancelled:
			e.cancelled = false
			h.dead--
			h.remove(0)
			continue
		case root.at != e.At || root.seq != e.Seq:
			// Moved later while queued: file it under its key now.
			root.at, root.seq = e.At, e.Seq
			h.down(0)
			continue
		}
		if e.Lane > 0 {
			if next := h.laneAdvance(e); next != nil {
				// The lane's next event replaces its head at the
				// root: one sift instead of a removal and an
				// insertion.
				*root = heapEntry{next.At, next.Seq, next}
				h.down(0)
				e.index = -1
				return e
			}
		}
		h.remove(0)
		return e
	}
	return nil
}

func (h *Heap) up(i int) {
	items := h.items
	x := items[i]
	for i > 0 {
		p := (i - 1) / 2
		if !less(&x, &items[p]) {
			break
		}
		items[i] = items[p]
		items[i].e.index = int32(i)
		i = p
	}
	items[i] = x
	x.e.index = int32(i)
}

// down sifts items[i] down and reports whether it moved.
func (h *Heap) down(i0 int) bool {
	items := h.items
	n := len(items)
	i := i0
	x := items[i]
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n && less(&items[r], &items[l]) {
			c = r
		}
		if !less(&items[c], &x) {
			break
		}
		items[i] = items[c]
		items[i].e.index = int32(i)
		i = c
	}
	items[i] = x
	x.e.index = int32(i)
	return i > i0
}

package sim

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
// with each event's position kept in the event so that Remove is
// O(log n) and never allocates. Events of a FIFO lane (Event.Lane) wait
// in their lane, only its earliest event being in the heap (lane.go).
type Heap struct {
	items []*Event
	lanes []lane
	// parked counts events waiting in a lane behind its head.
	parked int
}

// NewHeap returns an empty heap with room for n events.
func NewHeap(n int) *Heap { return &Heap{items: make([]*Event, 0, n)} }

// before is the only timestamp comparison of the default scheduler.
func before(a, b *Event) bool {
	if a.At != b.At {
		return a.At < b.At
	}
	return a.Seq < b.Seq
}

func (h *Heap) Len() int { return len(h.items) + h.parked }

func (h *Heap) Insert(e *Event) {
	if e.Lane > 0 && h.laneInsert(e) {
		return
	}
	h.push(e)
}

func (h *Heap) push(e *Event) {
	e.index = int32(len(h.items))
	h.items = append(h.items, e)
	h.up(int(e.index))
}

func (h *Heap) Remove(e *Event) {
	if e.index == parkedIndex {
		h.unpark(e)
		return
	}
	i := int(e.index)
	if i < 0 || i >= len(h.items) || h.items[i] != e {
		return
	}
	h.remove(i)
	if e.Lane > 0 {
		if next := h.laneAdvance(e); next != nil {
			h.push(next)
		}
	}
}

// remove takes items[i] out of the heap.
func (h *Heap) remove(i int) {
	e := h.items[i]
	last := len(h.items) - 1
	if i != last {
		h.items[i] = h.items[last]
		h.items[i].index = int32(i)
	}
	h.items[last] = nil
	h.items = h.items[:last]
	if i != last {
		if !h.down(i) {
			h.up(i)
		}
	}
	e.index = -1
}

func (h *Heap) PopMin() *Event {
	n := len(h.items)
	if n == 0 {
		return nil
	}
	e := h.items[0]
	last := n - 1
	if e.Lane > 0 {
		if next := h.laneAdvance(e); next != nil {
			// The lane's next event replaces its head at the root:
			// one sift instead of a removal and an insertion.
			next.index = 0
			h.items[0] = next
			h.down(0)
			e.index = -1
			return e
		}
	}
	h.items[0] = h.items[last]
	h.items[0].index = 0
	h.items[last] = nil
	h.items = h.items[:last]
	if last > 0 {
		h.down(0)
	}
	e.index = -1
	return e
}

func (h *Heap) up(i int) {
	items := h.items
	e := items[i]
	for i > 0 {
		p := (i - 1) / 2
		if !before(e, items[p]) {
			break
		}
		items[i] = items[p]
		items[i].index = int32(i)
		i = p
	}
	items[i] = e
	e.index = int32(i)
}

// down sifts items[i] down and reports whether it moved.
func (h *Heap) down(i0 int) bool {
	items := h.items
	n := len(items)
	i := i0
	e := items[i]
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n && before(items[r], items[l]) {
			c = r
		}
		if !before(items[c], e) {
			break
		}
		items[i] = items[c]
		items[i].index = int32(i)
		i = c
	}
	items[i] = e
	e.index = int32(i)
	return i > i0
}

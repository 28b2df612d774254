package symbolic

import (
	"fmt"

	"github.com/actfuzz/actfuzz/netenv/sim"
)

// sched is the symbolic scheduler. Its lists keep events sorted by Before
// with linear insertion (pseudocode 3), so that it makes the comparisons
// the paper's simulator makes, and every comparison of timestamps that differ
// by a non-constant expression goes through the path, which forks.
//
// Ties between equal timestamps are broken as the simulator's heap breaks
// them, by insertion order (see genrec), under every reduction setting, so
// that they all simulate exactly what an ordinary run simulates.
//
// A prefix snapshot (prefix.go) saves and restores it with the run; the
// path, the interned vectors and the layout are the explorer's, shared.
type sched struct {
	p   *path `snapshot:"shared"` // set for every run
	red Reductions
	vt  *vecTable `snapshot:"shared"` // interning only grows
	lay *Layout   `snapshot:"shared"` // immutable

	hasCur    bool
	curVec    int32
	curNode   int32   // node of the running event
	curRec    *genrec // record of the running event
	setupKids uint32
	recs      arena

	slab  []*entry
	free  []int32
	queue int

	endEv *sim.Event
	// lists: one (global) list, or one per model node plus the control
	// list (index nodes) under I.
	lists  []elist
	nodes  int
	ctrl   int
	arrive [][]int32 // arrive[i][j]: arrivals from j pending at node i
	closed []bool    // nodes that can never send again (I)

	cmps    uint64 // every Before (concrete or symbolic)
	inserts uint64

	// State hashing (H).
	src   sim.StateSource
	taken uint64 // events handed to the simulator
	hash  sim.StateHash

	// prefix is the number of events executed before the one whose
	// handler queued the first event with an uncertain delay: up to there
	// every run of the window is the same (prefix.go). sawUncertain: it
	// is known.
	prefix       uint64
	sawUncertain bool

	// RTT-dependent timers (rtt.go).
	curAt         int64       // the running event's time
	rtt           []rttMirror // per flow
	arm           armed       // the timer ArmRTO announced
	marks         []timeMark  // forms of the instants handed out
	marksUnsorted bool
	anyVec        bool   // a mark has a non-zero vector
	rttConcrete   uint64 // RTT forms concretized
	rttMismatch   uint64 // forms whose value disagreed with the sender's (a bug)

	// Timers at an absolute time (abstime.go).
	clocks []clockForms // per flow
}

func newSched(p *path, red Reductions, vt *vecTable, lay *Layout) *sched {
	s := &sched{p: p, red: red, vt: vt, lay: lay, marks: []timeMark{{}}}
	if red.Coc {
		s.red.Cc = true
	}
	if red.I {
		s.nodes = lay.Nodes
		s.ctrl = lay.Nodes
		s.lists = make([]elist, lay.Nodes+1)
		s.arrive = make([][]int32, lay.Nodes)
		for i := range s.arrive {
			s.arrive[i] = make([]int32, lay.Nodes)
		}
	} else {
		s.lists = make([]elist, 1)
	}
	return s
}

// reset prepares a used scheduler for another run, keeping its memory.
func (s *sched) reset(p *path) {
	s.p = p
	s.hasCur, s.curVec, s.curNode, s.curRec, s.setupKids = false, 0, 0, nil, 0
	s.recs.reset()
	s.free = s.free[:0]
	for i := len(s.slab) - 1; i >= 0; i-- {
		e := s.slab[i]
		e.ev, e.owner = nil, nil
		clear(e.waiting)
		e.waiting = e.waiting[:0]
		s.free = append(s.free, int32(i))
	}
	s.queue = 0
	s.endEv = nil
	for i := range s.lists {
		s.lists[i].reset()
	}
	for i := range s.arrive {
		clear(s.arrive[i])
	}
	clear(s.closed)
	s.cmps, s.inserts = 0, 0
	s.src, s.taken = nil, 0
	s.prefix, s.sawUncertain = 0, false
	s.curAt = 0
	s.rtt = s.rtt[:0]
	s.clocks = s.clocks[:0]
	s.arm = armed{}
	s.marks = append(s.marks[:0], timeMark{}) // setup runs at time 0
	s.marksUnsorted, s.anyVec = false, false
	s.rttConcrete, s.rttMismatch = 0, 0
}

// place sets the node of an entry's event (through its component);
// control events get the control list.
func (s *sched) place(e *entry, ev *sim.Event) {
	if ev.Node == sim.ControlNode {
		e.dst = int32(s.lay.Nodes)
		return
	}
	c := s.lay.CompOf(ev)
	e.dst = int32(s.lay.NodeOf[c])
}

func (s *sched) alloc() *entry {
	var e *entry
	if k := len(s.free); k > 0 {
		slot := s.free[k-1]
		s.free = s.free[:k-1]
		e = s.slab[slot]
		w := e.waiting[:0]
		*e = entry{slot: slot, waiting: w}
	} else {
		e = &entry{slot: int32(len(s.slab))}
		s.slab = append(s.slab, e)
	}
	e.list, e.counted = inNone, -1
	return e
}

func (s *sched) release(e *entry) {
	e.ev, e.owner = nil, nil
	clear(e.waiting)
	e.waiting = e.waiting[:0]
	s.free = append(s.free, e.slot)
}

// Len is the number of queued events.
func (s *sched) Len() int { return s.queue }

// Insert queues an event; its symbolic timestamp is that of the running
// event plus the concrete offset, plus d_i when the link hook delayed it.
func (s *sched) Insert(ev *sim.Event) {
	e := s.alloc()
	e.ev = ev
	e.at = int64(ev.At)
	gen := int32(-1)
	r := s.recs.new()
	r.seq, r.I = ev.Seq, s.red.I
	if s.hasCur {
		e.vec = s.curVec
		gen = s.curNode
		r.gen, r.idx = s.curRec, s.curRec.kids
		s.curRec.kids++
	} else {
		r.idx = s.setupKids
		s.setupKids++
	}
	if s.arm.ev == ev {
		// The retransmission timer, RTO after now: its offset is a form
		// too (rtt.go). Or a timer at an absolute time, whose form is
		// its own (abstime.go).
		base := e.vec
		if s.arm.abs {
			base = 0
		}
		v, ok := s.vt.addVec(base, &s.arm.a)
		switch {
		case int64(ev.At) != s.arm.at:
			s.rttMismatch++ // not the timer announced
			s.concretize()
		case !ok:
			s.concretize()
		default:
			e.vec = v
		}
		s.arm = armed{}
	}
	if u := int(ev.Uncertain); u > 0 && u <= s.p.n {
		e.vec = s.vt.addUnit(e.vec, u-1)
		if !s.sawUncertain {
			s.sawUncertain = true
			if s.hasCur {
				s.prefix = s.taken - 1 // the running event is the taken-th
			}
		}
	}
	r.at, r.vec = e.at, e.vec
	e.rec = r
	ev.Aux = e.slot
	ev.SetIndex(0)
	s.queue++
	s.inserts++
	if s.endEv == nil && !s.hasCur && ev.Kind == sim.KindControl && ev.Node == sim.ControlNode && s.inserts == 1 {
		// sim.New inserts its end event before anything else.
		s.endEv = ev
		e.flags |= fEnd
		if s.red.I {
			at, rec := e.at, e.rec
			s.release(e)
			for i := range s.lists {
				m := s.alloc()
				m.at, m.rec, m.flags = at, rec, fEnd
				m.list = int32(i)
				s.lists[i].insertAt(0, m)
			}
			return
		}
		e.list = 0
		s.lists[0].insertAt(0, e)
		return
	}
	s.place(e, ev)
	if ev.Kind == sim.KindPacket {
		e.flags |= fArrival
		e.src = gen
		if gen < 0 || int(gen) >= s.nodes {
			e.src = e.dst
		}
	}
	if s.red.Coc && ev.Kind == sim.KindTimer && s.lay.Timeout != nil && s.lay.Timeout(ev) {
		e.flags |= fTimeout
	}
	if !s.red.I {
		s.insertList(0, e, 0)
		return
	}
	target := e.dst
	if e.flags&fArrival != 0 && e.src >= 0 && e.src < int32(s.nodes) {
		target = e.src // pseudocode 8 line 36: into the source's list first
	}
	s.insertList(int(target), e, 0)
}

// before is SEIB's Before: pseudocode 3, or 4 with S.
func (s *sched) before(a, b *entry) bool {
	s.cmps++
	if s.red.S {
		if s.keyLessS(a, b) {
			return s.cond(condLE, a.at, a.vec, b.at, b.vec)
		}
		return s.cond(condLT, a.at, a.vec, b.at, b.vec)
	}
	if s.cond(condLT, a.at, a.vec, b.at, b.vec) {
		return true
	}
	// Here t_a ≥ t_b, so t_a ≤ t_b means t_a = t_b.
	if s.cond(condLE, a.at, a.vec, b.at, b.vec) {
		return s.keyLess(a.rec, b.rec)
	}
	return false
}

// keyLessS is the key test of pseudocode 4. Without I the key is known
// (Seq). Under I it may take comparisons of generators, which are needed
// only when the two timestamps can be equal: otherwise both branches of
// pseudocode 4 give the same answer, so any key will do.
func (s *sched) keyLessS(a, b *entry) bool {
	if !s.red.I || a.vec == b.vec && a.at != b.at {
		return concKeyLess(a.rec, b.rec)
	}
	if a.vec != b.vec && !s.canTie(a, b) {
		return concKeyLess(a.rec, b.rec)
	}
	return s.keyLess(a.rec, b.rec)
}

// canTie reports whether t_a = t_b is feasible on this path.
func (s *sched) canTie(a, b *entry) bool {
	va, vb := &s.vt.vecs[a.vec], &s.vt.vecs[b.vec]
	var lin [MaxVars]int32
	c := a.at - b.at
	for i := 0; i < s.p.n; i++ {
		lin[i] = va[i] - vb[i]
		c -= int64(lin[i]) * s.p.wns[i]
	}
	return s.p.canBeZero(&lin, c)
}

// keyLess is the insertion order of two events on this path: Seq without
// I; under I the order of their generators (Before, which may fork), then
// call order.
func (s *sched) keyLess(a, b *genrec) bool {
	if !s.red.I {
		return a.seq < b.seq
	}
	for a != b {
		if a.gen == b.gen {
			return a.idx < b.idx
		}
		if a.gen == nil || b.gen == nil {
			return a.gen == nil
		}
		a, b = a.gen, b.gen
		if s.cond(condLT, a.at, a.vec, b.at, b.vec) {
			return true
		}
		if !s.cond(condLE, a.at, a.vec, b.at, b.vec) {
			return false
		}
	}
	return false
}

func (s *sched) cond(kind uint8, aAt int64, aVec int32, bAt int64, bVec int32) bool {
	d := aAt - bAt
	out := d < 0
	if kind == condLE {
		out = d <= 0
	}
	if aVec == bVec {
		return out
	}
	va, vb := &s.vt.vecs[aVec], &s.vt.vecs[bVec]
	var lin [MaxVars]int32
	c := d
	for i := 0; i < s.p.n; i++ {
		lin[i] = va[i] - vb[i]
		c -= int64(lin[i]) * s.p.wns[i]
	}
	return s.p.decide(kind, &lin, c, out)
}

// insertList is InsertEvent of pseudocodes 3, 5 and 7 on list l from index
// start: compare e with list[start], list[start+1], … and
//   - (7) at an outstanding timeout other than the head, defer e to its
//     waiting list;
//   - insert e before the first entry it is Before;
//   - (5) discard e when it is not Before the end event.
//
// The list is sorted by the witness's order, and every decision agrees with
// that order, so the scan stops where a binary search says; only the
// comparisons that may fork (with entries whose vector differs from e's)
// are made one by one, in list order, exactly as the linear scan makes them.
func (s *sched) insertList(l int, e *entry, start int) {
	L := &s.lists[l]
	stop := L.search(e, start) // first entry e is Before
	kind := 0                  // 0: insert at stop; 1: defer to timer at stop; 2: discard at end marker at stop
	if s.red.Coc && start == 0 && !L.empty() && L.head0().flags&fTimeout != 0 && len(L.head0().waiting) > 0 {
		// The head is an outstanding timeout that already has a waiting
		// list: defer e too. Pseudocode 7 compares with the head
		// (line 23's k ≠ 0), but then e can go before the head without
		// being compared with its waiting events, and run before an
		// earlier one of them; the proof of its Theorem 7 needs every
		// event before a timeout to precede its waiting events.
		stop, kind = 0, 1
	} else if s.red.Coc && len(L.timers) > 0 {
		from := max(start, 1)
		for _, t := range L.timers {
			k := L.index(t)
			if k >= from {
				if k <= stop {
					stop, kind = k, 1
				}
				break
			}
		}
	}
	if s.red.Ce && kind == 0 && stop == L.len() && stop > start && L.at(stop-1).flags&fEnd != 0 {
		// Under Ce nothing is kept beyond the end, so the end marker is
		// the last entry: e is beyond the end when it goes after it.
		stop, kind = stop-1, 2
	}
	// The entries start … stop−1 are not Before-e: make the comparisons
	// that may fork, in order.
	made := uint64(0)
	if e.vec == 0 {
		for _, o := range L.sym {
			k := L.index(o)
			if k < start {
				continue
			}
			if k >= stop {
				break
			}
			made++
			if s.before(e, o) {
				panic("symbolic: a decision disagrees with the witness order")
			}
		}
	} else {
		for k := start; k < stop; k++ {
			o := L.at(k)
			if o.vec == e.vec {
				continue
			}
			made++
			if s.before(e, o) {
				panic("symbolic: a decision disagrees with the witness order")
			}
		}
	}
	s.cmps += uint64(stop-start) - made
	switch kind {
	case 1:
		// Pseudocode 7 line 23: delay the comparison with an
		// outstanding timeout.
		o := L.at(stop)
		o.waiting = append(o.waiting, e)
		e.owner = o
		e.list = inWaiting
		s.count(e, l)
		return
	case 2:
		// Pseudocode 5 line 6: a beyond-the-end event. It stays
		// "queued" for the simulator (so that Cancel and Queued
		// behave) but is never compared again.
		if s.before(e, L.at(stop)) {
			panic("symbolic: a decision disagrees with the witness order")
		}
		e.list = inDiscarded
		return
	}
	if stop < L.len() && !s.before(e, L.at(stop)) {
		panic("symbolic: a decision disagrees with the witness order")
	}
	L.insertAt(stop, e)
	e.list = int32(l)
	s.count(e, l)
}

// count adds a packet arrival to the arrival counts of node l (I).
func (s *sched) count(e *entry, l int) {
	if !s.red.I || e.flags&fArrival == 0 || l >= s.nodes || int32(l) != e.dst || e.src < 0 || e.src == e.dst || int(e.src) >= s.nodes {
		return
	}
	s.arrive[l][e.src]++
	e.counted = int32(l)
}

func (s *sched) uncount(e *entry) {
	if e.counted >= 0 {
		s.arrive[e.counted][e.src]--
		e.counted = -1
	}
}

// Remove cancels a queued event.
func (s *sched) Remove(ev *sim.Event) {
	if ev.Index() < 0 || int(ev.Aux) >= len(s.slab) {
		return
	}
	e := s.slab[ev.Aux]
	if e.ev != ev {
		return
	}
	ev.SetIndex(-1)
	s.queue--
	switch {
	case e.list == inDiscarded:
	case e.list == inWaiting:
		o := e.owner
		for i, w := range o.waiting {
			if w == e {
				o.waiting = append(o.waiting[:i], o.waiting[i+1:]...)
				break
			}
		}
		s.uncount(e)
	case e.list >= 0:
		l := int(e.list)
		L := &s.lists[l]
		j := L.index(e)
		s.uncount(e)
		if !s.red.Cc {
			// Original: the cancelled timer stays in the list, flagged,
			// until it reaches the front (ns-3's EventId::Cancel).
			g := s.alloc()
			g.at, g.vec, g.rec, g.flags = e.at, e.vec, e.rec, fGhost
			g.list, g.dst = int32(l), e.dst
			L.replace(j, g)
			break
		}
		L.removeAt(j)
		if len(e.waiting) > 0 {
			// Pseudocode 7 line 18: the waiting events were compared
			// with everything before the timer already.
			tmp := e.waiting
			e.waiting = nil
			for _, w := range tmp {
				s.uncount(w)
				w.owner = nil
				s.insertList(l, w, j)
			}
			clear(tmp)
			e.waiting = tmp[:0]
		}
	}
	s.release(e)
}

// checkWaiting (tests) checks that no deferred event precedes the event
// about to run.
func (s *sched) checkWaiting(h *entry) {
	for l := range s.lists {
		L := &s.lists[l]
		for k := 0; k < L.len(); k++ {
			for _, w := range L.at(k).waiting {
				if concBefore(w, h) {
					panic(fmt.Sprintf("symbolic: deferred event at %d precedes running event at %d", w.at, h.at))
				}
			}
		}
	}
}

// flush re-inserts the waiting list of the head of list l (pseudocode 7,
// FindEvent case 1).
func (s *sched) flush(l int) {
	h := s.lists[l].head0()
	tmp := h.waiting
	h.waiting = nil
	for _, w := range tmp {
		s.uncount(w)
		w.owner = nil
		s.insertList(l, w, 0)
	}
	// A flushed event that went ahead of h may have deferred later ones
	// into h's waiting list again (pseudocode 7 allows it).
	if len(h.waiting) == 0 {
		clear(tmp)
		h.waiting = tmp[:0]
	}
}

// needsFlush: the head of list l is an outstanding timeout with a waiting
// list.
func (s *sched) needsFlush(l int) bool {
	L := &s.lists[l]
	if !s.red.Coc || L.empty() {
		return false
	}
	h := L.head0()
	return h.flags&fTimeout != 0 && len(h.waiting) > 0
}

func (s *sched) popHead(l int) *entry {
	h := s.lists[l].removeAt(0)
	s.uncount(h)
	h.list = inNone
	return h
}

// take hands an entry to the simulator and makes it the running event.
func (s *sched) take(h *entry) *sim.Event {
	if debugCheck {
		s.checkWaiting(h)
	}
	ev := h.ev
	s.hasCur = true
	s.curVec = h.vec
	s.curAt = h.at
	s.noteTime(h.at, h.vec)
	s.curNode, s.curRec = h.dst, h.rec
	ev.SetIndex(-1)
	s.queue--
	s.release(h)
	s.taken++
	return ev
}

func (s *sched) takeEnd() *sim.Event {
	if s.endEv == nil {
		return nil
	}
	s.hasCur = false
	s.endEv.SetIndex(-1)
	s.queue--
	return s.endEv
}

// PopMin returns the next event to execute.
func (s *sched) PopMin() *sim.Event {
	if s.red.I {
		return s.popI()
	}
	if s.red.H && s.src != nil && s.p.merge(s) {
		return nil // an earlier run covers the rest: end this one
	}
	for {
		if s.lists[0].empty() {
			return nil
		}
		if s.needsFlush(0) {
			s.flush(0)
		}
		h := s.popHead(0)
		switch {
		case h.flags&fGhost != 0:
			s.release(h)
			continue
		case h.flags&fEnd != 0:
			s.release(h)
			return s.takeEnd()
		}
		return s.take(h)
	}
}

var _ sim.Scheduler = (*sched)(nil)

package symbolic

import "github.com/actfuzz/actfuzz/netenv/sim"

// popI is FindEvent of pseudocode 8 (with 7's waiting lists under Coc):
// local synchronization, then global deadlock recovery.
func (s *sched) popI() *sim.Event {
	for {
		if e := s.localSync(); e != nil {
			return e
		}
		e, again := s.recover()
		if !again {
			return e
		}
	}
}

// countsSafe: node i has a pending arrival from each of its in-neighbours
// that can still send.
func (s *sched) countsSafe(i int) bool {
	for _, j := range s.lay.InNeighbors[i] {
		if s.arrive[i][j] == 0 && !s.closed[j] {
			return false
		}
	}
	return true
}

// live: list i has an event to execute before the end.
func (s *sched) live(i int) bool {
	L := &s.lists[i]
	return !L.empty() && L.head0().flags&fEnd == 0
}

// updateClosed computes the nodes that can never execute an event again: no
// pending event before the end in their list, and every in-neighbour closed
// too (the greatest such set). A closed node sends nothing, so its
// neighbours need not wait for its arrivals. This is sound knowledge that
// pseudocode 8 does not use: without it a node whose upstream sources have
// stopped can only advance through global deadlock recovery, which compares
// its events with every other node's.
func (s *sched) updateClosed() {
	if s.closed == nil {
		s.closed = make([]bool, s.nodes)
	}
	if s.live(s.ctrl) {
		clear(s.closed) // a control event may affect any node
		return
	}
	for i := range s.closed {
		s.closed[i] = !s.live(i)
	}
	for changed := true; changed; {
		changed = false
		for i := range s.closed {
			if !s.closed[i] {
				continue
			}
			for _, j := range s.lay.InNeighbors[i] {
				if !s.closed[j] {
					s.closed[i] = false
					changed = true
					break
				}
			}
		}
	}
}

func (s *sched) localSync() *sim.Event {
	for {
		s.updateClosed()
		moved := false
		for i := 0; i < s.nodes; i++ {
			for s.live(i) && s.countsSafe(i) {
				if s.needsFlush(i) {
					s.flush(i)
				}
				h := s.lists[i].head0()
				if s.live(s.ctrl) && !s.before(h, s.lists[s.ctrl].head0()) {
					break
				}
				h = s.popHead(i)
				switch {
				case h.flags&fGhost != 0:
					s.release(h)
					continue
				case h.flags&fArrival != 0 && int(h.dst) != i && int(h.dst) < s.nodes:
					// Pseudocode 8 line 16: move an arrival to its
					// destination, which keeps arrivals from each
					// neighbour in non-decreasing order.
					s.insertList(int(h.dst), h, 0)
					moved = true
					continue
				}
				return s.take(h)
			}
		}
		if !moved {
			return nil
		}
	}
}

// recover is GlobalDeadlockRecovery: the head that is Before every other
// head is the globally earliest event. again=true: a ghost was dropped, look
// again.
func (s *sched) recover() (ev *sim.Event, again bool) {
	var buf [16]int
	cands := buf[:0]
	for i := range s.lists {
		if !s.live(i) {
			continue
		}
		if s.needsFlush(i) {
			s.flush(i)
		}
		cands = append(cands, i)
	}
	if len(cands) == 0 {
		return s.takeEnd(), false
	}
	for _, i := range cands {
		hi := s.lists[i].head0()
		safe := true
		for _, j := range cands {
			if j != i && !s.before(hi, s.lists[j].head0()) {
				safe = false
				break
			}
		}
		if !safe {
			continue
		}
		h := s.popHead(i)
		if h.flags&fGhost != 0 {
			s.release(h)
			return nil, true
		}
		return s.take(h), false
	}
	panic("symbolic: no earliest event among the node lists (inconsistent Before)")
}

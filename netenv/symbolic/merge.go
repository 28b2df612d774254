package symbolic

import (
	"slices"

	"github.com/actfuzz/actfuzz/netenv/sim"
)

// State hashing (reduction H, after the J-Sim thesis's merging of paths
// that reach the same state; SEIB has nothing like it).
//
// At every event boundary of the part of a run that no earlier run has
// explored (after its replayed prefix), the scheduler hashes
//
//   - the number of events executed,
//   - the state of every handler (sim.StateSource),
//   - every pending event: its kind, node, tag, handler, packet, and its
//     symbolic timestamp as the witness-free pair (constant, coefficient
//     vector), in queue order, with the waiting lists of technique C,
//   - the constraints of the path condition that bear on the delays still
//     pending: those over the variables of pending timestamps, closed under
//     shared variables.
//
// Two runs with the same hash have the same future: every later timestamp
// is a pending one plus constants, so every later comparison is decided by
// the same constraints, and the handlers start from the same state. The
// later run stops (it is "merged"); the earlier one and the branches forked
// after this point explore that future once. A merged run is not a branch:
// its region of delay vectors joins the classes below the state it reached.
//
// Merging is sound only where the future depends on nothing else. Under
// technique I ties between events of different components are broken by
// their generators' histories, which the hash does not see, so H does not
// combine with I; and it needs a StateSource, which topology (UDP) runs
// provide and TCP runs do not.

// maxMergeStates bounds the states remembered (16 bytes each plus the map's
// overhead); past it new states are no longer stored, which only loses
// merges.
const maxMergeStates = 1 << 22

// merge hashes the current state and reports whether an earlier run reached
// it; otherwise it remembers it.
func (p *path) merge(s *sched) bool {
	if p.fixed || p.pi < len(p.prefix) {
		return false // replaying: the parent stored these states
	}
	x := p.x
	key := s.stateKey()
	if _, ok := x.seen[key]; ok {
		p.merged = true
		return true
	}
	if len(x.seen) < maxMergeStates {
		x.seen[key] = struct{}{}
	}
	return false
}

// stateKey is the hash described above.
func (s *sched) stateKey() [2]uint64 {
	h := &s.hash
	h.Reset()
	h.Word(s.taken)
	s.src.HashState(h)
	var live [MaxVars]bool
	for l := range s.lists {
		L := &s.lists[l]
		h.Word(uint64(L.len()))
		for k := 0; k < L.len(); k++ {
			e := L.at(k)
			s.hashEntry(h, e, &live)
			h.Word(uint64(len(e.waiting)))
			for _, w := range e.waiting {
				s.hashEntry(h, w, &live)
			}
		}
	}
	s.hashConstraints(h, &live)
	return h.Sum()
}

// hashEntry folds in one pending event and marks its variables live.
func (s *sched) hashEntry(h *sim.StateHash, e *entry, live *[MaxVars]bool) {
	vec := &s.vt.vecs[e.vec]
	c := e.at
	for i := 0; i < s.p.n; i++ {
		c -= int64(vec[i]) * s.p.wns[i]
		if vec[i] != 0 {
			live[i] = true
		}
	}
	h.Word(uint64(e.flags))
	h.Word(uint64(c))
	h.Word(uint64(e.vec))
	ev := e.ev
	if ev == nil {
		return
	}
	h.Word(uint64(ev.Kind)<<40 | uint64(ev.Tag)<<32 | uint64(uint32(ev.Node)))
	if ev.Handler != nil {
		id, ok := s.src.HandlerID(ev.Handler)
		if !ok {
			// An unknown handler: make the state unique to this run.
			id = ^uint64(0) - s.taken
		}
		h.Word(id)
	}
	if ev.Kind == sim.KindPacket && ev.Pkt != nil {
		h.Packet(ev.Pkt)
	}
}

// hashConstraints folds in the path constraints that bear on the live
// variables: those sharing a variable with them, transitively.
func (s *sched) hashConstraints(h *sim.StateHash, live *[MaxVars]bool) {
	pc := s.p.pc
	used := make([]bool, len(pc))
	for changed := true; changed; {
		changed = false
		for k := range pc {
			if used[k] {
				continue
			}
			touches := false
			for i := 0; i < s.p.n; i++ {
				if pc[k].a[i] != 0 && live[i] {
					touches = true
					break
				}
			}
			if !touches {
				continue
			}
			used[k], changed = true, true
			for i := 0; i < s.p.n; i++ {
				if pc[k].a[i] != 0 {
					live[i] = true
				}
			}
		}
	}
	var rel []lincon
	for k, u := range used {
		if u {
			rel = append(rel, pc[k])
		}
	}
	slices.SortFunc(rel, func(a, b lincon) int {
		for i := range a.a {
			if a.a[i] != b.a[i] {
				return int(a.a[i]) - int(b.a[i])
			}
		}
		switch {
		case a.b < b.b:
			return -1
		case a.b > b.b:
			return 1
		}
		return 0
	})
	rel = slices.Compact(rel)
	h.Word(uint64(len(rel)))
	for _, c := range rel {
		for i := 0; i < s.p.n; i++ {
			h.Word(uint64(c.a[i]))
		}
		h.Word(uint64(c.b))
	}
}

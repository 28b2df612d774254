package symbolic

import "github.com/actfuzz/actfuzz/netenv/sim"

// Layout tells the scheduler what it cannot see in an event: which state
// component it belongs to, which node of the I decomposition owns that
// component, which nodes can send packets to which, and which timers may be
// cancelled.
type Layout struct {
	// Comps is the number of state components: sets of simulator state
	// that only their own events read or write. Events of different
	// components interact only through packet arrivals. (Ties are broken
	// by insertion order whatever the components; see genrec.)
	Comps int
	// CompOf returns the component of a (non-control) event.
	CompOf func(e *sim.Event) int
	// Nodes is the number of nodes of the I decomposition, and NodeOf
	// maps each component to its node (the identity when every component
	// is a node of its own; a topology node per component for SEIB's
	// node granularity).
	Nodes  int
	NodeOf []int
	// InNeighbors[i] lists the nodes that can send packets to node i.
	InNeighbors [][]int
	// Timeout reports whether a timer event may be cancelled before it
	// fires (an "outstanding timeout event" of SEIB §4.3.2).
	Timeout func(e *sim.Event) bool
}

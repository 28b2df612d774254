package sim

import "time"

// Kind says what an event is.
type Kind uint8

const (
	// KindPacket is the arrival of a packet at a node.
	KindPacket Kind = iota
	// KindTimer is a timer of a node (retransmission, delayed ACK, pacing,
	// transmission complete, application data).
	KindTimer
	// KindControl is a run-level event: an environment switch or the end of
	// the simulation.
	KindControl
)

func (k Kind) String() string {
	switch k {
	case KindPacket:
		return "packet"
	case KindTimer:
		return "timer"
	case KindControl:
		return "control"
	}
	return "kind?"
}

// NodeID names a node of the topology. Control events belong to node -1.
type NodeID int32

// ControlNode is the node of run-level control events.
const ControlNode NodeID = -1

// Handler executes events. The simulator calls Handle with the clock already
// advanced to e.At.
type Handler interface {
	Handle(e *Event)
}

// Event is one pending action. Events are owned by their handler and reused:
// the simulator never allocates an Event on its own.
type Event struct {
	At      time.Duration // timestamp
	Seq     uint64        // insertion order; breaks ties deterministically
	Node    NodeID
	Kind    Kind
	Tag     uint8 // handler-defined discriminator (which timer, …)
	Handler Handler
	Pkt     *Packet // the arriving packet, for KindPacket

	// Lane is 1+i when the event belongs to FIFO lane i, 0 otherwise: a
	// source whose events are usually scheduled in time order (a link's
	// deliveries, all delayed by the same propagation time). The default
	// scheduler keeps only a lane's earliest event in its heap (lane.go);
	// other schedulers may ignore it. It never changes the order of events.
	Lane int32

	// Uncertain is 1+i when this event's timestamp includes the uncertain
	// delay d_i of the symbolic back-end's window, 0 otherwise. Concrete
	// schedulers ignore it.
	Uncertain int16

	// cancelled marks an event the default heap was asked to remove but
	// keeps in place (Heap.Remove): not queued, as far as anyone can tell.
	cancelled bool

	// index is the event's position inside the scheduler, or -1 when it is
	// not queued. Only schedulers touch it.
	index int32
	// Aux is scratch space for alternative schedulers (the symbolic
	// back-end keys its timestamp expressions with it).
	Aux int32
}

// Queued reports whether the event is in the scheduler.
func (e *Event) Queued() bool { return e.index >= 0 && !e.cancelled }

// Index returns the scheduler's position for e (-1 when not queued). It is
// for Scheduler implementations outside this package.
func (e *Event) Index() int32 { return e.index }

// SetIndex records the scheduler's position for e. It is for Scheduler
// implementations outside this package.
func (e *Event) SetIndex(i int32) { e.index = i }

// NewEvent returns an unqueued event bound to a handler.
func NewEvent(node NodeID, kind Kind, tag uint8, h Handler) *Event {
	return &Event{Node: node, Kind: kind, Tag: tag, Handler: h, index: -1}
}

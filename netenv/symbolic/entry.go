package symbolic

import "github.com/actfuzz/actfuzz/netenv/sim"

// entry flags.
const (
	fGhost   uint8 = 1 << iota // a cancelled timer kept in the list (no Cc)
	fEnd                       // the end-of-simulation event or a node's end marker
	fTimeout                   // an outstanding timeout event (Coc)
	fArrival                   // a packet arrival
)

// Where an entry is.
const (
	inNone int32 = -1 - iota
	inWaiting
	inDiscarded
)

// entry is a queued event (or a ghost or end marker) with its symbolic
// timestamp.
type entry struct {
	ev      *sim.Event
	at      int64
	vec     int32
	flags   uint8
	rec     *genrec // tie-break: where the event comes from
	src     int32   // node that generated a packet arrival
	dst     int32   // node that executes the event
	list    int32   // list index, or inWaiting / inDiscarded / inNone
	counted int32   // list whose arrival count includes this entry, or -1
	owner   *entry  // timer whose waiting list holds this entry
	waiting []*entry
	slot    int32
}

// genrec records where an event comes from, for breaking ties between
// equal timestamps exactly as the simulator's heap does: by insertion order
// (sim.Event.Seq). In a global event list the events run in that order, so
// Seq itself is the key. Under I the components run out of global order
// and Seq means nothing; but the insertion order of two events is the order
// in which their generating events ran (Before of the generators), then the
// order of the calls within one handler, so it is computed from these
// records, comparing generators only when two timestamps can tie.
type genrec struct {
	at   int64
	vec  int32
	seq  uint64  // sim.Event.Seq (valid without I)
	gen  *genrec // the running event that scheduled it; nil before the run
	idx  uint32  // its rank among gen's children (or among setup events)
	kids uint32
	I    bool
}

// concKeyLess is the insertion order of two events under the witness.
func concKeyLess(a, b *genrec) bool {
	if !a.I {
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
		if a.at != b.at {
			return a.at < b.at
		}
	}
	return false
}

// concBefore is Before under the witness: every decision a path takes
// agrees with it, so every list is sorted by it.
func concBefore(a, b *entry) bool {
	return a.at < b.at || (a.at == b.at && concKeyLess(a.rec, b.rec))
}

package sim

import "math/bits"

// StateHash is a fast 128-bit hash of a sequence of 64-bit words, for
// comparing whole simulator states (the symbolic back-end's state hashing,
// which merges branches that reach the same state). It is the same on every
// machine; two lanes with different multipliers make a collision between two
// different states negligible (about 2⁻¹²⁸ per pair for random states).
type StateHash struct{ a, b uint64 }

// Reset starts a new hash.
func (h *StateHash) Reset() { *h = StateHash{a: 0x243f6a8885a308d3, b: 0x13198a2e03707344} }

// Word folds v into the hash.
func (h *StateHash) Word(v uint64) {
	h.a = bits.RotateLeft64((h.a^v)*0x9e3779b97f4a7c15, 31)
	h.b = bits.RotateLeft64((h.b+v)*0xc2b2ae3d27d4eb4f, 29) ^ h.a
}

// Packet folds in a packet's contents: everything but its pool identity
// (ID) and its arrival event, which the scheduler hashes as an event.
func (h *StateHash) Packet(p *Packet) {
	flags := uint64(0)
	for i, f := range [...]bool{p.FIN, p.SYN, p.UDP, p.IsAck, p.DSACK, p.Retx} {
		if f {
			flags |= 1 << i
		}
	}
	h.Word(uint64(uint32(p.Flow))<<32 | uint64(uint32(p.Src)))
	h.Word(uint64(uint32(p.Dst))<<32 | uint64(p.Len))
	h.Word(p.Seq)
	h.Word(p.Ack)
	h.Word(flags<<16 | uint64(p.Hop)<<8 | uint64(p.NSACK))
	for i := 0; i < int(p.NSACK); i++ {
		h.Word(p.SACK[i].Start)
		h.Word(p.SACK[i].End)
	}
	h.Word(uint64(p.TSVal))
	h.Word(uint64(p.TSEcr))
	h.Word(uint64(p.SentAt))
}

// Sum is the 128-bit hash (a final avalanche of both lanes).
func (h *StateHash) Sum() [2]uint64 { return [2]uint64{splitmix64(h.a ^ h.b>>17), splitmix64(h.b)} }

// StateSource exposes the state of a run's handlers to state hashing.
type StateSource interface {
	// HashState folds in the state of every handler: everything that can
	// influence the rest of the run or its outcome, but not the event
	// queue, which the scheduler hashes.
	HashState(h *StateHash)
	// HandlerID names a handler (the target of a queued event) stably
	// across runs of the same configuration.
	HandlerID(Handler) (uint64, bool)
}

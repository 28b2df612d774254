// Package observe is the observation contract between a subject and the rest
// of actfuzz: the state record a subject emits after each ACK, state change
// or timeout (Record), the interface that receives it (Observer), and the
// one table of the base state variables of a flow, the ACT paper's S
// (Base): their names, units, docs, observed values and CSV trace columns.
// Every subject (the native TCP, Linux, gVisor, ns-3) emits Records; the
// package imports only ccai, so any subject can import it.
package observe

import (
	"time"

	"github.com/actfuzz/actfuzz/ccai"
)

// Reason says why a state record was emitted.
type Reason uint8

const (
	ReasonAck   Reason = iota // an ACK was processed
	ReasonState               // ca_state changed (within an ACK: before CongAvoid)
	ReasonRTO                 // the retransmission timer fired (and ca_state became Loss)
	ReasonIdle                // the window was restarted after idle, or decayed after an RTO of application-limited sending (RFC 2861 §3)
)

func (r Reason) String() string {
	return [...]string{"ack", "state", "rto", "idle"}[r]
}

// Record is one point of a sender's state trace: the variables of the ACT
// paper's S (Base) plus the CCAI's own variables. The record passed to an
// Observer is reused: copy what you keep.
type Record struct {
	Time        time.Duration
	Flow        int32
	Reason      Reason
	Cwnd        uint32
	SSThresh    uint32
	SRTT        time.Duration
	RTTVar      time.Duration
	RTO         time.Duration
	CAState     ccai.CAState
	PrevCAState ccai.CAState
	PriorCwnd   uint32
	InFlight    uint32
	Delivered   uint64
	PacingRate  uint64
	// Vars holds the CCAI's exposed variables in the order of its
	// ccai.VarsOf (a foreign subject's: netenv.Capabilities.Vars).
	Vars []float64
}

// Observer receives state records. It must not retain rec.
type Observer interface {
	Observe(rec *Record)
}

// ObserveTransition moves a record rebuilt from an implementation's
// observed state (gVisor's, the kernel's) to ca_state st: prev_ca_state,
// and prior_cwnd as Linux sets it, from the last cwnd recorded before the
// change: on entering recovery (tcp_init_cwnd_reduction) and on entering
// loss from open or disorder (tcp_enter_loss). first is true before the
// flow's first record: st is then its state, and nothing changed. It
// reports whether ca_state changed.
func (r *Record) ObserveTransition(st ccai.CAState, first bool) bool {
	if first {
		r.CAState, r.PrevCAState = st, st
		return false
	}
	if st == r.CAState {
		return false
	}
	calm := r.CAState == ccai.StateOpen || r.CAState == ccai.StateDisorder
	if st == ccai.StateRecovery || (st == ccai.StateLoss && calm) {
		r.PriorCwnd = r.Cwnd
	}
	r.PrevCAState = r.CAState
	r.CAState = st
	return true
}

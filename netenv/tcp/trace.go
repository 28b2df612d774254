package tcp

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
	ReasonIdle                // the window was restarted after idle
)

func (r Reason) String() string {
	return [...]string{"ack", "state", "rto", "idle"}[r]
}

// StateRecord is one point of a sender's state trace: the variables of the
// ACT paper's S plus the CCAI's own variables. The record passed to an
// Observer is reused: copy what you keep.
type StateRecord struct {
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
	// Vars holds the CCAI's exposed variables in the order of VarNames.
	Vars []float64
}

// Observer receives state records. It must not retain rec.
type Observer interface {
	Observe(rec *StateRecord)
}

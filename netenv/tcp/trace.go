package tcp

import "github.com/actfuzz/actfuzz/netenv/observe"

// The observation contract lives in netenv/observe, which every subject
// imports. These aliases keep the native sender's code, and code written
// against tcp.StateRecord while the move lands (a new subject on another
// branch), compiling unchanged; new code names observe's types.
type (
	// StateRecord is observe.Record.
	StateRecord = observe.Record
	// Observer is observe.Observer.
	Observer = observe.Observer
	// Reason is observe.Reason.
	Reason = observe.Reason
)

// The reasons of observe, by their old names.
const (
	ReasonAck   = observe.ReasonAck
	ReasonState = observe.ReasonState
	ReasonRTO   = observe.ReasonRTO
	ReasonIdle  = observe.ReasonIdle
)

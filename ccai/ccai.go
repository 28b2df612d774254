package ccai

import (
	"fmt"
	"time"
)

// CAState is the congestion-avoidance state of a sender (Linux's
// icsk_ca_state).
type CAState uint8

// The five ca_state values, numbered as in Linux (enum tcp_ca_state).
const (
	StateOpen     CAState = iota // no suspicion of loss
	StateDisorder                // dupACKs or SACKs seen, not yet a loss
	StateCWR                     // window reduced after a local or ECN signal
	StateRecovery                // fast retransmit / fast recovery
	StateLoss                    // retransmission timeout
)

// CAStateNames lists the names of the ca_state values in numerical order.
var CAStateNames = [...]string{"open", "disorder", "cwr", "recovery", "loss"}

func (s CAState) String() string {
	if int(s) < len(CAStateNames) {
		return CAStateNames[s]
	}
	return fmt.Sprintf("ca_state(%d)", uint8(s))
}

// ParseCAState maps a name from [CAStateNames] to its CAState.
func ParseCAState(name string) (CAState, error) {
	for i, n := range CAStateNames {
		if n == name {
			return CAState(i), nil
		}
	}
	return 0, fmt.Errorf("unknown ca_state %q (want one of %v)", name, CAStateNames)
}

// Event is a congestion-window event (Linux's enum tcp_ca_event).
type Event uint8

const (
	// EventTxStart: the first transmission when no packet is in flight.
	EventTxStart Event = iota
	// EventCwndRestart: the window is restarted after an idle period
	// (RFC 2861 congestion window validation).
	EventCwndRestart
	// EventCompleteCWR: a window reduction (recovery or CWR) has completed.
	EventCompleteCWR
	// EventLoss: a retransmission timeout; the sender enters Loss.
	EventLoss
)

func (e Event) String() string {
	switch e {
	case EventTxStart:
		return "tx_start"
	case EventCwndRestart:
		return "cwnd_restart"
	case EventCompleteCWR:
		return "complete_cwr"
	case EventLoss:
		return "loss"
	}
	return fmt.Sprintf("event(%d)", uint8(e))
}

// Profile selects which kernel's behaviour the TCP machinery and the
// algorithms reproduce.
type Profile uint8

const (
	// ProfileLinux is today's Linux behaviour (the default).
	ProfileLinux Profile = iota
	// ProfileLinux310 is Linux 3.10, the kernel tested by the ACT paper
	// (NSDI 2019, §4.1).
	ProfileLinux310
)

// ProfileNames lists the profile names accepted on the command line.
var ProfileNames = [...]string{"linux", "linux-3.10"}

func (p Profile) String() string {
	if int(p) < len(ProfileNames) {
		return ProfileNames[p]
	}
	return fmt.Sprintf("profile(%d)", uint8(p))
}

// ParseProfile maps "linux" or "linux-3.10" to a Profile.
func ParseProfile(name string) (Profile, error) {
	for i, n := range ProfileNames {
		if n == name {
			return Profile(i), nil
		}
	}
	return 0, fmt.Errorf("unknown profile %q (want one of %v)", name, ProfileNames)
}

// Algorithm is the congestion-control contract (Linux's tcp_congestion_ops).
// An Algorithm instance belongs to exactly one connection; the registry
// creates a fresh one per flow.
type Algorithm interface {
	// Init is called once, before the first packet is sent.
	Init(s *Sock)
	// SSThresh returns the slow-start threshold to use after a loss
	// (ops->ssthresh). It is called on entry to Recovery and Loss.
	SSThresh(s *Sock) uint32
	// CongAvoid grows the window on an ACK that acknowledged acked packets
	// (ops->cong_avoid), in Open, Disorder and Loss (as in Linux, where
	// Loss is not a window reduction). It is not called in Recovery or
	// CWR, where PRR sets cwnd, nor for algorithms that implement
	// CongController.
	CongAvoid(s *Sock, acked uint32)
	// SetState is called before s.CAState changes to state (ops->set_state).
	SetState(s *Sock, state CAState)
	// CwndEvent reports a congestion-window event (ops->cwnd_event).
	CwndEvent(s *Sock, ev Event)
	// UndoCwnd returns the window to restore when a reduction is undone
	// (ops->undo_cwnd). Algorithms without state of their own return
	// RenoUndoCwnd(s).
	UndoCwnd(s *Sock) uint32
}

// AckSample is what [PktsAcker] receives on every ACK that acknowledged new
// data (Linux's struct ack_sample).
type AckSample struct {
	PktsAcked uint32        // packets newly acknowledged (cumulatively or by SACK)
	RTT       time.Duration // RTT sample, or -1 when the ACK gave none
	InFlight  uint32        // packets in flight before this ACK
}

// PktsAcker is implemented by algorithms that want every RTT sample
// (ops->pkts_acked).
type PktsAcker interface {
	PktsAcked(s *Sock, sample AckSample)
}

// AckFlags describe an incoming ACK for [InAckEventer].
type AckFlags uint8

const (
	AckSlowPath   AckFlags = 1 << iota // the ACK was not a pure in-order advance
	AckWinUpdate                       // the ACK updated the window
	AckECE                             // the ACK carried ECN-Echo
	AckDupAck                          // the ACK did not advance snd_una
	AckRetransAck                      // the ACK acknowledged retransmitted data
)

// InAckEventer is implemented by algorithms that watch every ACK
// (ops->in_ack_event), such as Westwood+.
type InAckEventer interface {
	InAckEvent(s *Sock, flags AckFlags, ackedBytes uint32)
}

// RateSample is a delivery-rate sample (Linux's struct rate_sample, after
// draft-cheng-iccrg-delivery-rate-estimation).
type RateSample struct {
	PriorDelivered uint64        // s.Delivered when the acked packet was sent
	Delivered      int64         // packets delivered over Interval; -1 if no sample
	Interval       time.Duration // the sampling interval; -1 if no sample
	RTT            time.Duration // RTT of the most recently acked packet; -1 if none
	Losses         uint32        // packets newly marked lost by this ACK
	AckedSacked    uint32        // packets newly acknowledged or SACKed
	PriorInFlight  uint32        // in-flight before this ACK
	IsAppLimited   bool          // the sample was taken while application-limited
	IsRetrans      bool          // the sample came from a retransmitted packet
}

// CongController is implemented by rate-based algorithms such as BBR that
// take over cwnd and pacing entirely (ops->cong_control). When present,
// CongAvoid is not called and the machinery's PRR is bypassed.
type CongController interface {
	CongControl(s *Sock, rs *RateSample)
}

// VarDesc describes one exposed state variable of an algorithm.
type VarDesc struct {
	Name string // as used in S and in conditions, e.g. "target"
	Doc  string
	// Values, when non-empty, makes the variable categorical: its numeric
	// value is an index into Values (e.g. BBR's mode).
	Values []string
}

// StateSaver is implemented by an algorithm whose state a copy of its
// fields does not capture. The symbolic back-end saves a whole simulation at
// the start of a delay window and restores it for every branch (package
// netenv/snapshot): it copies every field of the algorithm and everything
// they point to (pointers, slices, maps, interfaces), which covers every
// algorithm whose state is plain data, like all of this package's. What it
// cannot copy is state behind a func value (a closure's captured
// variables), a channel or an unsafe.Pointer: such an algorithm either tags
// the field `snapshot:"shared"` when what it refers to never changes during
// a run, or implements StateSaver. SaveState returns a function that puts
// the algorithm back in the state it has now; it may be called any number of
// times. Returning nil says the algorithm cannot be saved: the symbolic
// back-end then runs every branch from time zero (correct, slower), and its
// report says why. An algorithm with neither is refused the same way, never
// restored half-way.
//
// The method set is the contract: netenv/snapshot recognizes it without
// this package importing anything.
type StateSaver interface {
	SaveState() (restore func())
}

// VarExporter is implemented by algorithms that expose internal state by
// name. ReadVars writes the current values, in the order of Vars, into dst,
// which has len(Vars()) elements. It is called on every ACK: it must not
// allocate.
type VarExporter interface {
	Vars() []VarDesc
	ReadVars(s *Sock, dst []float64)
}

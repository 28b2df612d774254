package corpus

import (
	"errors"
	"fmt"
	"time"
)

// Faults of a worker process, observed by the campaign's supervisor rather
// than by the subject: the seed's configuration made the process hang, go
// over its memory limit or die. Replaying one needs a worker process
// under a watchdog and a memory limit (act.ReplayIsolated, `actfuzz
// replay`); ReplayWith refuses them rather than hang or die itself.
const (
	FaultHang  = "hang"  // no result within the watchdog
	FaultOOM   = "oom"   // the worker went over its memory limit
	FaultCrash = "crash" // the worker died: a panic on any goroutine, a signal
)

// ProcessFault reports whether a finding kind is a fault of the worker
// process (hang, oom, crash).
func ProcessFault(kind string) bool {
	return kind == FaultHang || kind == FaultOOM || kind == FaultCrash
}

// FaultCondition is the kind of a finding whose condition failed to run:
// a type error at run time (prev.ca_state > 1), or expr-lang's memory
// budget (internal/exprcheck). Its Condition, When, While and For are the
// condition's, so that a replay runs it again; State is the record it
// failed on. Seeds written before it say "condition-error" (no condition
// named), which replays as an unknown fault.
const FaultCondition = "condition-fault"

// ConditionFault is a condition that failed to run: the evaluation error
// of an Evaluator (Flow and At zero) or a Watcher (the flow and the
// record's time, and its state).
type ConditionFault struct {
	Spec  ConditionSpec
	Flow  int
	At    time.Duration
	State StateValues
	Err   error
}

func (e *ConditionFault) Error() string { return fmt.Sprintf("condition %q: %v", e.Spec.Name, e.Err) }
func (e *ConditionFault) Unwrap() error { return e.Err }

// Finding is the condition-fault finding of the fault.
func (e *ConditionFault) Finding() *Finding {
	sp := e.Spec
	return &Finding{Condition: sp.Name, When: sp.When, While: sp.While, For: sp.For, Only: sp.Only, Source: sp.Source,
		Kind: FaultCondition, TimeNS: int64(e.At), Flow: e.Flow, State: e.State, Detail: e.Err.Error()}
}

// AsConditionFault returns err's *ConditionFault, if it is one.
func AsConditionFault(err error) (*ConditionFault, bool) {
	var cf *ConditionFault
	ok := errors.As(err, &cf)
	return cf, ok
}

package netenv

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/actfuzz/actfuzz/netenv/linktrace"
)

// LinkTrace is the link_trace parameter: 0 for none (a fixed-rate link),
// 1 + the index of a shipped trace in linktrace.Names, or one of the user's
// trace files (user1 … user4: the setup's LinkTraces, in order).
type LinkTrace uint8

// LinkTraceNames are the values of the link_trace parameter.
var LinkTraceNames = append(append([]string{"none"}, linktrace.Names...), "user1", "user2", "user3", "user4")

func (t LinkTrace) String() string {
	if int(t) < len(LinkTraceNames) {
		return LinkTraceNames[t]
	}
	return fmt.Sprintf("trace(%d)", uint8(t))
}

// MarshalText writes the trace by name.
func (t LinkTrace) MarshalText() ([]byte, error) {
	if int(t) >= len(LinkTraceNames) {
		return nil, fmt.Errorf("trace %d: want one of %v", uint8(t), LinkTraceNames)
	}
	return []byte(LinkTraceNames[t]), nil
}

// UnmarshalText reads a trace by name.
func (t *LinkTrace) UnmarshalText(b []byte) error {
	i := slices.Index(LinkTraceNames, string(b))
	if i < 0 {
		return fmt.Errorf("trace %q: want one of %v", b, LinkTraceNames)
	}
	*t = LinkTrace(i)
	return nil
}

// traceLink delivers a link's packets at a trace's opportunities: each
// opportunity carries one packet (all of ours fit in linktrace.MTU), an
// opportunity that finds the link idle is lost (Mahimahi's semantics), and
// trace time is simulated time multiplied by the scale, from time zero.
type traceLink struct {
	tr    *linktrace.Trace `snapshot:"shared"` // shipped, immutable
	scale float64
	cycle int64 // the trace period the pointer is in
	idx   int   // the next unused opportunity in that period
}

// applyTrace sets the link's trace; a change of scale or trace keeps the
// trace clock (trace time is always sim time × scale).
func (l *Link[P]) applyTrace(e *Env) {
	if e.Trace == 0 {
		l.trace = nil
		return
	}
	var tr *linktrace.Trace
	if e.Trace >= firstUserTrace {
		// Config.Validate checked that the file is there and loaded.
		tr = l.cfg.UserTraces[e.Trace-firstUserTrace].Trace()
	} else {
		var err error
		tr, err = linktrace.Shipped(e.Trace.String())
		if err != nil {
			panic("netenv: shipped trace: " + err.Error()) // embedded and tested
		}
	}
	scale := e.TraceScale
	if scale <= 0 {
		scale = 1
	}
	if l.trace == nil || l.trace.tr != tr || l.trace.scale != scale {
		l.trace = &traceLink{tr: tr, scale: scale}
	}
}

// next returns the time of the first unused opportunity at or after now
// and uses it.
func (t *traceLink) next(now time.Duration) time.Duration {
	period := int64(t.tr.Period)
	tt := int64(float64(float64(now) * t.scale)) // trace time
	if c := tt / period; c > t.cycle {
		t.cycle, t.idx = c, 0
	}
	opp := t.tr.Opportunities
	for {
		base := t.cycle * period
		// The first opportunity of this period at or after tt.
		i := t.idx + sort.Search(len(opp)-t.idx, func(k int) bool { return base+int64(opp[t.idx+k]) >= tt })
		if i < len(opp) {
			t.idx = i + 1
			at := base + int64(opp[i])
			// Rounding trace time down above may put it a hair before
			// now; an opportunity is never in the past.
			return max(now, time.Duration(math.Ceil(float64(at)/t.scale)))
		}
		t.cycle, t.idx = t.cycle+1, 0
	}
}

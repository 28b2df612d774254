package pkt

import "time"

// The time model (packetdrill's, as its documentation and run.c describe
// it): an absolute time counts from the script's start; a relative time
// "+t" from the previous event's script time, or from the moment the
// previous event happened when that event was "*" (any time) and so has
// no script time of its own. An outbound packet is on time within a
// tolerance of max(4 ms, 12.5% of the gap to the previous event): the
// defaults of --tolerance_usecs and --tolerance_percent, which a script's
// options may change. A range "t1~t2" widens the window to [t1, t2].

const (
	defaultToleranceUsecs   = 4000
	defaultTolerancePercent = 12.5
	// anyTimeHorizon bounds how long a "*" outbound packet is waited
	// for, so that a missing packet fails instead of hanging.
	anyTimeHorizon = 10 * time.Minute
)

// clock resolves event times.
type clock struct {
	tolerance time.Duration
	percent   float64
	// last is the previous event's script time; lastAnchored: it had
	// one (it was not "*").
	last         time.Duration
	lastAnchored bool
}

func newClock() clock {
	return clock{tolerance: defaultToleranceUsecs * time.Microsecond, percent: defaultTolerancePercent, lastAnchored: true}
}

// window is when an event is due: its script time t, and for an outbound
// packet the interval [lo, hi] it may be seen in.
type window struct {
	t, lo, hi time.Duration
	any       bool
}

// resolve computes an event's window; now is the simulated time, the
// anchor after a "*" event.
func (c *clock) resolve(et EventTime, now time.Duration) window {
	if !c.lastAnchored {
		c.last = now
	}
	base := c.last
	var w window
	switch et.Kind {
	case TimeAny:
		w = window{t: now, lo: now, hi: now + anyTimeHorizon, any: true}
	case TimeAbsolute:
		w.t = et.Start
	case TimeRelative:
		w.t = base + et.Start
	case TimeAbsRange:
		w.t, w.hi = et.Start, et.End
	case TimeRelRange:
		w.t, w.hi = base+et.Start, base+et.End
	}
	if w.any {
		// The next event's time, gap and tolerance count from when
		// this one happened (resolve's now then).
		c.lastAnchored = false
		return w
	}
	tol := c.tolerance
	if gap := w.t - c.last; gap > 0 {
		tol = max(tol, time.Duration(float64(gap)*c.percent/100))
	}
	if et.Kind != TimeAbsRange && et.Kind != TimeRelRange {
		w.hi = w.t
	}
	w.lo, w.hi = w.t-tol, w.hi+tol
	c.last, c.lastAnchored = w.t, true
	return w
}

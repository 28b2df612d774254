package gvisor

import (
	"sync"
	"sync/atomic"
	"time"

	"gvisor.dev/gvisor/pkg/tcpip"

	"github.com/actfuzz/actfuzz/netenv/sim"
)

// clockOffset shifts the stacks' clocks away from the zero time, which
// gVisor uses in places as "never" (a zero tcpip.MonotonicTime).
const clockOffset = time.Second

// clock is the manual clock of one host: a tcpip.Clock whose time is the
// simulator's and whose timers are simulator events (sim.KindTimer), so that
// gVisor's timers and our link's events share one event queue ordered by
// (time, insertion order).
//
// gVisor may arm and stop timers from its processor goroutines. Those calls
// only change the timer's own record (under mu) and mark it dirty; the
// harness moves dirty timers into the event queue at quiescence (sync), so
// the event queue is only ever touched by the harness goroutine and the
// order in which timers enter it is the order in which gVisor armed them.
type clock struct {
	now  *atomic.Int64 // simulated time in ns, shared by the hosts of a run
	sim  *sim.Sim
	node sim.NodeID
	fire func(t *timer) // runs an expired timer (the harness)

	mu    sync.Mutex
	dirty []*timer // guarded by mu
}

var _ tcpip.Clock = (*clock)(nil)

func (c *clock) elapsed() time.Duration { return time.Duration(c.now.Load()) }

// Now implements tcpip.Clock.
func (c *clock) Now() time.Time {
	return time.Unix(0, 0).Add(clockOffset + c.elapsed())
}

// NowMonotonic implements tcpip.Clock.
func (c *clock) NowMonotonic() tcpip.MonotonicTime {
	var m tcpip.MonotonicTime
	return m.Add(clockOffset + c.elapsed())
}

// AfterFunc implements tcpip.Clock. A timer due now (d ≤ 0) fires as the
// next event at the current instant, after the one being executed, never
// in a goroutine of its own.
func (c *clock) AfterFunc(d time.Duration, f func()) tcpip.Timer {
	t := &timer{c: c, f: f}
	t.ev = sim.NewEvent(c.node, sim.KindTimer, 0, t)
	c.mu.Lock()
	t.armLocked(d)
	c.mu.Unlock()
	return t
}

// sync moves the timers armed or stopped since the last call into the
// event queue. Only the harness goroutine calls it, at quiescence.
func (c *clock) sync() {
	s := c.sim
	c.mu.Lock()
	for _, t := range c.dirty {
		t.dirty = false
		if t.armed {
			s.ScheduleAt(t.ev, t.at)
		} else {
			s.Cancel(t.ev)
		}
	}
	clear(c.dirty)
	c.dirty = c.dirty[:0]
	c.mu.Unlock()
}

// timer is one gVisor timer.
type timer struct {
	c  *clock
	f  func()
	ev *sim.Event

	// Guarded by c.mu.
	armed bool
	at    time.Duration
	dirty bool
}

var _ tcpip.Timer = (*timer)(nil)

func (t *timer) armLocked(d time.Duration) {
	t.armed = true
	t.at = t.c.elapsed() + max(d, 0)
	t.markLocked()
}

func (t *timer) markLocked() {
	if !t.dirty {
		t.dirty = true
		t.c.dirty = append(t.c.dirty, t)
	}
}

// Stop implements tcpip.Timer: it reports whether the timer was pending.
func (t *timer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.armed
	if was {
		t.armed = false
		t.markLocked()
	}
	return was
}

// Reset implements tcpip.Timer.
func (t *timer) Reset(d time.Duration) {
	t.c.mu.Lock()
	t.armLocked(d)
	t.c.mu.Unlock()
}

// Handle fires the timer (the simulator calls it at t.at).
func (t *timer) Handle(*sim.Event) {
	t.c.now.Store(int64(t.c.sim.Now()))
	t.c.mu.Lock()
	due := t.armed && !t.dirty && t.at == t.c.elapsed()
	if due {
		t.armed = false
	}
	t.c.mu.Unlock()
	if due {
		t.c.fire(t)
	}
}

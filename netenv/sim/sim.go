package sim

import (
	"context"
	"math"
	"time"
)

// Limits are the guards of a run: a capped run stops and says so; it never
// hangs.
type Limits struct {
	MaxTime   time.Duration // simulated-time cap (0: none)
	MaxEvents uint64        // executed-event cap (0: none)
}

// Sim is one simulation run: a clock, a scheduler and a packet pool.
type Sim struct {
	now    time.Duration
	sched  Scheduler
	seq    uint64
	events uint64
	limits Limits

	nextPktID uint64
	freePkts  *Packet

	end     *Event
	stopped bool
	capped  bool
	// Current is the event being executed (nil between events).
	Current *Event
}

type endHandler struct{ s *Sim }

func (h endHandler) Handle(*Event) { h.s.stopped = true }

// New returns a simulator using sched (nil: a fresh Heap).
func New(sched Scheduler, limits Limits) *Sim {
	if sched == nil {
		sched = NewHeap(256)
	}
	s := &Sim{sched: sched, limits: limits}
	if limits.MaxTime > 0 {
		// The time cap is an end-of-simulation event, so that "past the
		// end" is decided by the scheduler like every other order.
		s.end = NewEvent(ControlNode, KindControl, 0, endHandler{s})
		s.end.At = limits.MaxTime
		s.insert(s.end)
	}
	return s
}

// Now is the current simulated time.
func (s *Sim) Now() time.Duration { return s.now }

// Events is the number of events executed so far.
func (s *Sim) Events() uint64 { return s.events }

// Scheduler returns the event queue.
func (s *Sim) Scheduler() Scheduler { return s.sched }

// Capped reports whether the run stopped at a cap.
func (s *Sim) Capped() bool { return s.capped }

// Stop ends the run after the current event.
func (s *Sim) Stop() { s.stopped = true }

func (s *Sim) insert(e *Event) {
	s.seq++
	e.Seq = s.seq
	s.sched.Insert(e)
}

// Schedule queues e to run delay after now; if e is queued already it is
// moved (cancelled, then inserted again with a new Seq).
func (s *Sim) Schedule(e *Event, delay time.Duration) {
	s.scheduleAt(e, s.now+delay)
}

// ScheduleAt queues e at absolute time at (which must not be in the past).
func (s *Sim) ScheduleAt(e *Event, at time.Duration) {
	s.scheduleAt(e, max(at, s.now))
}

func (s *Sim) scheduleAt(e *Event, at time.Duration) {
	if e.Queued() {
		s.sched.Remove(e)
	}
	e.At = at
	s.insert(e)
}

// Cancel removes e from the queue if it is queued.
func (s *Sim) Cancel(e *Event) {
	if e.Queued() {
		s.sched.Remove(e)
	}
}

// Run executes events until the queue empties, Stop is called, a cap is hit
// or ctx is cancelled. It returns ctx's error if cancelled.
func (s *Sim) Run(ctx context.Context) error { return s.RunTo(ctx, math.MaxUint64) }

// RunTo is Run that also pauses, between two events, once events events
// have executed in all: the symbolic back-end saves the simulator there
// (netenv/snapshot) and goes on with Run or RunTo, once per branch.
func (s *Sim) RunTo(ctx context.Context, events uint64) error {
	const ctxEvery = 1 << 14
	for !s.stopped && s.events < events {
		if s.limits.MaxEvents > 0 && s.events >= s.limits.MaxEvents {
			s.capped = true
			break
		}
		e := s.sched.PopMin()
		if e == nil {
			break
		}
		if e == s.end {
			s.capped = true
			s.now = e.At
			break
		}
		s.now = e.At
		s.events++
		s.Current = e
		e.Handler.Handle(e)
		s.Current = nil
		if s.events%ctxEvery == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return nil
}

// NewPacket returns a zeroed packet from the pool with a fresh ID.
func (s *Sim) NewPacket() *Packet {
	p := s.freePkts
	if p != nil {
		s.freePkts = p.next
		*p = Packet{}
	} else {
		p = &Packet{}
	}
	p.Arrival.index = -1
	p.Arrival.Kind = KindPacket
	p.Arrival.Pkt = p
	s.nextPktID++
	p.ID = s.nextPktID
	return p
}

// FreePacket returns p to the pool.
func (s *Sim) FreePacket(p *Packet) {
	p.next = s.freePkts
	s.freePkts = p
}

// RunUntil executes every event due at or before t, in order, and leaves
// the clock at t (or at the cap, if the time cap comes first). It is how a
// real-time driver (the Linux subject's TUN emulator) advances the
// simulator to "now" between packets read from the kernel: the caller owns
// the mapping from wall clock to simulated time. It returns when the next
// pending event is due and whether there is one; a stopped or capped
// simulator executes nothing and reports none.
func (s *Sim) RunUntil(t time.Duration) (next time.Duration, pending bool) {
	for !s.stopped {
		if s.limits.MaxEvents > 0 && s.events >= s.limits.MaxEvents {
			s.capped, s.stopped = true, true
			break
		}
		e := s.sched.PopMin()
		if e == nil {
			break
		}
		if e.At > t {
			// Not due: put it back with its own key, so its order
			// among equal times is unchanged.
			s.sched.Insert(e)
			if t > s.now {
				s.now = t
			}
			return e.At, true
		}
		if e == s.end {
			s.capped, s.stopped = true, true
			s.now = e.At
			return 0, false
		}
		s.now = e.At
		s.events++
		s.Current = e
		e.Handler.Handle(e)
		s.Current = nil
	}
	if !s.stopped && t > s.now {
		s.now = t
	}
	return 0, false
}

// Stopped reports whether Stop was called or a cap was reached.
func (s *Sim) Stopped() bool { return s.stopped }

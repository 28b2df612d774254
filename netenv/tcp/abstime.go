package tcp

import (
	"time"

	"github.com/actfuzz/actfuzz/netenv/sim"
)

// Timers at an absolute time.
//
// Two of the sender's timers are scheduled at an absolute time
// (sim.ScheduleAt) rather than an offset after now: the send timer of an
// application-limited sender, at the instant the application will have
// written the next segment (appTimeFor, app.go; RFC 7661's
// application-limited periods are what it produces), and the pacing timer,
// at nextPace. A scheduler that keeps timestamps as expressions of
// uncertain delays (the symbolic back-end, netenv/symbolic/abstime.go)
// cannot tell what such an instant depends on: the application's clock runs
// from appSince, the instant it last started or blocked or woke, whatever
// event that was; nextPace is max(nextPace, now) + gap, which is nextPace's
// expression or now's depending on a comparison. ClockTracker tells it.

// ClockTracker follows the instants an absolute timer is scheduled from,
// with their concrete values, so that a scheduler can give the timer the
// right expression. Every call reports something the sender has just
// done; none changes what it does.
//
// A sender finds it by asking its simulator's scheduler (NewSender). With
// the default heap it is nil: one nil check per change of these instants
// and per arming, and nothing else changes.
type ClockTracker interface {
	// AppClock: the application of flow restarts its clock now (appSince
	// = now, which is since): it started at a new rate, blocked on the
	// full send buffer, or woke when an ACK freed it.
	AppClock(flow int32, since time.Duration)
	// ArmAppWrite: the sender of flow is about to schedule ev at
	// sim.ScheduleAt(ev, at), at = appSince + a constant (the time the
	// application takes to write the next segment at its rate):
	// max(at, now), since ScheduleAt never schedules in the past.
	ArmAppWrite(flow int32, ev *sim.Event, at time.Duration)
	// AppCheck: the sender of flow compared now with at = appSince + a
	// constant, the instant its application will have written the bytes
	// its next step needs (appTimeFor), and found reached = now ≥ at: a
	// whole segment (or the transfer's tail) to send, or, with nothing in
	// flight, a runt (RFC 896), or the send buffer's limit, at which the
	// application blocks. What the sender does next follows from it.
	AppCheck(flow int32, at time.Duration, reached bool)
	// AppCut: the sender of flow is about to send a segment shorter than
	// the MSS because its application has written no more by now (a
	// runt, which Nagle's algorithm, RFC 896, lets go when nothing is in
	// flight). Its size, and so every later sequence number and the
	// instant the application writes the next segment, is a function
	// of now − appSince.
	AppCut(flow int32)
	// PaceAdvance: the sender of flow sent a packet now and set nextPace
	// = max(nextPace, now) + gap, which is next.
	PaceAdvance(flow int32, gap, next time.Duration)
	// PaceReset: nextPace = 0 (a timeout, RFC 6298 §5.4–5.6, sends at
	// once).
	PaceReset(flow int32)
	// PaceCheck: the sender of flow compared now < nextPace and found
	// wait; when wait, it is about to schedule ev at nextPace.
	PaceCheck(flow int32, ev *sim.Event, wait bool)
}

// RateTracker follows what a pacing rate may be computed from. The pacing
// gap is wire bytes / PacingRate, and the rate is the algorithm's: BBR's
// is pacing_gain·BtlBw, a windowed maximum of delivery-rate samples
// (draft-cheng-iccrg-delivery-rate-estimation §3.3: delivered over
// max(send elapsed, ACK elapsed), both differences of instants). A
// scheduler whose instants are expressions of uncertain delays needs to
// know when such an interval is not a constant: the gap, and so the
// pacing timer, may then differ between delay vectors that made every
// other decision alike (the symbolic back-end flags the run,
// netenv/symbolic/abstime.go).
//
// A sender finds it by asking its simulator's scheduler (NewSender). With
// the default heap it is nil: one nil check per rate sample, and nothing
// else changes.
type RateTracker interface {
	// RateSample: the sender of flow is about to give its algorithm (a
	// ccai.CongController: no other sees samples) the delivery-rate
	// sample of an ACK now, whose interval is max(sent − firstSent,
	// now − priorTime): priorTime is the delivered time stamped on the
	// segment that defines the sample, sent its transmission and
	// firstSent the start of its send phase.
	RateSample(flow int32, priorTime, firstSent, sent time.Duration)
}

// setAppSince restarts the application's clock now.
func (s *Sender) setAppSince(now time.Duration) {
	s.appSince = now
	if s.clock != nil {
		s.clock.AppClock(s.cfg.Flow, now)
	}
}

// scheduleAppWrite schedules the send timer when the application will
// have written the next segment.
func (s *Sender) scheduleAppWrite(at time.Duration) {
	if s.clock != nil {
		s.clock.ArmAppWrite(s.cfg.Flow, s.sendEv, at)
	}
	s.sim.ScheduleAt(s.sendEv, at)
}

// noteAppChecks reports the comparisons of now with the instants the
// application writes at that decide output's next step, given what it has
// written by now: whether a whole segment (or the tail) is there, and,
// with nothing in flight and no whole segment, whether a runt is (Nagle's
// algorithm, RFC 896, lets one go only then). They are the sender's own
// decisions, made by arithmetic on appSince rather than by comparing
// timestamps, so a scheduler whose timestamps are expressions of the
// delays would not see them otherwise. None is reported while the clock
// does not run (an unlimited or blocked application, a send buffer's
// limit below the segment, bytes the application had written before
// appSince): then no time decides.
func (s *Sender) noteAppChecks(written uint64) {
	if s.clock == nil || s.appRate == 0 || s.appBlocked || s.sndNxt >= s.cfg.Bytes {
		return
	}
	next := min(s.sndNxt+uint64(s.cfg.MSS), s.cfg.Bytes)
	if next > s.sndBufLimit() || next <= s.appBase {
		return
	}
	full := written >= next
	s.clock.AppCheck(s.cfg.Flow, s.appTimeFor(next), full)
	if one := s.sndNxt + 1; !full && s.sock.PacketsOut == 0 && next > one && one > s.appBase {
		s.clock.AppCheck(s.cfg.Flow, s.appTimeFor(one), written >= one)
	}
}

// noteAppBlock reports the comparison that decides whether the
// application blocks on the full send buffer now: it has produced limit
// bytes, the buffer's limit, by appTimeFor(limit). Blocking restarts its
// clock (appSince = now), so the instants it writes at later follow from
// this decision too.
func (s *Sender) noteAppBlock(limit uint64, block bool) {
	if s.clock != nil && limit > s.appBase {
		s.clock.AppCheck(s.cfg.Flow, s.appTimeFor(limit), block)
	}
}

// noteAppCut reports a segment the application's rate cut short: one
// whose end is what the application had written by now (not the end of
// the transfer, not the send buffer's limit, at which it would block).
func (s *Sender) noteAppCut() {
	if s.clock != nil && s.appRate > 0 && !s.appBlocked {
		s.clock.AppCut(s.cfg.Flow)
	}
}

// advancePace spaces the next packet gap after this one, or after the
// last pacing deadline if that is later (Linux's tcp_update_pacing_time
// from the earliest departure time).
func (s *Sender) advancePace(now, gap time.Duration) {
	s.nextPace = max(s.nextPace, now) + gap
	if s.clock != nil {
		s.clock.PaceAdvance(s.cfg.Flow, gap, s.nextPace)
	}
}

// resetPace clears the pacing deadline.
func (s *Sender) resetPace() {
	s.nextPace = 0
	if s.clock != nil {
		s.clock.PaceReset(s.cfg.Flow)
	}
}

// paceWait reports whether pacing holds the next packet; if so, the send
// timer is armed at the deadline.
func (s *Sender) paceWait(now time.Duration) bool {
	wait := now < s.nextPace
	if s.clock != nil {
		s.clock.PaceCheck(s.cfg.Flow, s.sendEv, wait)
	}
	if wait {
		s.sim.ScheduleAt(s.sendEv, s.nextPace)
	}
	return wait
}

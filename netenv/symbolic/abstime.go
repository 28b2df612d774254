package symbolic

import (
	"time"

	"github.com/actfuzz/actfuzz/netenv/sim"
	"github.com/actfuzz/actfuzz/netenv/tcp"
)

// Timers at an absolute time.
//
// An event scheduled with an offset after now has now's form plus the
// offset's; Insert gives every event that by default. A TCP sender also
// schedules two timers at an absolute instant (sim.ScheduleAt), and for
// them the running event's form is wrong:
//
//   - an application-limited sender arms its send timer at appSince + q,
//     when the application will have written the next segment (tcp's
//     appTimeFor: q is the time the rate takes to write the bytes still
//     missing, a constant of the path). appSince is the instant the
//     application's clock last restarted (its start, a new rate at an
//     environment switch, blocking on the full send buffer, waking on an
//     ACK), whose form is the form of the event that ran then: a constant
//     while the application runs on its own clock, which is the usual
//     case of RFC 7661's application-limited periods, and an ACK's form
//     after it woke. ScheduleAt never schedules in the past, so the time
//     is max(appSince + q, now);
//   - pacing arms the send timer at nextPace, and each packet sets
//     nextPace = max(nextPace, now) + gap (Linux's earliest departure
//     time). The sender first compares now < nextPace itself.
//
// The sched implements tcp.ClockTracker: it keeps, per flow, the forms of
// appSince and nextPace, and decides the maxima and the sender's own
// comparisons — now < nextPace, and now against appSince + q for the
// segment (or the runt's first byte) output's next step needs, or for
// the send buffer's limit, at which the application blocks (AppCheck) —
// on the path (path.decide: a fork, or a
// constraint, exactly as a comparison of two timestamps), so that the
// timer gets the form appSince's + q, nextPace's, or now's, and the class
// is the set of vectors on which the sender made the same comparisons.
// The gap and q are taken as the sender computed them at the witness:
// constants of the path, as a link's transmission time is. q is one as
// long as the sequence numbers are: a runt (a segment the application's
// rate cut short, sent when nothing is in flight, RFC 896) has the size
// the application wrote from appSince to now, so when that span is not a
// constant the run is concretized (AppCut).
//
// The gap is wire bytes / PacingRate, and the rate is the algorithm's:
// BBR paces at pacing_gain·BtlBw, a windowed maximum of delivery-rate
// samples, each delivered / max(send elapsed, ACK elapsed)
// (draft-cheng-iccrg-delivery-rate-estimation §3.3), and before its first
// RTT sample at the initial window over SRTT (Linux's
// bbr_init_pacing_rate_from_rtt). When such an interval, or an RTT sample,
// is not a constant of the class, the rate and so the gap may differ
// between its vectors, and nextPace's form, built with the witness's gap,
// is not the pacing timer's time on them: a class whose decisions look
// alike may hold vectors on which the timer runs elsewhere among the
// other events. No linear form follows a quotient by the delays, so the
// sched notes, per flow, when a rate sample it is told of (tcp.RateTracker)
// has an interval whose operands are not constants of the class (or whose
// instants have no known form), or when an RTT sample does (rtt.go: SRTT
// and the minimum RTT then vary too); from then on every gap that flow
// computes is taken at the witness and the run is concretized
// (Report.PaceConcretized counts these branches). The mark is never
// lifted: the algorithm's state (BtlBw's ten-round window) may keep the
// sample, and nothing here can tell when it has left. The maxima are not
// decided on the path: that would fork every TCP window on rate samples
// that most algorithms never read.
//
// The concrete values are checked against the forms' witness values; a
// form that disagrees (a bug) or overflows is replaced by its concrete
// value and a timer armed from it keeps the running event's form, as every
// absolute timer did before: the run is marked Concretized.

// clockForms are one flow's absolute instants.
type clockForms struct {
	app  form // appSince
	pace form // nextPace
	// paceLost: nextPace's form could not be followed; it holds the
	// concrete value until the next reset.
	paceLost bool
	// rateVaries: a rate sample or RTT sample the flow's algorithm was
	// given may differ over the class, and so may its pacing rate.
	rateVaries bool
}

// clockFor is flow's forms; a flow starts with appSince = nextPace = 0.
func (s *sched) clockFor(flow int32) *clockForms {
	for int(flow) >= len(s.clocks) {
		s.clocks = append(s.clocks, clockForms{})
	}
	return &s.clocks[flow]
}

// AppClock: appSince = now, whose form is the running event's.
func (s *sched) AppClock(flow int32, since time.Duration) {
	c := s.clockFor(flow)
	c.app = s.nowForm()
	if c.app.at != int64(since) {
		s.rttMismatch++ // not reachable: the sender passes its now
		c.app = constForm(since)
	}
}

// ArmAppWrite: ev at max(appSince + q, now).
func (s *sched) ArmAppWrite(flow int32, ev *sim.Event, at time.Duration) {
	f, now, d, ok := s.sinceApp(flow, at)
	if !ok {
		return
	}
	if !s.sign(condLT, &d) {
		// now ≥ appSince + q: ScheduleAt takes now.
		f = now
	}
	// The sender arms the timer only when the application has not yet
	// written the segment: rate·(now − appSince) < 8e9·(bytes missing),
	// which over the integers is now < appSince + q (q is rounded up).
	// AppCheck has put that comparison on the path already, where the
	// sender made it, so the maximum above is decided without a fork.
	// (Before AppCheck it was decided here only, after the sender had
	// taken its step: a child forked here took the sender's other step,
	// which does not reach this point, and was flagged Diverged; and the
	// step that sends at once decided nothing.)
	s.arm = armed{ev: ev, at: f.at, a: f.a, abs: true}
}

// AppCheck: the sender found now ≥ appSince + q (reached), or not. The
// comparison is decided on the path like a comparison of two timestamps,
// wherever the sender makes it, whichever way it goes: a child forked
// here replays its parent's decisions up to and including this one, then
// takes the sender's other step (it sends where its parent waited, or
// the reverse), and is as exact as any other child.
func (s *sched) AppCheck(flow int32, at time.Duration, reached bool) {
	_, _, d, ok := s.sinceApp(flow, at)
	if !ok {
		return
	}
	if s.sign(condLT, &d) == reached {
		s.rttMismatch++ // not reachable: sign answers as the witness does
		s.concretize()
	}
}

// sinceApp returns the forms of at = appSince + q (q, at's offset from
// appSince, is a constant of the path), of now, and of now − at. When now −
// at has no form (an overflow) the run is concretized and ok is false.
func (s *sched) sinceApp(flow int32, at time.Duration) (f, now, d form, ok bool) {
	c := s.clockFor(flow)
	f = form{at: int64(at), a: c.app.a}
	now = s.nowForm()
	if d, ok = comb(1, &now, -1, &f); !ok {
		s.concretize()
	}
	return f, now, d, ok
}

// AppCut: a runt whose size is what the application wrote between
// appSince and now. When that span's form is not a constant, the size,
// every later sequence number and the q of every later application timer
// vary over the class in a way no linear form follows: the run is
// concretized, as an RTO offset that cannot be followed is (rtt.go).
func (s *sched) AppCut(flow int32) {
	c := s.clockFor(flow)
	now := s.nowForm()
	if d, ok := comb(1, &now, -1, &c.app); !ok || !d.constant() {
		s.concretize()
	}
}

// PaceAdvance: nextPace = max(nextPace, now) + gap.
func (s *sched) PaceAdvance(flow int32, gap, next time.Duration) {
	c := s.clockFor(flow)
	if c.rateVaries {
		// The gap is taken at the witness (above); the run is
		// concretized (path.concretized is kept for the other
		// causes, so that the tests can tell this one apart).
		s.p.paceConcretized = true
	}
	if !c.paceLost {
		now := s.nowForm()
		d, ok := comb(1, &c.pace, -1, &now)
		if ok {
			if s.sign(condLT, &d) {
				c.pace = now // nextPace < now
			}
			c.pace.at += int64(gap)
			ok = c.pace.at == int64(next)
			if !ok {
				s.rttMismatch++
			}
		}
		c.paceLost = !ok
	}
	if c.paceLost {
		c.pace = constForm(next)
	}
}

// PaceReset: nextPace = 0.
func (s *sched) PaceReset(flow int32) {
	c := s.clockFor(flow)
	c.pace, c.paceLost = form{}, false
}

// PaceCheck: the sender compared now < nextPace; when it waits, ev goes at
// nextPace.
func (s *sched) PaceCheck(flow int32, ev *sim.Event, wait bool) {
	c := s.clockFor(flow)
	if c.paceLost {
		// The sender's comparison is made on a value whose form is
		// lost: the class may hold vectors on which it goes the
		// other way.
		s.concretize()
		return
	}
	now := s.nowForm()
	d, ok := comb(1, &now, -1, &c.pace)
	if !ok {
		s.concretize()
		return
	}
	if s.sign(condLT, &d) != wait {
		s.rttMismatch++ // not reachable: sign answers as the witness does
		s.concretize()
		return
	}
	if wait {
		s.arm = armed{ev: ev, at: c.pace.at, a: c.pace.a, abs: true}
	}
}

// RateSample: the interval max(sent − firstSent, now − priorTime) may
// vary over the class unless both differences are constants of it.
func (s *sched) RateSample(flow int32, priorTime, firstSent, sent time.Duration) {
	c := s.clockFor(flow)
	if c.rateVaries {
		return
	}
	now := s.nowForm()
	c.rateVaries = !s.constSpan(&now, int64(priorTime)) || !s.constSpanAt(int64(sent), int64(firstSent))
}

// constSpan reports whether f − (instant t) is a constant of the class:
// false when it is not, or when t's form is unknown.
func (s *sched) constSpan(f *form, t int64) bool {
	g, ok := s.timeForm(t)
	return ok && f.a == g.a
}

// constSpanAt is constSpan for instant u − instant t.
func (s *sched) constSpanAt(u, t int64) bool {
	f, ok := s.timeForm(u)
	return ok && s.constSpan(&f, t)
}

// noteRTTSample marks flow's rate as varying when the RTT sample now −
// sent does: the algorithm reads SRTT and the minimum RTT (BBR paces
// from SRTT before its first sample, and a rate sample shorter than the
// minimum RTT is discarded, tcp's onAck).
func (s *sched) noteRTTSample(flow int32, sent time.Duration) {
	c := s.clockFor(flow)
	if !c.rateVaries {
		now := s.nowForm()
		c.rateVaries = !s.constSpan(&now, int64(sent))
	}
}

var _ tcp.ClockTracker = (*sched)(nil)
var _ tcp.RateTracker = (*sched)(nil)

package symbolic

import (
	"time"

	"github.com/actfuzz/actfuzz/netenv/sim"
	"github.com/actfuzz/actfuzz/netenv/tcp"
)

// RTT-dependent timers (issue 22, item 4).
//
// A TCP sender arms its retransmission timer RTO() after now, and RTO() is
// computed from RTT samples (RFC 6298 §2), each the difference of two
// timestamps: now − the send time of the segment acknowledged. When a
// timestamp depends on the uncertain delays, so does the timer's offset, and
// a scheduler that took it for a constant of the path would order the timer
// by its value at the witness only: a child forked on the other side of a
// comparison that involves it would not follow its parent's decisions
// (Diverged).
//
// The sched therefore implements tcp.RTTTracker: it replays the sender's
// estimator (tcp's rttEstimator: RFC 6298 with Linux's variant of the
// RTTVAR update and its 200 ms floor on the variance term) on linear forms,
// and gives the timer the form now + RTO instead of now's form alone. What
// stays linear:
//
//   - a sample now − sent is the difference of two forms: now's is the
//     running event's, sent's that of the event that ran at the send time
//     (the sched keeps the forms of the times it handed out; when two
//     events with different forms ran at that time, which one sent is not
//     known, and the estimator is concretized);
//   - srtt += (m − srtt)/8 and the RTTVAR update are sums of forms and of
//     forms divided by 8 or 4 (RFC 6298 §2.3's α = 1/8, β = 1/4, kept as
//     srtt and 4·RTTVAR by Linux's tcp_rtt_estimator). Go's integer division
//     truncates toward zero; a form c + u·Σ a_i·x_i divided by k is linear
//     when k divides every a_i (x_i are integers), and is then
//     ⌊c/k⌋ + u·Σ (a_i/k)·x_i or ⌈c/k⌉ + …, by the sign of the form,
//     which is a decision unless k divides c. The coefficients are in
//     units of R/D (path.go), so D/8 survives one division by 8; a division
//     that does not come out even concretizes the form;
//   - the sign tests (m ≤ 0, m − srtt < 0 for |m − srtt|, the deviation
//     term > 0) and the clamps (max with MinRTO, RFC 6298 §2.4; min with
//     MaxRTO, §2.5) are comparisons of forms: they go through the path's
//     decide, which forks or constrains the path condition exactly as a
//     comparison of two timestamps does;
//   - the backoff (§5.5) multiplies the form by a power of two.
//
// The concrete values the sender computed are passed along and checked
// against the forms' values at the witness; an estimator whose forms
// disagree (which would be a bug here) or cannot be kept exactly takes the
// concrete values from then on, and a timer armed from it gets a constant
// offset, as every offset did before: the run is marked Concretized.
//
// Comparisons the sender makes itself with these values (idle restart and
// cwnd validation against RTO(), the minimum RTT) remain concrete, as
// doc.go says. Which segment a sample times is chosen by sequence order and
// by the largest SACK RTT, which compares send times: segments never
// retransmitted were sent in sequence order, so that choice is the same on
// the whole class, except between segments sent at one instant, whose
// forms are then ambiguous (above).

// form is a linear form over the delays: its value at the run's witness
// (ns) and its coefficients (units of u = R/D).
type form struct {
	at int64
	a  [MaxVars]int32
}

func constForm(v time.Duration) form { return form{at: int64(v)} }

func (f *form) constant() bool { return f.a == [MaxVars]int32{} }

// rttMirror is one sender's estimator on forms: srtt and mdev (4·RTTVAR)
// as tcp's rttEstimator keeps them, and the last RTO form computed from
// them (rtoFor's cache: a form the path already decided need not be
// decided again).
type rttMirror struct {
	srtt, mdev form
	// inexact: a sample could not be followed, so srtt and mdev hold
	// their concrete values and their dependence on the delays is lost
	// for good (every later value derives from them).
	inexact bool
	cached  bool
	backoff uint32
	rto     form
	rtoOK   bool
}

// armed is the timer ArmRTO announced, for Insert: its timestamp and the
// form of its offset; abs: the form of its time (a timer at an absolute
// time, abstime.go).
type armed struct {
	ev  *sim.Event
	at  int64
	a   [MaxVars]int32
	abs bool
}

// timeMark is the form of an instant: the time and coefficient vector of
// an event the sched handed out; amb when events with different vectors
// ran at that time.
type timeMark struct {
	at  int64
	vec int32
	amb bool
}

// noteTime records the form of the running event's time (take).
func (s *sched) noteTime(at int64, vec int32) {
	if vec != 0 {
		s.anyVec = true
	}
	if k := len(s.marks); k > 0 {
		last := &s.marks[k-1]
		if last.at == at {
			if last.vec != vec {
				last.amb = true
			}
			return
		}
		if at < last.at {
			s.marksUnsorted = true // I runs nodes out of time order
		}
	}
	s.marks = append(s.marks, timeMark{at: at, vec: vec})
}

// timeForm is the form of instant t, at which the sender sent what it
// samples. ok is false when the instant's form is unknown.
func (s *sched) timeForm(t int64) (form, bool) {
	f := form{at: t}
	if !s.anyVec {
		return f, true // every instant so far is a constant
	}
	found, vec := false, int32(0)
	for k := len(s.marks) - 1; k >= 0; k-- {
		m := &s.marks[k]
		if m.at < t && !s.marksUnsorted {
			break
		}
		if m.at != t {
			continue
		}
		if m.amb || found && m.vec != vec {
			return f, false
		}
		found, vec = true, m.vec
	}
	if !found {
		// Setup (Start) runs at time 0 before any event; anything
		// else is an instant no event ran at.
		return f, t == 0
	}
	f.a = s.vt.vecs[vec]
	return f, true
}

// nowForm is the form of the running event's time.
func (s *sched) nowForm() form {
	if !s.hasCur {
		return form{at: s.curAt}
	}
	return form{at: s.curAt, a: s.vt.vecs[s.curVec]}
}

// constPart is c in f = c + u·Σ a_i·x_i.
func (s *sched) constPart(f *form) int64 {
	c := f.at
	for i := 0; i < s.p.n; i++ {
		c -= int64(f.a[i]) * s.p.wns[i]
	}
	return c
}

// sign decides f < 0 (condLT) or f ≤ 0 (condLE) on the path.
func (s *sched) sign(kind uint8, f *form) bool {
	out := f.at < 0
	if kind == condLE {
		out = f.at <= 0
	}
	if f.constant() {
		return out
	}
	return s.p.decide(kind, &f.a, s.constPart(f), out)
}

// comb is x·f + y·g, or false on overflow of a coefficient.
func comb(x int64, f *form, y int64, g *form) (form, bool) {
	r := form{at: x*f.at + y*g.at}
	for i := range r.a {
		v := x*int64(f.a[i]) + y*int64(g.a[i])
		if v != int64(int32(v)) {
			return r, false
		}
		r.a[i] = int32(v)
	}
	return r, true
}

// quo is f/k truncated toward zero, as Go divides; neg is the decided sign
// of f (f < 0). ok is false when the quotient is not linear.
func (s *sched) quo(f *form, k int64, neg bool) (form, bool) {
	r := form{at: f.at / k}
	if f.constant() {
		return r, true
	}
	for i := range f.a {
		if int64(f.a[i])%k != 0 {
			return r, false
		}
		r.a[i] = int32(int64(f.a[i]) / k)
	}
	c := s.constPart(f)
	q := floorDiv(c, k)
	if neg {
		q = ceilDiv(c, k)
	}
	r.at = q
	for i := 0; i < s.p.n; i++ {
		r.at += int64(r.a[i]) * s.p.wns[i]
	}
	return r, r.at == f.at/k
}

// quoSigned decides the sign of f when the quotient depends on it.
func (s *sched) quoSigned(f *form, k int64) (form, bool) {
	neg := f.at < 0
	if !f.constant() && s.constPart(f)%k != 0 {
		neg = s.sign(condLT, f)
	}
	return s.quo(f, k, neg)
}

// mirror is flow's estimator.
func (s *sched) mirror(flow int32) *rttMirror {
	for int(flow) >= len(s.rtt) {
		s.rtt = append(s.rtt, rttMirror{})
	}
	return &s.rtt[flow]
}

// RTTSample replays tcp's rttEstimator.sample on forms.
func (s *sched) RTTSample(flow int32, sent time.Duration, before, after tcp.RTTState) {
	s.noteRTTSample(flow, sent) // abstime.go: pacing rates
	m := s.mirror(flow)
	m.cached = false
	if m.srtt.at != int64(before.SRTT) || m.mdev.at != int64(before.MDev) {
		// Not reachable: every change of the estimator comes here.
		s.rttMismatch++
		m.srtt, m.mdev = constForm(before.SRTT), constForm(before.MDev)
	}
	ok := !m.inexact
	if ok {
		// No decision on forms that are not the estimator's: they
		// would constrain the path wrongly.
		now := s.nowForm()
		var sf, sample form
		sf, ok = s.timeForm(int64(sent))
		if ok {
			sample, ok = comb(1, &now, -1, &sf)
		}
		if ok {
			ok = s.estimate(m, sample)
		}
		if ok && (m.srtt.at != int64(after.SRTT) || m.mdev.at != int64(after.MDev)) {
			s.rttMismatch++
			ok = false
		}
	}
	if !ok {
		m.inexact = true
		m.srtt, m.mdev = constForm(after.SRTT), constForm(after.MDev)
	}
}

// concretize notes that a timer offset that may depend on the delays is
// taken at its witness value. An estimator that lost its forms costs
// nothing until the timer is armed from it (the last ACK of a transfer
// samples and cancels the timer).
func (s *sched) concretize() {
	s.rttConcrete++
	s.p.concretized = true
}

// estimate is rttEstimator.sample: RFC 6298 §2.2 for the first sample,
// §2.3 (with Linux's damped increase of the deviation when the sample is
// below srtt) for the others. The minimum RTT is not kept: no timer
// depends on it.
func (s *sched) estimate(m *rttMirror, r form) bool {
	if s.sign(condLE, &r) {
		r = constForm(1) // m ≤ 0: the sender takes 1 ns
	}
	var ok bool
	if m.srtt.at == 0 {
		// No sample yet (srtt ≥ 1 after one, on every vector).
		m.srtt = r
		m.mdev, ok = comb(2, &r, 0, &r)
		return ok
	}
	err, ok := comb(1, &r, -1, &m.srtt)
	if !ok {
		return false
	}
	neg := s.sign(condLT, &err)
	q, ok := s.quo(&err, 8, neg)
	if !ok {
		return false
	}
	if m.srtt, ok = comb(1, &m.srtt, 1, &q); !ok {
		return false
	}
	q4, ok := s.quoSigned(&m.mdev, 4)
	if !ok {
		return false
	}
	if neg {
		// |m − srtt| − mdev/4, eight times smaller when positive.
		d, ok := comb(-1, &err, -1, &q4)
		if !ok {
			return false
		}
		if !s.sign(condLE, &d) {
			if d, ok = s.quo(&d, 8, false); !ok {
				return false
			}
		}
		m.mdev, ok = comb(1, &m.mdev, 1, &d)
		return ok
	}
	d, ok := comb(1, &err, -1, &q4)
	if !ok {
		return false
	}
	m.mdev, ok = comb(1, &m.mdev, 1, &d)
	return ok
}

// rtoFor is Sender.RTO() on forms: srtt + max(mdev, MinRTO), at most
// MaxRTO, shifted by the backoff and at most MaxRTO again.
func (s *sched) rtoFor(m *rttMirror, backoff uint32) (form, bool) {
	if m.cached && m.backoff == backoff {
		return m.rto, m.rtoOK
	}
	r, ok := s.rtoForms(m, backoff)
	m.cached, m.backoff, m.rto, m.rtoOK = true, backoff, r, ok
	return r, ok
}

func (s *sched) rtoForms(m *rttMirror, backoff uint32) (form, bool) {
	maxF := constForm(tcp.MaxRTO)
	capMax := func(r form) (form, bool) {
		d, ok := comb(1, &r, -1, &maxF)
		if !ok {
			return r, false
		}
		if !s.sign(condLE, &d) {
			return maxF, true
		}
		return r, true
	}
	r := constForm(tcp.InitialRTO)
	if m.srtt.at != 0 {
		minF := constForm(tcp.MinRTO)
		v := m.mdev
		d, ok := comb(1, &m.mdev, -1, &minF)
		if !ok {
			return r, false
		}
		if s.sign(condLE, &d) {
			v = minF
		}
		if r, ok = comb(1, &m.srtt, 1, &v); !ok {
			return r, false
		}
		if r, ok = capMax(r); !ok {
			return r, false
		}
	}
	r, ok := comb(int64(1)<<min(backoff, 16), &r, 0, &r)
	if !ok {
		return r, false
	}
	return capMax(r)
}

// ArmRTO computes the form of the timer's offset; Insert adds it to now's.
func (s *sched) ArmRTO(flow int32, ev *sim.Event, backoff uint32, rto time.Duration) {
	m := s.mirror(flow)
	f, ok := constForm(rto), false
	if !m.inexact {
		f, ok = s.rtoFor(m, backoff)
	}
	if ok && f.at != int64(rto) {
		s.rttMismatch++
		ok = false
	}
	if !ok {
		s.concretize()
		f = constForm(rto)
	}
	s.arm = armed{ev: ev, at: s.curAt + int64(rto), a: f.a}
}

var _ tcp.RTTTracker = (*sched)(nil)

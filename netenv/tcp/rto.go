package tcp

import (
	"time"

	"github.com/actfuzz/actfuzz/netenv/sim"
)

// RTO constants: RFC 6298 §2 with Linux's values.
const (
	// InitialRTO is RFC 6298 §2.1's 1 s.
	InitialRTO = time.Second
	// MinRTO is Linux's TCP_RTO_MIN, 200 ms (RFC 6298 §2.4 allows a
	// minimum below its suggested 1 s).
	MinRTO = 200 * time.Millisecond
	// MaxRTO is Linux's TCP_RTO_MAX, 120 s (RFC 6298 §2.5 allows ≥ 60 s).
	MaxRTO = 120 * time.Second
)

// rttEstimator keeps srtt and the mean deviation as Linux's
// tcp_rtt_estimator does: the RFC 6298 gains (α = 1/8, β = 1/4), except that
// a sample below srtt moves the deviation eight times less when it would
// increase it, so that a falling RTT does not inflate the RTO; and the
// variance term of the RTO is never below MinRTO, so that
// RTO = srtt + max(4·rttvar, MinRTO).
type rttEstimator struct {
	srtt   time.Duration // 0 before the first sample
	mdev   time.Duration // 4 × mean deviation (RFC 6298's 4·RTTVAR)
	minRTT time.Duration
}

func (r *rttEstimator) sample(m time.Duration) {
	if m <= 0 {
		m = 1
	}
	if r.minRTT == 0 || m < r.minRTT {
		r.minRTT = m
	}
	if r.srtt == 0 {
		// RFC 6298 §2.2.
		r.srtt = m
		r.mdev = 2 * m // RTTVAR = R/2, so 4·RTTVAR = 2R
		return
	}
	err := m - r.srtt
	r.srtt += err / 8
	if err < 0 {
		err = -err
		d := err - r.mdev/4
		if d > 0 {
			d /= 8
		}
		r.mdev += d
	} else {
		r.mdev += err - r.mdev/4
	}
}

// rttvar is RFC 6298's RTTVAR (mean deviation).
func (r *rttEstimator) rttvar() time.Duration { return r.mdev / 4 }

// rto is the current timeout before backoff.
func (r *rttEstimator) rto() time.Duration {
	if r.srtt == 0 {
		return InitialRTO
	}
	v := min(r.srtt+max(r.mdev, MinRTO), MaxRTO)
	return v
}

// RTTTracker follows the retransmission timer's arithmetic for a scheduler
// that keeps timestamps as expressions of uncertain delays (the symbolic
// back-end, netenv/symbolic/rtt.go): the RTO is computed from RTT samples,
// so the timer's offset is such an expression too, and the scheduler can
// only order the timer exactly if it knows which. The tracker sees every
// sample the estimator takes and every arming of the timer with RTO(), with
// the concrete values, and replays the estimator on its expressions.
//
// A sender finds it by asking its simulator's scheduler (NewSender). With
// the default heap it is nil: one nil check per sample and per arming, and
// nothing else changes.
type RTTTracker interface {
	// RTTSample: the sender of flow took the sample now − sent; before
	// and after are its estimator's state around the sample.
	RTTSample(flow int32, sent time.Duration, before, after RTTState)
	// ArmRTO: the sender of flow is about to schedule ev, its
	// retransmission timer, rto = RTO() after now, with the backoff
	// exponent backoff.
	ArmRTO(flow int32, ev *sim.Event, backoff uint32, rto time.Duration)
}

// RTTState is the estimator's state: SRTT (0 before the first sample) and
// MDev, 4·RTTVAR (RFC 6298 §2), which RTO() is computed from.
type RTTState struct{ SRTT, MDev time.Duration }

func (r *rttEstimator) state() RTTState { return RTTState{r.srtt, r.mdev} }

// sampleRTT feeds the estimator the sample m, taken now (RFC 6298 §2.2–2.3).
func (s *Sender) sampleRTT(m time.Duration) {
	if s.track == nil {
		s.rtt.sample(m)
		return
	}
	before := s.rtt.state()
	s.rtt.sample(m)
	s.track.RTTSample(s.cfg.Flow, s.sim.Now()-m, before, s.rtt.state())
}

// armRTO (re)starts the retransmission timer RTO() from now (RFC 6298
// §5.1, §5.3, §5.6).
func (s *Sender) armRTO() {
	rto := s.RTO()
	if s.track != nil {
		s.track.ArmRTO(s.cfg.Flow, s.rtoEv, s.backoff, rto)
	}
	s.sim.Schedule(s.rtoEv, rto)
}

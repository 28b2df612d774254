package tcp

import "time"

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

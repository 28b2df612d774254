package ccai

import "time"

// InfiniteSSThresh is the initial slow-start threshold (Linux's
// TCP_INFINITE_SSTHRESH).
const InfiniteSSThresh uint32 = 0x7fffffff

// Sock is the part of a TCP sender's state that congestion control reads and
// writes (the relevant fields of Linux's struct tcp_sock). The TCP machinery
// keeps every field current before it calls the algorithm.
//
// An algorithm may write Cwnd, CwndCnt, CwndClamp and SSThresh (as Linux's
// modules write snd_cwnd, snd_cwnd_cnt, snd_cwnd_clamp and snd_ssthresh)
// and PacingRate; every other field is the machinery's and is read-only
// to the algorithm (PriorCwnd and PriorSSThresh are saved by the machinery
// for undo; CAState changes only through the machinery, which calls
// SetState first). The returned values of SSThresh and UndoCwnd are
// applied by the machinery.
type Sock struct {
	Cwnd          uint32 // snd_cwnd, packets
	CwndCnt       uint32 // snd_cwnd_cnt: linear-increase accumulator
	CwndClamp     uint32 // snd_cwnd_clamp
	SSThresh      uint32 // snd_ssthresh
	PriorCwnd     uint32 // cwnd when the last reduction started
	PriorSSThresh uint32 // ssthresh saved for undo
	CAState       CAState

	SRTT   time.Duration // smoothed RTT (RFC 6298), 0 before the first sample
	RTTVar time.Duration // mean deviation as Linux keeps it (mdev)
	MinRTT time.Duration // windowed minimum RTT, 0 before the first sample

	PacketsOut uint32 // segments sent and not cumulatively acknowledged
	SackedOut  uint32 // of those, SACKed (or dupACK-counted without SACK)
	LostOut    uint32 // of those, marked lost
	RetransOut uint32 // retransmissions in flight

	Delivered     uint64        // packets delivered (acked or SACKed) so far
	DeliveredTime time.Duration // time of the last delivery
	MaxPacketsOut uint32        // packets_out high-water mark of the current window (max_packets_out)
	PriorInFlight uint32        // in-flight before the ACK being processed
	CwndLimited   bool          // the sender was cwnd-limited in the current window (is_cwnd_limited)
	AppLimited    bool          // the sender is application-limited now

	SndUna uint64 // first unacknowledged byte
	SndNxt uint64 // next byte to send

	MSS        uint32        // sender maximum segment size, bytes
	Now        time.Duration // simulated time since the start of the run
	LastSend   time.Duration // time of the last data transmission (lsndtime)
	PacingRate uint64        // bytes per second; 0 disables pacing

	// OneWayDelay is the forward one-way delay of the newest data packet
	// this ACK acknowledges: its arrival time at the receiver minus its send
	// time, which TCP timestamps (RFC 7323) let a real sender estimate up to
	// a constant clock offset. 0 means unknown (timestamps off). TCP-LP
	// needs it; without it LP is Reno, as in Linux without timestamps.
	OneWayDelay time.Duration

	Profile Profile
}

// InFlight is the number of packets in flight (Linux's
// tcp_packets_in_flight). It uses uint32 arithmetic, so an inconsistent
// scoreboard wraps exactly as it would in the kernel.
func (s *Sock) InFlight() uint32 {
	return s.PacketsOut - (s.SackedOut + s.LostOut) + s.RetransOut
}

// InSlowStart reports whether the sender is in slow start: cwnd below
// ssthresh (Linux's tcp_in_slow_start). ProfileLinux310 also counts
// cwnd == ssthresh as slow start, as 3.10's cong_avoid ops tested
// snd_cwnd <= snd_ssthresh.
func (s *Sock) InSlowStart() bool {
	if s.Profile == ProfileLinux310 {
		return s.Cwnd <= s.SSThresh
	}
	return s.Cwnd < s.SSThresh
}

// IsCwndLimited reports whether the window is the limit on sending, so that
// growing it makes sense (Linux's tcp_is_cwnd_limited, RFC 7661): the
// sender was cwnd-limited in the current window (CwndLimited, kept by the
// sender as tcp_cwnd_validate does), or in slow start it has used half of
// it. CwndLimited counts in slow start too since commit f4ce91ce12a7
// ("tcp: fix tcp_cwnd_validate() to not forget is_cwnd_limited", 6.1).
//
// ProfileLinux310 uses 3.10's per-ACK test instead: the window counts as
// limiting when in-flight before the ACK was within tcp_max_burst (3
// packets) of it. The windowed test came with commit ca8a22634381 ("tcp:
// make cwnd-limited checks measurement-based, and gentler", 3.16).
func (s *Sock) IsCwndLimited() bool {
	if s.Profile == ProfileLinux310 {
		return s.PriorInFlight >= s.Cwnd || s.Cwnd-s.PriorInFlight <= 3
	}
	if s.CwndLimited {
		return true
	}
	if s.InSlowStart() {
		return s.Cwnd < 2*s.MaxPacketsOut
	}
	return false
}

// SlowStart grows cwnd by acked packets without passing ssthresh and returns
// the acked packets left over for congestion avoidance (RFC 5681 §3.1 with
// RFC 3465 byte counting, L = ∞ as in Linux).
//
// ProfileLinux310 grows cwnd by one packet per ACK, whatever the ACK covers,
// may overshoot ssthresh by one, and returns no leftover: that is 3.10's
// tcp_slow_start, before commit 9f9843a751d0 ("tcp: properly handle stretch
// acks in slow start", 3.18).
func (s *Sock) SlowStart(acked uint32) uint32 {
	if s.Profile == ProfileLinux310 {
		w := max(s.Cwnd, 1)
		s.CwndCnt += w
		delta := s.CwndCnt / w
		s.CwndCnt -= delta * w
		s.Cwnd = min(w+delta, s.CwndClamp)
		return 0
	}
	cwnd := min(s.Cwnd+acked, s.SSThresh)
	acked -= cwnd - s.Cwnd
	s.Cwnd = min(cwnd, s.CwndClamp)
	return acked
}

// CongAvoidAI is additive increase: cwnd grows by one packet per w packets
// acknowledged (Linux's tcp_cong_avoid_ai).
//
// ProfileLinux counts acked packets (commit e73ebb0881ea "tcp: stretch ACK
// fixes prep", 3.19). ProfileLinux310 counts ACKs, one increment per call, as
// 3.10 did.
func (s *Sock) CongAvoidAI(w, acked uint32) {
	if w == 0 {
		w = 1
	}
	if s.Profile == ProfileLinux310 {
		if s.CwndCnt >= w {
			if s.Cwnd < s.CwndClamp {
				s.Cwnd++
			}
			s.CwndCnt = 0
		} else {
			s.CwndCnt++
		}
		return
	}
	// If credits accumulated at a higher w, apply them gently now.
	if s.CwndCnt >= w {
		s.CwndCnt = 0
		s.Cwnd++
	}
	s.CwndCnt += acked
	if s.CwndCnt >= w {
		delta := s.CwndCnt / w
		s.CwndCnt -= delta * w
		s.Cwnd += delta
	}
	s.Cwnd = min(s.Cwnd, s.CwndClamp)
}

// RenoSSThresh halves the window, never below 2 (RFC 5681 eq. 4, Linux's
// tcp_reno_ssthresh).
func RenoSSThresh(s *Sock) uint32 {
	return max(s.Cwnd>>1, 2)
}

// RenoUndoCwnd is the default undo for algorithms without state of their
// own.
//
// ProfileLinux restores max(cwnd, prior_cwnd) (tcp_reno_undo_cwnd, made
// mandatory by commit e97991832a4e "tcp: make undo_cwnd mandatory for
// congestion modules", 4.10). ProfileLinux310 reproduces the kernel's
// fallback of that era, max(cwnd, 2·ssthresh) from tcp_undo_cwnd_reduction:
// correct only for halving algorithms, and it lets cwnd jump to 4 when
// cwnd < 4 because RenoSSThresh never goes below 2 (ACT paper §4.5).
func RenoUndoCwnd(s *Sock) uint32 {
	if s.Profile == ProfileLinux310 {
		return max(s.Cwnd, s.SSThresh<<1)
	}
	return max(s.Cwnd, s.PriorCwnd)
}

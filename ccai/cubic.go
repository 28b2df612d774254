package ccai

import "time"

// CUBIC constants (RFC 8312 §4.5–4.6 and Linux's defaults).
const (
	// cubicBeta is the multiplicative decrease factor β_cubic = 0.7, in
	// units of 1/1024 (RFC 8312 §4.5; Linux's beta = 717).
	cubicBeta = 717
	// cubicScale is C = 0.4 scaled as Linux's bic_scale·10 = 410, with the
	// cube in units of 2^-10 s (RFC 8312 §4.1, C = 0.4).
	cubicRTTScale = 410
	// cubicTimeShift: CUBIC's time unit is 2^-10 s (BICTCP_HZ = 10).
	cubicTimeShift = 10
	// cubicFactor makes K = cbrt(cubicFactor·(W_max − cwnd)) come out in
	// 2^-10 s: 2^(10+3·10) / 410.
	cubicFactor = (uint64(1) << (cubicTimeShift + 3*cubicTimeShift)) / cubicRTTScale
	// cubicBetaScale: Reno-friendly additive increase 3(1−β)/(1+β) per RTT
	// (RFC 8312 §4.2), expressed as acked packets per window increment ×8.
	cubicBetaScale = 8 * (1024 + cubicBeta) / 3 / (1024 - cubicBeta)
	// HyStart (Ha & Rhee, "Taming the elephants", 2011; Linux defaults).
	hystartLowWindow  = 16                    // no HyStart below 16 packets
	hystartMinSamples = 8                     // RTT samples per round
	hystartAckDelta   = 2 * time.Millisecond  // ACK-train spacing
	hystartDelayMin   = 4 * time.Millisecond  // delay-increase threshold clamp
	hystartDelayMax   = 16 * time.Millisecond // delay-increase threshold clamp
	// cubicUpdateHold: recompute cnt at most every HZ/32 while cwnd is
	// unchanged (Linux), and at most once per jiffy (1 ms).
	cubicUpdateHold = time.Second / 32
	cubicJiffy      = time.Millisecond
	// cubic310AckRatioShift/Limit: 3.10's delayed-ACK ratio estimate.
	cubic310AckRatioShift = 4
	cubic310AckRatioLimit = 32 << cubic310AckRatioShift
)

// Cubic is CUBIC (RFC 8312) as Linux implements it: the cubic window curve
// anchored at W_max, fast convergence, the TCP-friendly (Reno-emulation)
// region, and HyStart's ACK-train and delay-increase exits from slow start.
//
// Profile differences:
//   - ProfileLinux shifts the epoch forward over an idle period on
//     EventTxStart (commit 30927520dbae "tcp_cubic: better follow cubic curve
//     after idle period", 4.2). ProfileLinux310 does not, so after idle or an
//     application-limited period the curve has run on and target jumps (ACT
//     paper §4.4).
//   - ProfileLinux310 keeps its own undo (restore the cwnd at loss), counts
//     one ACK per update and scales cnt by its delayed-ACK ratio estimate, as
//     3.10 did; ProfileLinux uses tcp_reno_undo_cwnd and counts acked packets.
type Cubic struct {
	cnt          uint32        // packets acked per cwnd increment
	wMax         uint32        // W_max: cwnd before the last reduction (last_max_cwnd)
	lastCwnd     uint32        // cwnd at the last update
	lastTime     time.Duration // time of the last update
	originPoint  uint32        // W_max or cwnd at epoch start (bic_origin_point)
	k            uint32        // K in 2^-10 s
	delayMin     time.Duration // minimum RTT seen
	epochStart   time.Duration // start of the current epoch; 0 = none
	ackCnt       uint32        // acked packets since the epoch start
	tcpCwnd      uint32        // W_est: the Reno-emulation window
	target       uint32        // the cubic curve's window one RTT ahead
	lossCwnd     uint32        // 3.10 only: cwnd at the last loss, for undo
	delayedAck   uint32        // 3.10 only: ACK ratio ×16
	hystartFound bool
	roundStart   time.Duration
	lastAck      time.Duration
	endSeq       uint64
	currRTT      time.Duration
	sampleCnt    uint32
}

func init() {
	Register(Info{Name: "cubic", Description: "CUBIC (RFC 8312) with HyStart, fast convergence and the TCP-friendly region", Family: FamilyCubic, Beta: 0.7, New: func() Algorithm { return &Cubic{} }})
}

// reset starts CUBIC over (on init and on a timeout). The window saved at
// the last loss survives it, so that undoing a spurious timeout can restore
// it (Linux 3.8, "tcp: fix undo after RTO for BIC"), and 3.10's delayed-ACK
// ratio estimate restarts at 2.
func (c *Cubic) reset() {
	*c = Cubic{lossCwnd: c.lossCwnd, delayedAck: 2 << cubic310AckRatioShift}
}

func (c *Cubic) Init(s *Sock) {
	c.reset()
	c.hystartReset(s)
}

func (c *Cubic) hystartReset(s *Sock) {
	c.roundStart = s.Now
	c.lastAck = s.Now
	c.endSeq = s.SndNxt
	c.currRTT = 0
	c.sampleCnt = 0
}

func (c *Cubic) SSThresh(s *Sock) uint32 {
	c.epochStart = 0
	if s.Cwnd < c.wMax {
		// Fast convergence (RFC 8312 §4.6): release bandwidth to new flows.
		c.wMax = uint32(uint64(s.Cwnd) * (1024 + cubicBeta) / (2 * 1024))
	} else {
		c.wMax = s.Cwnd
	}
	c.lossCwnd = s.Cwnd
	return max(uint32(uint64(s.Cwnd)*cubicBeta>>10), 2)
}

func (c *Cubic) CongAvoid(s *Sock, acked uint32) {
	if !s.IsCwndLimited() {
		return
	}
	if s.InSlowStart() {
		if s.Profile == ProfileLinux310 && s.SndUna > c.endSeq {
			c.hystartReset(s)
		}
		acked = s.SlowStart(acked)
		if acked == 0 {
			return
		}
	}
	if s.Profile == ProfileLinux310 {
		acked = 1
	}
	c.update(s, acked)
	s.CongAvoidAI(c.cnt, acked)
}

// update recomputes cnt from the cubic curve (RFC 8312 §4.1) and the
// TCP-friendly estimate (§4.2).
func (c *Cubic) update(s *Sock, acked uint32) {
	cwnd := s.Cwnd
	now := s.Now
	c.ackCnt += acked
	if c.lastCwnd == cwnd && now-c.lastTime <= cubicUpdateHold {
		return
	}
	if !(c.epochStart != 0 && now/cubicJiffy == c.lastTime/cubicJiffy) {
		c.lastCwnd = cwnd
		c.lastTime = now
		if c.epochStart == 0 {
			c.epochStart = max(now, 1) // 0 means "no epoch"
			c.ackCnt = acked
			c.tcpCwnd = cwnd
			if c.wMax <= cwnd {
				c.k = 0
				c.originPoint = cwnd
			} else {
				c.k = uint32(cubeRoot(cubicFactor * min(uint64(c.wMax-cwnd), (1<<63)/cubicFactor)))
				c.originPoint = c.wMax
			}
		}
		// t: time since the epoch plus one minimum RTT, in 2^-10 s, so that
		// target is the window one RTT from now.
		elapsed := now - c.epochStart + c.delayMin
		t := uint64(elapsed) << cubicTimeShift / uint64(time.Second)
		var offs uint64
		if t < uint64(c.k) {
			offs = uint64(c.k) - t
		} else {
			offs = t - uint64(c.k)
		}
		// Cap offs so the cube cannot overflow: past 2^21 units (~34 min)
		// the window is astronomically large anyway.
		offs = min(offs, 1<<21-1)
		delta := (cubicRTTScale * offs * offs * offs) >> (cubicTimeShift + 3*cubicTimeShift)
		var target uint64
		if t < uint64(c.k) {
			target = uint64(c.originPoint) - min(delta, uint64(c.originPoint))
		} else {
			target = uint64(c.originPoint) + delta
		}
		c.target = uint32(min(target, uint64(^uint32(0))))
		if c.target > cwnd {
			c.cnt = cwnd / (c.target - cwnd)
		} else {
			c.cnt = 100 * cwnd // very small increment
		}
		// Before the first loss, grow at least 5% per RTT.
		if c.wMax == 0 && c.cnt > 20 {
			c.cnt = 20
		}
	}
	// TCP-friendly region (RFC 8312 §4.2).
	if step := cwnd * cubicBetaScale >> 3; step > 0 {
		for c.ackCnt > step {
			c.ackCnt -= step
			c.tcpCwnd++
		}
	}
	if c.tcpCwnd > cwnd {
		maxCnt := cwnd / (c.tcpCwnd - cwnd)
		c.cnt = min(c.cnt, maxCnt)
	}
	if s.Profile == ProfileLinux310 {
		c.cnt = (c.cnt << cubic310AckRatioShift) / max(c.delayedAck, 1)
		c.cnt = max(c.cnt, 1)
	} else {
		c.cnt = max(c.cnt, 2)
	}
}

func (c *Cubic) SetState(s *Sock, state CAState) {
	if state == StateLoss {
		c.reset()
		c.hystartReset(s)
	}
}

func (c *Cubic) CwndEvent(s *Sock, ev Event) {
	if ev != EventTxStart || s.Profile == ProfileLinux310 {
		return
	}
	// After idle, keep cwnd growth on the cubic curve by moving the epoch
	// forward by the idle time.
	if delta := s.Now - s.LastSend; c.epochStart != 0 && delta > 0 {
		c.epochStart = min(c.epochStart+delta, s.Now)
	}
}

func (c *Cubic) UndoCwnd(s *Sock) uint32 {
	if s.Profile == ProfileLinux310 {
		return max(s.Cwnd, c.lossCwnd)
	}
	return RenoUndoCwnd(s)
}

// PktsAcked tracks the minimum delay and runs HyStart.
func (c *Cubic) PktsAcked(s *Sock, a AckSample) {
	if s.Profile == ProfileLinux310 && s.CAState == StateOpen {
		ratio := c.delayedAck - c.delayedAck>>cubic310AckRatioShift + a.PktsAcked
		c.delayedAck = min(max(ratio, 1), cubic310AckRatioLimit)
	}
	if a.RTT < 0 {
		return
	}
	// Discard delay samples right after a reduction: they may be inflated
	// by the queue that caused it.
	if c.epochStart != 0 && s.Now-c.epochStart < time.Second {
		return
	}
	delay := max(a.RTT, time.Microsecond)
	if c.delayMin == 0 || c.delayMin > delay {
		c.delayMin = delay
	}
	if !c.hystartFound && s.InSlowStart() && s.Cwnd >= hystartLowWindow {
		c.hystartUpdate(s, delay)
	}
}

func (c *Cubic) hystartUpdate(s *Sock, delay time.Duration) {
	if s.Profile == ProfileLinux && s.SndUna > c.endSeq {
		c.hystartReset(s)
	}
	// ACK train: ACKs closely spaced for longer than half the minimum RTT
	// mean the pipe is full.
	if s.Now-c.lastAck <= hystartAckDelta {
		c.lastAck = s.Now
		threshold := c.delayMin
		if s.PacingRate == 0 {
			threshold /= 2
		}
		if s.Now-c.roundStart > threshold {
			c.hystartFound = true
			s.SSThresh = s.Cwnd
			return
		}
	}
	// Delay increase: the round's minimum RTT rose by delay_min/8.
	if c.currRTT == 0 || c.currRTT > delay {
		c.currRTT = delay
	}
	if c.sampleCnt < hystartMinSamples {
		c.sampleCnt++
		return
	}
	if c.currRTT > c.delayMin+min(max(c.delayMin/8, hystartDelayMin), hystartDelayMax) {
		c.hystartFound = true
		s.SSThresh = s.Cwnd
	}
}

var cubicVars = []VarDesc{
	{Name: "target", Doc: "window the cubic curve reaches one RTT from now (packets)"},
	{Name: "w_max", Doc: "window before the last reduction (packets)"},
	{Name: "k", Doc: "time from the epoch start to reach w_max (seconds)"},
	{Name: "w_est", Doc: "TCP-friendly (Reno-emulation) window (packets)"},
	{Name: "cnt", Doc: "acked packets per window increment"},
	{Name: "delay_min_ms", Doc: "minimum RTT seen (ms)"},
	{Name: "epoch_s", Doc: "seconds since the epoch started (0 if none)"},
}

func (c *Cubic) Vars() []VarDesc { return cubicVars }

func (c *Cubic) ReadVars(s *Sock, dst []float64) {
	dst[0] = float64(c.target)
	dst[1] = float64(c.wMax)
	dst[2] = float64(c.k) / 1024
	dst[3] = float64(c.tcpCwnd)
	dst[4] = float64(c.cnt)
	dst[5] = float64(c.delayMin) / float64(time.Millisecond)
	if c.epochStart != 0 {
		dst[6] = float64(s.Now-c.epochStart) / float64(time.Second)
	} else {
		dst[6] = 0
	}
}

// cubeRoot returns ⌊∛x⌋ by bisection on integers: exact and identical on
// every machine.
func cubeRoot(x uint64) uint64 {
	lo, hi := uint64(0), uint64(1<<21) // (2^21)^3 = 2^63 > any input here
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if mid*mid*mid <= x {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

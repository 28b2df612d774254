package ccai

import "time"

// BBR v1 constants (Cardwell, Cheng, Gunn, Hassas Yeganeh and Jacobson,
// "BBR: congestion-based congestion control", ACM Queue 14(5), 2016, and
// draft-cardwell-iccrg-bbr-congestion-control-00; Linux's tcp_bbr defaults).
const (
	bbrScale = 8 // gains are ×256
	bbrUnit  = 1 << bbrScale
	// bbrBWScale: bandwidth is packets per µs ×2^24, enough resolution for
	// one packet per second up to hundreds of Gbit/s in uint64.
	bbrBWScale = 24
	bbrBWUnit  = 1 << bbrBWScale

	// bbrHighGain is 2/ln 2 ≈ 2.885, the smallest gain that doubles the
	// sending rate every round in STARTUP (draft §4.3.1.1).
	bbrHighGain = bbrUnit*2885/1000 + 1
	// bbrDrainGain is its inverse, draining STARTUP's queue in one round.
	bbrDrainGain = bbrUnit * 1000 / 2885
	// bbrCwndGain: cwnd is 2·BDP in PROBE_BW, to tolerate delayed and
	// stretched ACKs.
	bbrCwndGain = bbrUnit * 2
	// bbrCycleLen: PROBE_BW cycles through 8 pacing gains, one RTprop each:
	// probe at 5/4, drain at 3/4, cruise at 1 for six phases (draft §4.3.4.3).
	bbrCycleLen = 8
	// bbrCycleRand: PROBE_BW starts at a random phase other than the
	// draining one.
	bbrCycleRand = 7
	// bbrBWRTTs: the BtlBw max filter spans 10 rounds (draft §4.1.1.2).
	bbrBWRTTs = bbrCycleLen + 2
	// bbrMinRTTWin: the RTprop min filter spans 10 s (draft §4.1.2.3).
	bbrMinRTTWin = 10 * time.Second
	// bbrProbeRTTTime: PROBE_RTT holds cwnd at 4 packets for at least
	// 200 ms and one round (draft §4.3.5).
	bbrProbeRTTTime  = 200 * time.Millisecond
	bbrCwndMinTarget = 4
	// bbrFullBWThresh, bbrFullBWCnt: STARTUP ends when bandwidth grew by
	// less than 25% for three rounds (draft §4.3.2.2).
	bbrFullBWThresh = bbrUnit * 5 / 4
	bbrFullBWCnt    = 3
	// bbrInitCwnd is TCP_INIT_CWND, the BDP assumed before any RTT sample.
	bbrInitCwnd = 10
	// bbrPacingMarginPercent: pace 1% below the estimated bandwidth, so
	// that the bottleneck queue drains (today's Linux).
	bbrPacingMarginPercent = 1
	// bbrMinTSORate: below 1.2 Mbit/s Linux aims at 1-segment TSO bursts.
	bbrMinTSORate = 1200000 / 8 // bytes/s
	// bbrGSOMaxBytes is GSO_LEGACY_MAX_SIZE − 1 − MAX_TCP_HEADER (320).
	bbrGSOMaxBytes = 65536 - 1 - 320
	// ACK-aggregation estimator (today's Linux): the extra data ACKed
	// beyond the bandwidth estimate, as a max over 5-round windows, capped
	// at 100 ms of data.
	bbrExtraAckedGain          = bbrUnit
	bbrExtraAckedWinRTTs       = 5
	bbrAckEpochAckedResetLimit = 1 << 20
	bbrExtraAckedMaxTime       = 100 * time.Millisecond

	bbrNoRTT = ^uint32(0)
)

// bbrPacingGains is the PROBE_BW gain cycle.
var bbrPacingGains = [bbrCycleLen]uint32{
	bbrUnit * 5 / 4, bbrUnit * 3 / 4,
	bbrUnit, bbrUnit, bbrUnit, bbrUnit, bbrUnit, bbrUnit,
}

// BBR modes, the values of the exposed "mode" variable.
const (
	BBRStartup uint8 = iota
	BBRDrain
	BBRProbeBW
	BBRProbeRTT
)

// BBRModeNames lists the BBR modes in numerical order.
var BBRModeNames = []string{"startup", "drain", "probe_bw", "probe_rtt"}

// bbrMaxFilter is a windowed maximum over round counts: Kathleen Nichols'
// algorithm, which keeps the best, second-best and third-best samples of
// successive sub-windows so that the maximum of the last win rounds is
// always at hand in O(1) time and space.
type bbrMaxFilter struct {
	s [3]struct {
		t uint32
		v uint64
	}
}

func (f *bbrMaxFilter) get() uint64 { return f.s[0].v }

func (f *bbrMaxFilter) reset(t uint32, v uint64) {
	for i := range f.s {
		f.s[i].t, f.s[i].v = t, v
	}
}

// update adds sample v taken at round t and returns the windowed maximum.
func (f *bbrMaxFilter) update(win, t uint32, v uint64) uint64 {
	if v >= f.s[0].v || t-f.s[2].t > win {
		// A new maximum, or nothing in the window: start afresh.
		f.reset(t, v)
		return v
	}
	switch {
	case v >= f.s[1].v:
		f.s[1].t, f.s[1].v = t, v
		f.s[2] = f.s[1]
	case v >= f.s[2].v:
		f.s[2].t, f.s[2].v = t, v
	}
	// Age the estimates: the best must be from within the window, and the
	// second and third best cover the later quarter and half of it.
	dt := t - f.s[0].t
	switch {
	case dt > win:
		f.s[0], f.s[1] = f.s[1], f.s[2]
		f.s[2].t, f.s[2].v = t, v
		if t-f.s[0].t > win {
			f.s[0], f.s[1] = f.s[1], f.s[2]
			f.s[2].t, f.s[2].v = t, v
		}
	case f.s[1].t == f.s[0].t && dt > win/4:
		f.s[1].t, f.s[1].v = t, v
		f.s[2] = f.s[1]
	case f.s[2].t == f.s[1].t && dt > win/2:
		f.s[2].t, f.s[2].v = t, v
	}
	return f.s[0].v
}

// BBR is BBR v1 as in Linux's tcp_bbr: a model-based algorithm that
// estimates the bottleneck bandwidth BtlBw (a windowed maximum of
// delivery-rate samples over 10 rounds) and the round-trip propagation time
// RTprop (a windowed minimum of RTT samples over 10 s), paces at
// pacing_gain·BtlBw and caps the data in flight at cwnd_gain·BtlBw·RTprop.
// It moves through STARTUP (gain 2/ln 2 until bandwidth stops growing by 25%
// for three rounds), DRAIN (the inverse gain until in-flight falls to one
// BDP), PROBE_BW (the eight-phase gain cycle 5/4, 3/4, 1×6) and, when
// RTprop has not been refreshed for 10 s, PROBE_RTT (cwnd 4 for 200 ms and
// a round).
//
// BBR implements [CongController]: the machinery calls CongControl with a
// delivery-rate sample on every ACK, honours s.PacingRate, and neither
// calls CongAvoid nor applies PRR. BBR keeps cwnd to in-flight plus newly
// acknowledged packets during the first round of Recovery (packet
// conservation) and restores the pre-recovery cwnd when Recovery ends. As in
// Linux it adds the TSO quantisation budget (3 segments of the autosized
// burst) and the ACK-aggregation allowance to its cwnd target, and paces 1%
// below BtlBw.
//
// The long-term ("policer") bandwidth estimator is in bbr_lt.go. Not
// modelled: the is_ack_delayed flag of rate samples. PROBE_RTT's marking of samples as
// application-limited is kept inside BBR: samples of packets sent during
// PROBE_RTT, until the data in flight when it ended is delivered, do not
// lower the bandwidth estimate. The random starting phase of PROBE_BW comes
// from a hash of the simulated time and delivery count, so a run replays
// exactly.
//
// Profile differences: none. BBR first appeared in Linux 4.9 (commit
// 0f8782ea1497 "tcp_bbr: add BBR congestion control"), so ProfileLinux310
// has no BBR of its own; both profiles run today's BBR v1.
type BBR struct {
	mode             uint8
	bw               bbrMaxFilter // BtlBw, packets/µs ×2^24
	rttCnt           uint32       // rounds so far
	nextRTTDelivered uint64       // s.Delivered that ends the current round
	roundStart       bool
	minRTTus         uint32        // RTprop (µs); bbrNoRTT = none
	minRTTStamp      time.Duration // when RTprop was last set
	probeRTTDone     time.Duration // end of the 200 ms in PROBE_RTT
	probeRTTDoneSet  bool
	probeRTTRound    bool // a round has passed in PROBE_RTT
	priorCwnd        uint32
	prevCAState      CAState
	conservation     bool
	idleRestart      bool
	fullBWReached    bool
	fullBW           uint64
	fullBWCnt        uint32
	cycleIdx         uint32
	cycleStamp       time.Duration // s.DeliveredTime when the phase began
	hasSeenRTT       bool
	pacingGain       uint32
	cwndGain         uint32
	targetCwnd       uint32 // the last cwnd target, for ReadVars

	ackEpochStamp    time.Duration
	ackEpochAcked    uint32
	extraAcked       [2]uint32
	extraAckedRounds uint32
	extraAckedIdx    uint32

	appLimitedFrom  uint64 // PROBE_RTT: samples sent in [from, until) are
	appLimitedUntil uint64 // application-limited

	lt ltState // the long-term (policer) model, bbr_lt.go
}

func init() {
	Register(Info{Name: "bbr", Description: "BBR v1 (Cardwell et al. 2016): BtlBw/RTprop model, pacing, STARTUP/DRAIN/PROBE_BW/PROBE_RTT", Family: FamilyBBR, Beta: 0, New: func() Algorithm { return &BBR{} }})
}

func (b *BBR) Init(s *Sock) {
	*b = BBR{
		prevCAState:   StateOpen,
		minRTTus:      bbrNoRTT,
		minRTTStamp:   s.Now,
		ackEpochStamp: s.Now,
	}
	if s.MinRTT > 0 {
		b.minRTTus = rttMicros(s.MinRTT)
	}
	s.SSThresh = InfiniteSSThresh
	b.initPacingRate(s)
	b.resetStartup()
	b.resetLt(s)
}

// initPacingRate paces the initial window at the STARTUP gain over the
// SRTT, or over 1 ms before any RTT sample.
func (b *BBR) initPacingRate(s *Sock) {
	rttUS := uint64(1000)
	if s.SRTT > 0 {
		rttUS = max(uint64(s.SRTT/time.Microsecond), 1)
		b.hasSeenRTT = true
	}
	bw := uint64(s.Cwnd) * bbrBWUnit / rttUS
	s.PacingRate = b.pacingRateFor(s, bw, bbrHighGain)
}

// pacingRateFor converts a bandwidth (packets/µs ×2^24) and a gain into
// bytes per second, 1% below the rate.
func (b *BBR) pacingRateFor(s *Sock, bw uint64, gain uint32) uint64 {
	rate := bw * uint64(s.MSS)
	rate = rate * uint64(gain) >> bbrScale
	rate *= uint64(time.Second/time.Microsecond) / 100 * (100 - bbrPacingMarginPercent)
	return rate >> bbrBWScale
}

func (b *BBR) setPacingRate(s *Sock, bw uint64, gain uint32) {
	rate := b.pacingRateFor(s, bw, gain)
	if !b.hasSeenRTT && s.SRTT > 0 {
		b.initPacingRate(s)
	}
	// Never slow down in STARTUP before the pipe is known to be full.
	if b.fullBWReached || rate > s.PacingRate {
		s.PacingRate = rate
	}
}

func (b *BBR) maxBW() uint64 { return b.bw.get() }

// bdp is gain·BtlBw·RTprop in packets, rounded up.
func (b *BBR) bdp(bw uint64, gain uint32) uint32 {
	if b.minRTTus == bbrNoRTT {
		return bbrInitCwnd
	}
	w := bw * uint64(b.minRTTus)
	return uint32((w*uint64(gain)>>bbrScale + bbrBWUnit - 1) / bbrBWUnit)
}

// tsoSegsGoal is Linux's TSO autosizing: about 1 ms of data at the pacing
// rate, at least 2 segments (1 below 1.2 Mbit/s), at most 127.
func (b *BBR) tsoSegsGoal(s *Sock) uint32 {
	minSegs := uint64(2)
	if s.PacingRate < bbrMinTSORate {
		minSegs = 1
	}
	bytes := min(s.PacingRate>>10, bbrGSOMaxBytes)
	segs := max(bytes/uint64(max(s.MSS, 1)), minSegs)
	return uint32(min(segs, 0x7f))
}

// quantization adds the allowance for TSO bursts, rounds up to even, and
// adds 2 packets while probing at gain 5/4.
func (b *BBR) quantization(s *Sock, cwnd uint32) uint32 {
	cwnd += 3 * b.tsoSegsGoal(s)
	cwnd = (cwnd + 1) &^ 1
	if b.mode == BBRProbeBW && b.cycleIdx == 0 {
		cwnd += 2
	}
	return cwnd
}

// inflight is the in-flight target for a bandwidth and gain.
func (b *BBR) inflight(s *Sock, bw uint64, gain uint32) uint32 {
	return b.quantization(s, b.bdp(bw, gain))
}

// CongControl runs BBR on one ACK: update the model, then pace and set
// cwnd from it.
func (b *BBR) CongControl(s *Sock, rs *RateSample) {
	b.updateBW(s, rs)
	b.updateAckAggregation(s, rs)
	if b.mode == BBRProbeBW && b.nextCyclePhase(s, rs) {
		b.advanceCycle(s)
	}
	b.checkFullBW(rs)
	b.checkDrain(s)
	b.updateMinRTT(s, rs)
	b.updateGains()
	bw := b.bwEst()
	b.setPacingRate(s, bw, b.pacingGain)
	b.setCwnd(s, rs, bw)
}

func (b *BBR) appLimited(rs *RateSample) bool {
	return rs.IsAppLimited ||
		(b.appLimitedUntil != 0 && rs.PriorDelivered >= b.appLimitedFrom && rs.PriorDelivered < b.appLimitedUntil)
}

// updateBW counts rounds and feeds the delivery rate to the BtlBw filter.
func (b *BBR) updateBW(s *Sock, rs *RateSample) {
	b.roundStart = false
	intervalUS := uint64(rs.Interval / time.Microsecond)
	if rs.Delivered < 0 || rs.Interval <= 0 || intervalUS == 0 {
		return
	}
	if rs.PriorDelivered >= b.nextRTTDelivered {
		// The packet acked was sent after the round began: a new round.
		b.nextRTTDelivered = s.Delivered
		b.rttCnt++
		b.roundStart = true
		b.conservation = false
	}
	if b.appLimitedUntil != 0 && s.Delivered >= b.appLimitedUntil && b.mode != BBRProbeRTT {
		b.appLimitedUntil = 0
	}
	b.lt.lost += uint64(rs.Losses)
	b.ltSampling(s, rs.Losses, b.appLimited(rs))
	bw := uint64(rs.Delivered) * bbrBWUnit / intervalUS
	// An application-limited sample only counts if it raises the estimate.
	if !b.appLimited(rs) || bw >= b.maxBW() {
		b.bw.update(bbrBWRTTs, b.rttCnt, bw)
	}
}

// updateAckAggregation estimates how much more than BtlBw·time the ACKs
// delivered in bursts, so that cwnd can cover it.
func (b *BBR) updateAckAggregation(s *Sock, rs *RateSample) {
	if rs.AckedSacked == 0 || rs.Delivered < 0 || rs.Interval <= 0 {
		return
	}
	if b.roundStart {
		b.extraAckedRounds = min(0x1f, b.extraAckedRounds+1)
		if b.extraAckedRounds >= bbrExtraAckedWinRTTs {
			b.extraAckedRounds = 0
			b.extraAckedIdx ^= 1
			b.extraAcked[b.extraAckedIdx] = 0
		}
	}
	epochUS := uint64(max(s.DeliveredTime-b.ackEpochStamp, 0) / time.Microsecond)
	expected := b.maxBW() * epochUS / bbrBWUnit
	if uint64(b.ackEpochAcked) <= expected || b.ackEpochAcked+rs.AckedSacked >= bbrAckEpochAckedResetLimit {
		// ACKs are arriving no faster than expected: start a new epoch.
		b.ackEpochAcked = 0
		b.ackEpochStamp = s.DeliveredTime
		expected = 0
	}
	b.ackEpochAcked = min(0xfffff, b.ackEpochAcked+rs.AckedSacked)
	extra := min(uint64(b.ackEpochAcked)-expected, uint64(s.Cwnd))
	b.extraAcked[b.extraAckedIdx] = max(b.extraAcked[b.extraAckedIdx], uint32(extra))
}

func (b *BBR) ackAggregationCwnd() uint32 {
	if !b.fullBWReached {
		return 0
	}
	maxAggr := b.maxBW() * uint64(bbrExtraAckedMaxTime/time.Microsecond) / bbrBWUnit
	aggr := uint64(bbrExtraAckedGain) * uint64(max(b.extraAcked[0], b.extraAcked[1])) >> bbrScale
	return uint32(min(aggr, maxAggr))
}

// nextCyclePhase reports whether the current PROBE_BW phase is over: one
// RTprop has passed and, when probing, in-flight reached the probe target
// (or losses appeared); when draining, in-flight fell to one BDP.
func (b *BBR) nextCyclePhase(s *Sock, rs *RateSample) bool {
	fullLength := b.minRTTus != bbrNoRTT &&
		s.DeliveredTime-b.cycleStamp > time.Duration(b.minRTTus)*time.Microsecond
	switch {
	case b.pacingGain == bbrUnit:
		return fullLength
	case b.pacingGain > bbrUnit:
		return fullLength && (rs.Losses > 0 || rs.PriorInFlight >= b.inflight(s, b.maxBW(), b.pacingGain))
	}
	return fullLength || rs.PriorInFlight <= b.inflight(s, b.maxBW(), bbrUnit)
}

func (b *BBR) advanceCycle(s *Sock) {
	b.cycleIdx = (b.cycleIdx + 1) % bbrCycleLen
	b.cycleStamp = s.DeliveredTime
}

// checkFullBW ends STARTUP's growth once BtlBw grew by less than 25% for
// three non-application-limited rounds.
func (b *BBR) checkFullBW(rs *RateSample) {
	if b.fullBWReached || !b.roundStart || b.appLimited(rs) {
		return
	}
	if b.maxBW() >= b.fullBW*bbrFullBWThresh>>bbrScale {
		b.fullBW = b.maxBW()
		b.fullBWCnt = 0
		return
	}
	b.fullBWCnt++
	b.fullBWReached = b.fullBWCnt >= bbrFullBWCnt
}

func (b *BBR) checkDrain(s *Sock) {
	if b.mode == BBRStartup && b.fullBWReached {
		b.mode = BBRDrain
		s.SSThresh = b.inflight(s, b.maxBW(), bbrUnit)
	}
	if b.mode == BBRDrain && s.InFlight() <= b.inflight(s, b.maxBW(), bbrUnit) {
		b.resetProbeBW(s)
	}
}

// updateMinRTT maintains RTprop and enters and leaves PROBE_RTT.
func (b *BBR) updateMinRTT(s *Sock, rs *RateSample) {
	expired := s.Now > b.minRTTStamp+bbrMinRTTWin
	if rs.RTT >= 0 {
		if r := rttMicros(rs.RTT); r < b.minRTTus || expired {
			b.minRTTus = r
			b.minRTTStamp = s.Now
		}
	}
	if expired && !b.idleRestart && b.mode != BBRProbeRTT {
		b.mode = BBRProbeRTT
		b.saveCwnd(s)
		b.probeRTTDoneSet = false
		b.appLimitedFrom = s.Delivered
	}
	if b.mode == BBRProbeRTT {
		// Samples taken now say nothing about the bottleneck.
		b.appLimitedUntil = max(s.Delivered+uint64(s.InFlight()), 1)
		if !b.probeRTTDoneSet && s.InFlight() <= bbrCwndMinTarget {
			b.probeRTTDone = s.Now + bbrProbeRTTTime
			b.probeRTTDoneSet = true
			b.probeRTTRound = false
			b.nextRTTDelivered = s.Delivered
		} else if b.probeRTTDoneSet {
			if b.roundStart {
				b.probeRTTRound = true
			}
			if b.probeRTTRound {
				b.checkProbeRTTDone(s)
			}
		}
	}
	if rs.Delivered > 0 {
		b.idleRestart = false
	}
}

func (b *BBR) checkProbeRTTDone(s *Sock) {
	if !b.probeRTTDoneSet || s.Now <= b.probeRTTDone {
		return
	}
	b.minRTTStamp = s.Now // RTprop is fresh: wait another 10 s
	s.Cwnd = max(s.Cwnd, b.priorCwnd)
	b.resetMode(s)
}

func (b *BBR) resetMode(s *Sock) {
	if !b.fullBWReached {
		b.resetStartup()
	} else {
		b.resetProbeBW(s)
	}
}

func (b *BBR) resetStartup() {
	b.mode = BBRStartup
	b.updateGains()
}

func (b *BBR) resetProbeBW(s *Sock) {
	b.mode = BBRProbeBW
	b.cycleIdx = bbrCycleLen - 1 - uint32(bbrRand(s)%bbrCycleRand)
	b.advanceCycle(s)
	b.updateGains()
}

// bbrRand is a deterministic stand-in for the kernel's random number: a
// splitmix64 hash of the simulated time and delivery count.
func bbrRand(s *Sock) uint64 {
	z := uint64(s.Now) ^ s.Delivered<<32 ^ 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

func (b *BBR) updateGains() {
	switch b.mode {
	case BBRStartup:
		b.pacingGain, b.cwndGain = bbrHighGain, bbrHighGain
	case BBRDrain:
		b.pacingGain, b.cwndGain = bbrDrainGain, bbrHighGain
	case BBRProbeBW:
		b.pacingGain, b.cwndGain = bbrPacingGains[b.cycleIdx], bbrCwndGain
		if b.lt.useBW {
			b.pacingGain = bbrUnit // a policer: no probing above its rate
		}
	default:
		b.pacingGain, b.cwndGain = bbrUnit, bbrUnit
	}
}

// recoverOrRestore applies packet conservation in the first round of
// Recovery and restores cwnd on leaving it. It reports whether
// conservation decides cwnd.
func (b *BBR) recoverOrRestore(s *Sock, rs *RateSample, acked uint32) (uint32, bool) {
	prev, state := b.prevCAState, s.CAState
	cwnd := s.Cwnd
	if rs.Losses > 0 {
		cwnd = uint32(max(int64(cwnd)-int64(rs.Losses), 1))
	}
	switch {
	case state == StateRecovery && prev != StateRecovery:
		b.conservation = true
		b.nextRTTDelivered = s.Delivered // start a round now
		cwnd = s.InFlight() + acked
	case prev >= StateRecovery && state < StateRecovery:
		cwnd = max(cwnd, b.priorCwnd)
		b.conservation = false
	}
	b.prevCAState = state
	if b.conservation {
		return max(cwnd, s.InFlight()+acked), true
	}
	return cwnd, false
}

func (b *BBR) setCwnd(s *Sock, rs *RateSample, bw uint64) {
	acked := rs.AckedSacked
	cwnd := s.Cwnd
	if acked != 0 {
		var done bool
		cwnd, done = b.recoverOrRestore(s, rs, acked)
		if !done {
			b.targetCwnd = b.quantization(s, b.bdp(bw, b.cwndGain)+b.ackAggregationCwnd())
			switch {
			case b.fullBWReached:
				cwnd = min(cwnd+acked, b.targetCwnd)
			case cwnd < b.targetCwnd || s.Delivered < bbrInitCwnd:
				cwnd += acked
			}
			cwnd = max(cwnd, bbrCwndMinTarget)
		}
	}
	s.Cwnd = min(cwnd, s.CwndClamp)
	if b.mode == BBRProbeRTT {
		s.Cwnd = min(s.Cwnd, bbrCwndMinTarget)
	}
}

// saveCwnd remembers the cwnd to restore after Recovery or PROBE_RTT.
func (b *BBR) saveCwnd(s *Sock) {
	if b.prevCAState < StateRecovery && b.mode != BBRProbeRTT {
		b.priorCwnd = s.Cwnd
	} else {
		b.priorCwnd = max(b.priorCwnd, s.Cwnd)
	}
}

// SSThresh leaves ssthresh alone: BBR does not react to loss by a
// multiplicative decrease. It saves cwnd for the end of Recovery.
func (b *BBR) SSThresh(s *Sock) uint32 {
	b.saveCwnd(s)
	return s.SSThresh
}

// CongAvoid is never called for a CongController.
func (*BBR) CongAvoid(*Sock, uint32) {}

func (b *BBR) SetState(s *Sock, state CAState) {
	if state == StateLoss {
		b.prevCAState = StateLoss
		b.fullBW = 0
		b.roundStart = true // treat the RTO like the end of a round
		// An RTO marks every unSACKed packet lost (tcp_enter_loss) and
		// ends a long-term interval like a loss.
		b.lt.lost += uint64(s.PacketsOut - min(s.SackedOut, s.PacketsOut))
		b.ltSampling(s, 1, false)
	}
}

func (b *BBR) CwndEvent(s *Sock, ev Event) {
	if ev != EventTxStart || !s.AppLimited {
		return
	}
	// Restarting after idle: pace at BtlBw rather than probing.
	b.idleRestart = true
	b.ackEpochStamp = s.Now
	b.ackEpochAcked = 0
	switch b.mode {
	case BBRProbeBW:
		b.setPacingRate(s, b.bwEst(), bbrUnit)
	case BBRProbeRTT:
		b.checkProbeRTTDone(s)
	}
}

// UndoCwnd keeps cwnd (BBR never reduced it) and restarts the STARTUP
// plateau detection, as the loss was spurious.
func (b *BBR) UndoCwnd(s *Sock) uint32 {
	b.fullBW = 0
	b.fullBWCnt = 0
	return s.Cwnd
}

var bbrVars = []VarDesc{
	{Name: "mode", Doc: "BBR state machine mode", Values: BBRModeNames},
	{Name: "pacing_rate", Doc: "pacing rate (Mbit/s)"},
	{Name: "btlbw", Doc: "bottleneck bandwidth estimate BtlBw (Mbit/s)"},
	{Name: "rtprop_ms", Doc: "round-trip propagation time estimate RTprop (ms; 0 if none)"},
	{Name: "cycle_idx", Doc: "PROBE_BW gain-cycle phase (0 = probe at 5/4, 1 = drain at 3/4)"},
	{Name: "pacing_gain", Doc: "current pacing gain"},
	{Name: "cwnd_gain", Doc: "current cwnd gain"},
	{Name: "full_bw_reached", Doc: "1 once STARTUP found the pipe full"},
	{Name: "round", Doc: "packet-timed rounds so far"},
	{Name: "target_cwnd", Doc: "the last cwnd target, cwnd_gain·BDP plus allowances (packets)"},
	{Name: "extra_acked", Doc: "ACK-aggregation allowance (packets)"},
	{Name: "lt_bw", Doc: "long-term (policer) bandwidth estimate (Mbit/s; 0 if none)"},
	{Name: "lt_use_bw", Doc: "1 while BBR believes in a policer and uses lt_bw"},
}

func (b *BBR) Vars() []VarDesc { return bbrVars }

func (b *BBR) ReadVars(s *Sock, dst []float64) {
	dst[0] = float64(b.mode)
	dst[1] = float64(s.PacingRate) * 8 / 1e6
	dst[2] = float64(b.maxBW()) * float64(s.MSS) * 8 / bbrBWUnit
	dst[3] = usToMs(b.minRTTus, bbrNoRTT)
	dst[4] = float64(b.cycleIdx)
	dst[5] = float64(b.pacingGain) / bbrUnit
	dst[6] = float64(b.cwndGain) / bbrUnit
	dst[7] = b2f(b.fullBWReached)
	dst[8] = float64(b.rttCnt)
	dst[9] = float64(b.targetCwnd)
	dst[10] = float64(b.ackAggregationCwnd())
	dst[11] = float64(b.lt.bw) * float64(s.MSS) * 8 / bbrBWUnit
	dst[12] = b2f(b.lt.useBW)
}

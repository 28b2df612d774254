package ccai

// TCP-Illinois constants (Liu, Başar and Srikant, "TCP-Illinois: a
// loss- and delay-based congestion control algorithm for high-speed
// networks", Performance Evaluation 65(6–7), 2008, §III; Linux's defaults).
const (
	illinoisAlphaShift = 7
	illinoisAlphaScale = 1 << illinoisAlphaShift
	illinoisAlphaMin   = illinoisAlphaScale * 3 / 10 // α_min = 0.3
	illinoisAlphaMax   = 10 * illinoisAlphaScale     // α_max = 10
	illinoisAlphaBase  = illinoisAlphaScale          // α = 1, as Reno
	// illinoisRTTMax keeps dm·α_max inside uint32 (µs).
	illinoisRTTMax = 0xffffffff / illinoisAlphaMax

	illinoisBetaShift = 6
	illinoisBetaScale = 1 << illinoisBetaShift
	illinoisBetaMin   = illinoisBetaScale / 8 // β_min = 1/8
	illinoisBetaMax   = illinoisBetaScale / 2 // β_max = 1/2
	illinoisBetaBase  = illinoisBetaMax

	// illinoisWinThresh: below 15 packets Illinois behaves as Reno.
	illinoisWinThresh = 15
	// illinoisTheta: RTTs of low delay before α returns to α_max.
	illinoisTheta = 5
	// illinoisNoRTT marks a base RTT with no sample yet.
	illinoisNoRTT = 0x7fffffff
)

// Illinois is TCP-Illinois: AIMD whose increase α and decrease β are set
// once per RTT from the average queueing delay d_a relative to the largest
// seen, d_m. α falls as κ1/(κ2 + d_a) from α_max = 10 at d_a ≤ d_m/100 to
// α_min = 0.3 at d_a = d_m; β rises linearly from 1/8 at d_a ≤ d_m/10 to
// 1/2 at d_a ≥ 8·d_m/10 (paper §III.A). α only returns to α_max after θ = 5
// RTTs of low delay. Below 15 packets, α = 1 and β = 1/2 as Reno. Delays are
// in microseconds.
//
// Profile differences:
//   - Undo: ProfileLinux310 has no undo of its own and gets the kernel's
//     fallback max(cwnd, 2·ssthresh), which after a reduction by β = 1/8
//     nearly doubles the window; see [RenoUndoCwnd].
//   - Slow start is the profile-aware [Sock.SlowStart].
type Illinois struct {
	sumRTT   uint64 // sum of RTT samples this RTT (µs)
	cntRTT   uint16 // samples this RTT
	baseRTT  uint32 // minimum RTT (µs)
	maxRTT   uint32 // maximum RTT (µs)
	endSeq   uint64 // right edge of the RTT being measured
	alpha    uint32 // ×128
	beta     uint32 // ×64
	acked    uint32 // packets acknowledged by the last ACK
	rttAbove bool   // delay has been above d_m/100 since the last reset
	rttLow   uint8  // consecutive low-delay RTTs
}

func init() {
	Register(Info{Name: "illinois", Description: "TCP-Illinois (Liu, Başar & Srikant 2008): delay-adapted alpha and beta", Family: FamilyLossBased, Beta: 0.5, New: func() Algorithm { return &Illinois{} }})
}

func (c *Illinois) Init(s *Sock) {
	*c = Illinois{
		alpha:   illinoisAlphaMax,
		beta:    illinoisBetaBase,
		baseRTT: illinoisNoRTT,
	}
	c.rttReset(s)
}

func (c *Illinois) rttReset(s *Sock) {
	c.endSeq = s.SndNxt
	c.cntRTT = 0
	c.sumRTT = 0
}

// PktsAcked collects the RTT samples of the current RTT.
func (c *Illinois) PktsAcked(_ *Sock, a AckSample) {
	c.acked = a.PktsAcked
	if a.RTT < 0 {
		return
	}
	r := min(rttMicros(a.RTT), illinoisRTTMax)
	c.baseRTT = min(c.baseRTT, r)
	c.maxRTT = max(c.maxRTT, r)
	c.cntRTT++
	c.sumRTT += uint64(r)
}

// alphaFor is α(d_a) for average delay da and maximum delay dm (µs above
// the base RTT).
func (c *Illinois) alphaFor(da, dm uint32) uint32 {
	d1 := dm / 100 // low-delay threshold
	if da <= d1 {
		if !c.rttAbove {
			return illinoisAlphaMax
		}
		// Wait θ low-delay RTTs before jumping back to α_max.
		c.rttLow++
		if c.rttLow < illinoisTheta {
			return c.alpha
		}
		c.rttLow = 0
		c.rttAbove = false
		return illinoisAlphaMax
	}
	c.rttAbove = true
	// κ1/(κ2 + d_a) through (d1, α_max) and (dm, α_min): with D = dm − d1
	// and x = da − d1, α = α_max·D/(D + x·(α_max − α_min)/α_min).
	dm -= d1
	da -= d1
	return dm * illinoisAlphaMax / (dm + da*(illinoisAlphaMax-illinoisAlphaMin)/illinoisAlphaMin)
}

// betaFor is β(d_a): β_min up to d2 = dm/10, β_max from d3 = 8dm/10, linear
// in between.
func betaFor(da, dm uint32) uint32 {
	d2 := dm / 10
	d3 := 8 * dm / 10
	switch {
	case da <= d2:
		return illinoisBetaMin
	case da >= d3 || d3 <= d2:
		return illinoisBetaMax
	}
	return (illinoisBetaMin*(d3-d2) + (illinoisBetaMax-illinoisBetaMin)*(da-d2)) / (d3 - d2)
}

// updateParams runs once per RTT.
func (c *Illinois) updateParams(s *Sock) {
	if s.Cwnd < illinoisWinThresh {
		c.alpha = illinoisAlphaBase
		c.beta = illinoisBetaBase
	} else if c.cntRTT > 0 {
		dm := c.maxRTT - c.baseRTT
		da := uint32(c.sumRTT/uint64(c.cntRTT)) - c.baseRTT
		c.alpha = c.alphaFor(da, dm)
		c.beta = betaFor(da, dm)
	}
	c.rttReset(s)
}

func (c *Illinois) CongAvoid(s *Sock, acked uint32) {
	if s.SndUna > c.endSeq {
		c.updateParams(s)
	}
	if !s.IsCwndLimited() {
		return
	}
	if s.InSlowStart() {
		s.SlowStart(acked)
		return
	}
	// cwnd += α/cwnd per packet acknowledged.
	s.CwndCnt += c.acked
	c.acked = 1
	delta := s.CwndCnt * c.alpha >> illinoisAlphaShift
	if delta >= s.Cwnd {
		s.Cwnd = min(s.Cwnd+delta/s.Cwnd, s.CwndClamp)
		s.CwndCnt = 0
	}
}

// SSThresh is cwnd·(1 − β).
func (c *Illinois) SSThresh(s *Sock) uint32 {
	return max(s.Cwnd-(s.Cwnd*c.beta>>illinoisBetaShift), 2)
}

func (c *Illinois) SetState(s *Sock, state CAState) {
	if state == StateLoss {
		c.alpha = illinoisAlphaBase
		c.beta = illinoisBetaBase
		c.rttLow = 0
		c.rttAbove = false
		c.rttReset(s)
	}
}

func (*Illinois) CwndEvent(*Sock, Event) {}

func (*Illinois) UndoCwnd(s *Sock) uint32 { return RenoUndoCwnd(s) }

var illinoisVars = []VarDesc{
	{Name: "alpha", Doc: "additive increase α, packets per RTT"},
	{Name: "beta", Doc: "multiplicative decrease β"},
	{Name: "base_rtt_ms", Doc: "minimum RTT (ms; 0 if none)"},
	{Name: "max_rtt_ms", Doc: "maximum RTT (ms)"},
	{Name: "avg_delay_ms", Doc: "average queueing delay in the current RTT (ms)"},
}

func (c *Illinois) Vars() []VarDesc { return illinoisVars }

func (c *Illinois) ReadVars(_ *Sock, dst []float64) {
	dst[0] = float64(c.alpha) / illinoisAlphaScale
	dst[1] = float64(c.beta) / illinoisBetaScale
	dst[2] = usToMs(c.baseRTT, illinoisNoRTT)
	dst[3] = float64(c.maxRTT) / 1000
	if c.cntRTT > 0 && c.baseRTT != illinoisNoRTT {
		dst[4] = float64(uint32(c.sumRTT/uint64(c.cntRTT))-c.baseRTT) / 1000
	} else {
		dst[4] = 0
	}
}

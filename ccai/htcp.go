package ccai

import "time"

// H-TCP constants (Leith and Shorten, "H-TCP: TCP for high-speed and
// long-distance networks", PFLDnet 2004, §§3–4; Leith, Shorten and Lee,
// "H-TCP: a framework for congestion control in high-speed and
// long-distance networks", 2005; Linux's defaults).
const (
	htcpAlphaBase = 1 << 7 // α = 1 (Reno), α and β are ×128
	htcpBetaMin   = 1 << 6 // β ≥ 0.5
	htcpBetaMax   = 102    // β ≤ 0.8 (102/128)
	// htcpHZ: H-TCP counts time in jiffies; we model a HZ = 1000 kernel,
	// so one jiffy is a millisecond.
	htcpHZ     = 1000
	htcpJiffy  = time.Second / htcpHZ
	htcpDeltaL = htcpHZ // Δ_L = 1 s: low-speed (Reno) period after a loss
	// htcpMinRTTForRatio: the adaptive β = RTT_min/RTT_max is only used
	// when RTT_min exceeds 10 ms, where queueing delay is measurable.
	htcpMinRTTForRatio = 10
	// htcpMaxRTTStep: a sample raises RTT_max only if within 20 ms of it, to
	// ignore outliers.
	htcpMaxRTTStep = 20
)

// Htcp is H-TCP: the additive increase grows with the time Δ since the last
// congestion event, α(Δ) = 1 + 10(Δ−Δ_L) + ((Δ−Δ_L)/2)² for Δ > Δ_L = 1 s
// (1 before), scaled by 2(1−β) so that the average throughput is
// independent of β; the backoff β adapts to RTT_min/RTT_max, clamped to
// [0.5, 0.8], or falls back to 0.5 when the achieved throughput moved by
// more than 20% between congestion events (the "bandwidth switch"). With
// RTT scaling on (the default), α is also scaled by RTT_min/100 ms within
// [0.5, 10], so that flows with different RTTs converge.
//
// The arithmetic is the kernel's: uint32 jiffies at HZ = 1000, α and β ×128.
// In particular (Δ−Δ_L)/2 squared wraps uint32 once Δ exceeds about 132 s
// without congestion, as it does in Linux.
//
// Profile differences:
//   - Undo: ProfileLinux310 restores max(cwnd, ssthresh/β), computed as
//     (ssthresh<<7)/β in uint32. Because ssthresh is never below 2, an undo
//     after a reduction from cwnd < 4 with β = 0.5 raises cwnd to 4 (ACT
//     paper §4.5, Fig. 13), and after two consecutive undos with ssthresh
//     restored to 0x7fffffff it wraps to about 67 million packets (§4.3).
//     ProfileLinux restores max(cwnd, prior_cwnd) through [RenoUndoCwnd]
//     (commit 4faf783998b8 "tcp: fix cwnd undo in Reno and HTCP congestion
//     controls", 4.13). Both profiles restore H-TCP's own congestion time,
//     RTT_max and bandwidth history.
//   - Slow start and the cwnd-limited test are the profile-aware helpers.
type Htcp struct {
	alpha      uint32 // ×128
	beta       uint32 // ×128
	modeSwitch bool   // the RTT-ratio β is allowed (second event onwards)
	pktsAcked  uint32 // packets acknowledged by the last ACK in Open
	packetCnt  uint32 // packets since the last throughput sample
	minRTT     uint32 // jiffies
	maxRTT     uint32 // jiffies
	lastCong   uint32 // jiffies of the last congestion event
	lastTime   uint32 // jiffies of the last throughput sample

	undoLastCong uint32 // 0 = nothing to undo
	undoMaxRTT   uint32
	undoOldMaxB  uint32

	minB, maxB, oldMaxB, bi uint32 // achieved throughput, packets/s
}

func init() {
	Register(Info{Name: "htcp", Description: "H-TCP (Leith & Shorten 2004): alpha grows with time since congestion, adaptive beta", Family: FamilyLossBased, Beta: 0.5, New: func() Algorithm { return &Htcp{} }})
}

// htcpJiffies is the kernel's jiffies counter at simulated time now. It
// starts at 1, so that a congestion time of 0 can mean "nothing to undo" as
// in the kernel, whose jiffies is never 0 in practice.
func htcpJiffies(now time.Duration) uint32 { return uint32(now/htcpJiffy) + 1 }

// htcpUsToJiffies rounds a microsecond RTT up to jiffies, as
// usecs_to_jiffies does.
func htcpUsToJiffies(d time.Duration) uint32 {
	return uint32((d + htcpJiffy - 1) / htcpJiffy)
}

func (h *Htcp) Init(s *Sock) {
	*h = Htcp{
		alpha:     htcpAlphaBase,
		beta:      htcpBetaMin,
		pktsAcked: 1,
		lastCong:  htcpJiffies(s.Now),
	}
}

func (h *Htcp) congTime(s *Sock) uint32 { return htcpJiffies(s.Now) - h.lastCong }

// ccount is the number of RTT_min since the last congestion event.
func (h *Htcp) ccount(s *Sock) uint32 { return h.congTime(s) / h.minRTT }

// reset remembers the state a later undo restores and starts a new
// congestion epoch.
func (h *Htcp) reset(s *Sock) {
	h.undoLastCong = h.lastCong
	h.undoMaxRTT = h.maxRTT
	h.undoOldMaxB = h.oldMaxB
	h.lastCong = htcpJiffies(s.Now)
}

func (h *Htcp) UndoCwnd(s *Sock) uint32 {
	if h.undoLastCong != 0 {
		h.lastCong = h.undoLastCong
		h.maxRTT = h.undoMaxRTT
		h.oldMaxB = h.undoOldMaxB
		h.undoLastCong = 0
	}
	if s.Profile == ProfileLinux310 {
		return max(s.Cwnd, (s.SSThresh<<7)/h.beta)
	}
	return RenoUndoCwnd(s)
}

func (h *Htcp) measureRTT(s *Sock, rtt uint32) {
	if h.minRTT > rtt || h.minRTT == 0 {
		h.minRTT = rtt
	}
	// RTT_max is only sampled outside loss recovery.
	if s.CAState == StateOpen {
		h.maxRTT = max(h.maxRTT, h.minRTT)
		if h.maxRTT < rtt && rtt <= h.maxRTT+htcpMaxRTTStep*htcpHZ/1000 {
			h.maxRTT = rtt
		}
	}
}

// PktsAcked samples RTT and, once per window, the achieved throughput.
func (h *Htcp) PktsAcked(s *Sock, a AckSample) {
	now := htcpJiffies(s.Now)
	if s.CAState == StateOpen {
		h.pktsAcked = a.PktsAcked
	}
	if a.RTT > 0 {
		h.measureRTT(s, htcpUsToJiffies(a.RTT))
	}
	// Achieved throughput, for the bandwidth switch.
	if s.CAState != StateOpen && s.CAState != StateDisorder {
		h.packetCnt = 0
		h.lastTime = now
		return
	}
	h.packetCnt += a.PktsAcked
	step := h.alpha >> 7
	if step == 0 {
		step = 1
	}
	if h.packetCnt >= s.Cwnd-step && now-h.lastTime >= h.minRTT && h.minRTT > 0 {
		curBi := h.packetCnt * htcpHZ / (now - h.lastTime)
		if h.ccount(s) <= 3 {
			// Just after congestion: take the sample as is.
			h.minB, h.maxB, h.bi = curBi, curBi, curBi
		} else {
			h.bi = (3*h.bi + curBi) / 4
			h.maxB = max(h.maxB, h.bi)
			h.minB = min(h.minB, h.maxB)
		}
		h.packetCnt = 0
		h.lastTime = now
	}
}

// betaUpdate sets β from RTT_min/RTT_max, or to 0.5 after a throughput
// change of more than 20% (paper §4).
func (h *Htcp) betaUpdate() {
	maxB, oldMaxB := h.maxB, h.oldMaxB
	h.oldMaxB = h.maxB
	// 4·old ≤ 5·max ≤ 6·old, with the kernel's wrapping comparison.
	if !(6*oldMaxB-4*oldMaxB >= 5*maxB-4*oldMaxB) {
		h.beta = htcpBetaMin
		h.modeSwitch = false
		return
	}
	if h.modeSwitch && h.minRTT > htcpMinRTTForRatio*htcpHZ/1000 && h.maxRTT != 0 {
		h.beta = min(max((h.minRTT<<7)/h.maxRTT, htcpBetaMin), htcpBetaMax)
	} else {
		h.beta = htcpBetaMin
		h.modeSwitch = true
	}
}

// alphaUpdate sets α from the time since the last congestion event.
func (h *Htcp) alphaUpdate(s *Sock) {
	var factor uint32 = 1
	diff := h.congTime(s)
	if diff > htcpDeltaL {
		diff -= htcpDeltaL
		factor = 1 + (10*diff+(diff/2)*(diff/2)/htcpHZ)/htcpHZ
	}
	if h.minRTT != 0 {
		// Scale by RTT_min/100 ms, within [0.5, 10], in units of 1/8.
		scale := uint32(htcpHZ<<3) / (10 * h.minRTT)
		scale = min(max(scale, 1<<2), 10<<3)
		factor = (factor << 3) / scale
		if factor == 0 {
			factor = 1
		}
	}
	h.alpha = 2 * factor * ((1 << 7) - h.beta)
	if h.alpha == 0 {
		h.alpha = htcpAlphaBase
	}
}

// SSThresh adapts α and β at the congestion event and backs off to β·cwnd.
func (h *Htcp) SSThresh(s *Sock) uint32 {
	minRTT, maxRTT := h.minRTT, h.maxRTT
	h.betaUpdate()
	h.alphaUpdate(s)
	// Let RTT_max fade towards RTT_min, for routing changes.
	if minRTT > 0 && maxRTT > minRTT {
		h.maxRTT = minRTT + (maxRTT-minRTT)*95/100
	}
	return max(s.Cwnd*h.beta>>7, 2)
}

func (h *Htcp) CongAvoid(s *Sock, acked uint32) {
	if !s.IsCwndLimited() {
		return
	}
	if s.InSlowStart() {
		s.SlowStart(acked)
		return
	}
	// cwnd += α/cwnd per packet acknowledged.
	if (s.CwndCnt*h.alpha)>>7 >= s.Cwnd {
		if s.Cwnd < s.CwndClamp {
			s.Cwnd++
		}
		s.CwndCnt = 0
		h.alphaUpdate(s)
	} else {
		s.CwndCnt += h.pktsAcked
	}
	h.pktsAcked = 1
}

func (h *Htcp) SetState(s *Sock, state CAState) {
	switch state {
	case StateOpen:
		if h.undoLastCong != 0 {
			h.lastCong = htcpJiffies(s.Now)
			h.undoLastCong = 0
		}
	case StateCWR, StateRecovery, StateLoss:
		h.reset(s)
	}
}

func (*Htcp) CwndEvent(*Sock, Event) {}

var htcpVars = []VarDesc{
	{Name: "alpha", Doc: "additive increase α, packets per RTT"},
	{Name: "beta", Doc: "backoff factor β"},
	{Name: "since_cong_s", Doc: "Δ, seconds since the last congestion event (or the start)"},
	{Name: "min_rtt_ms", Doc: "RTT_min (ms)"},
	{Name: "max_rtt_ms", Doc: "RTT_max (ms)"},
	{Name: "mode_switch", Doc: "1 if the RTT-ratio β is in use"},
	{Name: "bw", Doc: "achieved throughput B_i (packets/s)"},
}

func (h *Htcp) Vars() []VarDesc { return htcpVars }

func (h *Htcp) ReadVars(s *Sock, dst []float64) {
	dst[0] = float64(h.alpha) / 128
	dst[1] = float64(h.beta) / 128
	dst[2] = float64(h.congTime(s)) / htcpHZ
	dst[3] = float64(h.minRTT) * 1000 / htcpHZ
	dst[4] = float64(h.maxRTT) * 1000 / htcpHZ
	dst[5] = b2f(h.modeSwitch)
	dst[6] = float64(h.bi)
}

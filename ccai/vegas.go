package ccai

// Vegas constants (Brakmo and Peterson, "TCP Vegas: end to end congestion
// avoidance on a global Internet", IEEE JSAC 13(8), 1995, §3.2; Linux's
// defaults).
const (
	// vegasAlpha, vegasBeta: keep between 2 and 4 packets queued in the
	// network (the paper's α = 1, β = 3 in buffers, Linux's 2 and 4).
	vegasAlpha = 2
	vegasBeta  = 4
	// vegasGamma: leave slow start when more than 1 packet is queued
	// (paper §3.3).
	vegasGamma = 1
	// vegasNoRTT marks an RTT minimum with no sample yet (0x7fffffff µs).
	vegasNoRTT = 0x7fffffff
)

// vegasCore is the RTT bookkeeping Vegas shares with YeAH.
type vegasCore struct {
	doing     bool   // Vegas is active (ca_state is Open)
	begSndNxt uint64 // right edge of the window being measured
	cntRTT    uint32 // RTT samples in this window
	minRTT    uint32 // minimum RTT in this window, µs+1
	baseRTT   uint32 // minimum RTT since (re)start, µs+1
}

func (v *vegasCore) init(s *Sock) {
	v.baseRTT = vegasNoRTT
	v.enable(s)
}

func (v *vegasCore) enable(s *Sock) {
	v.doing = true
	v.begSndNxt = s.SndNxt
	v.cntRTT = 0
	v.minRTT = vegasNoRTT
}

func (v *vegasCore) pktsAcked(a AckSample) {
	if a.RTT < 0 {
		return
	}
	// One is added so that a zero RTT (possible on a LAN) still counts.
	r := rttMicros(a.RTT) + 1
	v.baseRTT = min(v.baseRTT, r)
	v.minRTT = min(v.minRTT, r)
	v.cntRTT++
}

func (v *vegasCore) setState(s *Sock, state CAState) {
	if state == StateOpen {
		v.enable(s)
	} else {
		v.doing = false
	}
}

func (v *vegasCore) cwndEvent(s *Sock, ev Event) {
	if ev == EventCwndRestart || ev == EventTxStart {
		v.init(s)
	}
}

// vegasSSThresh caps ssthresh just below cwnd, so that a Vegas decision to
// stop growing also ends slow start.
func vegasSSThresh(s *Sock) uint32 {
	return min(s.SSThresh, s.Cwnd-1)
}

// currentSSThresh raises ssthresh towards 3/4 of cwnd outside a window
// reduction (Linux's tcp_current_ssthresh).
func currentSSThresh(s *Sock) uint32 {
	if s.CAState == StateCWR || s.CAState == StateRecovery {
		return s.SSThresh
	}
	return max(s.SSThresh, s.Cwnd>>1+s.Cwnd>>2)
}

// Vegas is TCP Vegas: once per RTT it compares the expected rate
// cwnd/BaseRTT with the actual rate cwnd/RTT and keeps the difference,
// expressed as packets queued in the network, between α = 2 and β = 4 by
// adding or removing one packet per RTT. In slow start it doubles every RTT
// and leaves slow start as soon as more than γ = 1 packet is queued,
// shrinking cwnd to the expected window. Losses are handled as Reno.
//
// As in Linux, RTT is the minimum sample of the last window (filtering out
// delayed ACKs), the queue estimate is diff = cwnd·(RTT − BaseRTT)/BaseRTT,
// and Vegas only runs in ca_state Open with at least three samples in the
// window; otherwise it falls back to Reno.
//
// Profile differences:
//   - Undo: ProfileLinux310 has no undo of its own and gets the kernel's
//     fallback max(cwnd, 2·ssthresh); see [RenoUndoCwnd].
//   - Slow start is the profile-aware [Sock.SlowStart].
type Vegas struct {
	vegasCore
	diff   uint32 // queued packets estimated at the last per-RTT update
	target uint32 // expected window cwnd·BaseRTT/RTT at the last update
}

func init() {
	Register(Info{Name: "vegas", Description: "TCP Vegas (Brakmo & Peterson 1995), alpha=2 beta=4 gamma=1", Family: FamilyReno, Beta: 0.5, New: func() Algorithm { return &Vegas{} }})
}

func (v *Vegas) Init(s *Sock) { v.init(s) }

func (v *Vegas) PktsAcked(_ *Sock, a AckSample) { v.pktsAcked(a) }

func (v *Vegas) SetState(s *Sock, state CAState) { v.setState(s, state) }

func (v *Vegas) CwndEvent(s *Sock, ev Event) { v.cwndEvent(s, ev) }

func (*Vegas) SSThresh(s *Sock) uint32 { return RenoSSThresh(s) }

func (*Vegas) UndoCwnd(s *Sock) uint32 { return RenoUndoCwnd(s) }

func (v *Vegas) CongAvoid(s *Sock, acked uint32) {
	if !v.doing {
		RenoCongAvoid(s, acked)
		return
	}
	if s.SndUna <= v.begSndNxt {
		// Within the window being measured: only slow start grows.
		if s.InSlowStart() {
			s.SlowStart(acked)
		}
		return
	}
	// A full window has been acknowledged: one Vegas update per RTT.
	v.begSndNxt = s.SndNxt
	if v.cntRTT <= 2 {
		// Too few samples to tell queueing from delayed ACKs.
		RenoCongAvoid(s, acked)
	} else {
		rtt := uint64(v.minRTT)
		base := uint64(v.baseRTT)
		v.target = uint32(uint64(s.Cwnd) * base / rtt)
		v.diff = uint32(uint64(s.Cwnd) * (rtt - base) / base)
		switch {
		case v.diff > vegasGamma && s.InSlowStart():
			// Going too fast: leave slow start at the expected window.
			s.Cwnd = min(s.Cwnd, v.target+1)
			s.SSThresh = vegasSSThresh(s)
		case s.InSlowStart():
			s.SlowStart(acked)
		case v.diff > vegasBeta:
			s.Cwnd--
			s.SSThresh = vegasSSThresh(s)
		case v.diff < vegasAlpha:
			s.Cwnd++
		}
		s.Cwnd = min(max(s.Cwnd, 2), s.CwndClamp)
		s.SSThresh = currentSSThresh(s)
	}
	v.cntRTT = 0
	v.minRTT = vegasNoRTT
}

var vegasVars = []VarDesc{
	{Name: "base_rtt_ms", Doc: "BaseRTT, minimum RTT since (re)start (ms; 0 if none)"},
	{Name: "min_rtt_ms", Doc: "minimum RTT in the current window (ms; 0 if none)"},
	{Name: "diff", Doc: "packets queued in the network at the last update, cwnd·(RTT−BaseRTT)/BaseRTT"},
	{Name: "target", Doc: "expected window cwnd·BaseRTT/RTT at the last update (packets)"},
	{Name: "cnt_rtt", Doc: "RTT samples in the current window"},
	{Name: "doing_vegas", Doc: "1 while Vegas is active (ca_state open)"},
}

func (v *Vegas) Vars() []VarDesc { return vegasVars }

func (v *Vegas) ReadVars(_ *Sock, dst []float64) {
	dst[0] = usToMs(v.baseRTT, vegasNoRTT)
	dst[1] = usToMs(v.minRTT, vegasNoRTT)
	dst[2] = float64(v.diff)
	dst[3] = float64(v.target)
	dst[4] = float64(v.cntRTT)
	dst[5] = b2f(v.doing)
}

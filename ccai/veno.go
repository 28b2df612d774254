package ccai

import "time"

// Veno constants (Fu and Liew, "TCP Veno: TCP enhancement for transmission
// over wireless access networks", IEEE JSAC 21(2), 2003).
const (
	// venoShift: diff is kept in units of 1/2 packet (Linux's
	// V_PARAM_SHIFT).
	venoShift = 1
	// venoBeta: a backlog N = cwnd·(RTT − BaseRTT)/RTT below 3 packets
	// means a loss was random, not congestive (paper §II.A, β = 3).
	venoBeta = 3 << venoShift
	// venoNoRTT marks an RTT minimum with no sample yet (0x7fffffff µs).
	venoNoRTT = 0x7fffffff
)

// Veno is TCP Veno: Reno whose reaction depends on the Vegas backlog
// estimate N = cwnd − cwnd·BaseRTT/RTT (paper §II). In congestion avoidance
// it grows one packet per RTT while N < β and one per two RTTs once N ≥ β;
// on loss it cuts cwnd to 4/5 when N < β (probably a random loss) and to
// 1/2 otherwise. Before three RTT samples have arrived it is plain Reno.
// RTTs are sampled in microseconds (plus one, so that zero means none), the
// per-ACK minimum is reset after every window update, and BaseRTT is the
// minimum since the last restart, as in Linux.
//
// Profile differences:
//   - Undo: ProfileLinux310 has no undo of its own and gets the kernel's
//     fallback max(cwnd, 2·ssthresh), which after a 4/5 reduction restores
//     1.6 times the pre-loss window (ACT paper §4.5, Fig. 14); see
//     [RenoUndoCwnd] for the kernel changes that fixed it.
//   - ProfileLinux passes the slow-start leftover to congestion avoidance
//     and counts acknowledged packets in the congestive branch (commits
//     "tcp: stretch ACK fixes in Veno prep" and "tcp: fix stretch ACK bugs
//     in Veno", 5.7). ProfileLinux310 ends the update after slow start and
//     counts one per ACK.
type Veno struct {
	doingVeno bool
	inc       bool   // congestive state: increase on the next full window
	cntRTT    uint32 // RTT samples since the algorithm was (re)started
	minRTT    uint32 // minimum RTT since the last window update, µs+1
	baseRTT   uint32 // minimum RTT since (re)start, µs+1
	diff      uint32 // backlog estimate N in 1/2 packets
}

func init() {
	Register(Info{Name: "veno", Description: "TCP Veno (Fu & Liew 2003): Reno with a Vegas backlog estimate", Family: FamilyLossBased, Beta: 0.5, New: func() Algorithm { return &Veno{} }})
}

func (v *Veno) Init(*Sock) {
	v.baseRTT = venoNoRTT
	v.inc = true
	v.enable()
}

func (v *Veno) enable() {
	v.doingVeno = true
	v.minRTT = venoNoRTT
}

// PktsAcked records an RTT sample.
func (v *Veno) PktsAcked(_ *Sock, a AckSample) {
	if a.RTT < 0 {
		return
	}
	r := rttMicros(a.RTT) + 1
	v.baseRTT = min(v.baseRTT, r)
	v.minRTT = min(v.minRTT, r)
	v.cntRTT++
}

func (v *Veno) SetState(_ *Sock, state CAState) {
	if state == StateOpen {
		v.enable()
	} else {
		v.doingVeno = false
	}
}

func (v *Veno) CwndEvent(s *Sock, ev Event) {
	if ev == EventCwndRestart || ev == EventTxStart {
		v.Init(s)
	}
}

func (v *Veno) CongAvoid(s *Sock, acked uint32) {
	if !v.doingVeno {
		RenoCongAvoid(s, acked)
		return
	}
	if !s.IsCwndLimited() {
		return
	}
	if v.cntRTT <= 2 {
		// Too few samples for the estimate: behave as Reno.
		RenoCongAvoid(s, acked)
		v.minRTT = venoNoRTT
		return
	}
	target := uint64(s.Cwnd) * uint64(v.baseRTT) << venoShift / uint64(v.minRTT)
	v.diff = s.Cwnd<<venoShift - uint32(target)
	v.grow(s, acked)
	s.Cwnd = min(max(s.Cwnd, 2), s.CwndClamp)
	v.minRTT = venoNoRTT
}

func (v *Veno) grow(s *Sock, acked uint32) {
	if s.InSlowStart() {
		acked = s.SlowStart(acked)
		if acked == 0 || s.Profile == ProfileLinux310 {
			return
		}
	}
	if v.diff < venoBeta {
		// Non-congestive: one packet per RTT.
		s.CongAvoidAI(s.Cwnd, acked)
		return
	}
	// Congestive: one packet every other RTT.
	if s.CwndCnt >= s.Cwnd {
		if v.inc && s.Cwnd < s.CwndClamp {
			s.Cwnd++
			v.inc = false
		} else {
			v.inc = true
		}
		s.CwndCnt = 0
		return
	}
	if s.Profile == ProfileLinux310 {
		s.CwndCnt++
	} else {
		s.CwndCnt += acked
	}
}

// SSThresh cuts to 4/5 on a probably random loss, to 1/2 on a congestive one
// (paper §II.B).
func (v *Veno) SSThresh(s *Sock) uint32 {
	if v.diff < venoBeta {
		return max(s.Cwnd*4/5, 2)
	}
	return max(s.Cwnd>>1, 2)
}

func (*Veno) UndoCwnd(s *Sock) uint32 { return RenoUndoCwnd(s) }

var venoVars = []VarDesc{
	{Name: "diff", Doc: "backlog estimate N = cwnd·(RTT − BaseRTT)/RTT (packets)"},
	{Name: "inc", Doc: "1 if the congestive state will grow cwnd on the next full window"},
	{Name: "congestive", Doc: "1 if diff ≥ β = 3 packets"},
	{Name: "base_rtt_ms", Doc: "BaseRTT, minimum RTT since (re)start (ms; 0 if none)"},
}

func (v *Veno) Vars() []VarDesc { return venoVars }

func (v *Veno) ReadVars(_ *Sock, dst []float64) {
	dst[0] = float64(v.diff) / (1 << venoShift)
	dst[1] = b2f(v.inc)
	dst[2] = b2f(v.diff >= venoBeta)
	dst[3] = usToMs(v.baseRTT, venoNoRTT)
}

// rttMicros converts an RTT sample to whole microseconds, saturating below
// 2^32 µs.
func rttMicros(d time.Duration) uint32 {
	us := d / time.Microsecond
	if us < 0 {
		return 0
	}
	return uint32(min(us, 0xfffffffe))
}

// usToMs converts a microsecond quantity to milliseconds for display, with
// none (the marker for "no sample") shown as 0.
func usToMs(us, none uint32) float64 {
	if us == none {
		return 0
	}
	return float64(us) / 1000
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

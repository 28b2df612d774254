package ccai

import "time"

// Hybla constants (Caini and Firrincieli, "TCP Hybla: a TCP enhancement for
// heterogeneous networks", Int. J. Satellite Commun. Netw. 22(5), 2004, §3;
// Linux's defaults).
const (
	// hyblaRTT0 is the reference RTT: a flow with RTT = ρ·RTT0 grows as a
	// Reno flow with RTT0 would.
	hyblaRTT0 = 25 * time.Millisecond
)

// hyblaFraction[i] is 2^(i/8)·128, truncated: the fractional part of 2^ρ for
// ρ in steps of 1/8, so that slow start needs no floating point.
var hyblaFraction = [8]uint32{128, 139, 152, 165, 181, 197, 215, 234}

// Hybla is TCP Hybla: it scales Reno's growth by the normalised RTT
// ρ = max(SRTT/RTT0, 1), RTT0 = 25 ms, so that long-RTT (satellite) flows
// grow per unit of time as a 25-ms flow does: cwnd += 2^ρ − 1 per ACK in slow
// start and ρ²/cwnd per ACK in congestion avoidance (paper §3, eqs. 6–7).
// ρ is held as ρ·8 (three fractional bits), ρ² as ρ²·128, and fractional
// increments accumulate in 1/128 packets. ρ is recomputed whenever SRTT
// drops below the smallest SRTT seen. Hybla is only active in ca_state
// Open; otherwise it is Reno.
//
// Linux sets cwnd to ρ when Hybla is initialised, after the handshake gave
// an SRTT. Our machinery calls Init before any RTT sample, so Hybla leaves
// the initial window alone when SRTT is still 0 and computes ρ on the first
// sample.
//
// Like Linux's hybla_cong_avoid (net/ipv4/tcp_hybla.c), Hybla asks
// [Sock.IsCwndLimited] once an ACK and then adds its whole increment,
// clamped only to ssthresh in slow start and to the clamp: one ACK of a
// window in which the sender was cwnd-limited can take cwnd far past twice
// what is in flight, and the window's next ACKs grow it again (the
// cwnd-validation oracle reports that, a departure of Linux's own).
//
// Profile differences:
//   - Undo: ProfileLinux310 has no undo of its own and gets the kernel's
//     fallback max(cwnd, 2·ssthresh); see [RenoUndoCwnd].
type Hybla struct {
	enabled  bool
	rho      uint32        // ρ
	rho2     uint32        // ρ²
	rho3ls   uint32        // ρ·8
	rho27ls  uint32        // ρ²·128
	minRTT   time.Duration // smallest SRTT seen; 0 = none
	cwndCent uint32        // fractional cwnd increments, 1/128 packets
}

func init() {
	Register(Info{Name: "hybla", Description: "TCP Hybla (Caini & Firrincieli 2004): RTT-normalised growth for long-delay links", Family: FamilyReno, Beta: 0.5, New: func() Algorithm { return &Hybla{} }})
}

func (h *Hybla) recalc(s *Sock) {
	us := uint64(s.SRTT / time.Microsecond)
	h.rho3ls = uint32(max(us*8/uint64(hyblaRTT0/time.Microsecond), 8))
	h.rho = h.rho3ls >> 3
	h.rho27ls = h.rho3ls * h.rho3ls << 1
	h.rho2 = h.rho27ls >> 7
}

func (h *Hybla) Init(s *Sock) {
	*h = Hybla{enabled: true}
	s.CwndClamp = min(s.CwndClamp, 65535)
	if s.SRTT > 0 {
		h.recalc(s)
		h.minRTT = s.SRTT
		s.Cwnd = h.rho
	}
}

func (h *Hybla) SetState(_ *Sock, state CAState) {
	h.enabled = state == StateOpen
}

func (*Hybla) CwndEvent(*Sock, Event) {}

func (*Hybla) SSThresh(s *Sock) uint32 { return RenoSSThresh(s) }

func (*Hybla) UndoCwnd(s *Sock) uint32 { return RenoUndoCwnd(s) }

func (h *Hybla) CongAvoid(s *Sock, acked uint32) {
	if s.SRTT > 0 && (h.minRTT == 0 || s.SRTT < h.minRTT) {
		h.recalc(s)
		h.minRTT = s.SRTT
	}
	if !s.IsCwndLimited() {
		return
	}
	if !h.enabled {
		RenoCongAvoid(s, acked)
		return
	}
	if h.rho == 0 {
		h.recalc(s)
	}
	slowStart := s.InSlowStart()
	var increment uint32
	if slowStart {
		// cwnd += 2^ρ − 1 per ACK, in 1/128 packets.
		increment = (1<<min(h.rho, 16))*hyblaFrac(h.rho3ls-h.rho<<3) - 128
	} else {
		// cwnd += ρ²/cwnd per ACK, in 1/128 packets.
		increment = h.rho27ls / s.Cwnd
		if increment < 128 {
			s.CwndCnt++
		}
	}
	odd := increment % 128
	s.Cwnd += increment >> 7
	h.cwndCent += odd
	for h.cwndCent >= 128 {
		s.Cwnd++
		h.cwndCent -= 128
		s.CwndCnt = 0
	}
	// Guarantee progress when the increment rounds to nothing.
	if increment == 0 && odd == 0 && s.CwndCnt >= s.Cwnd {
		s.Cwnd++
		s.CwndCnt = 0
	}
	if slowStart {
		s.Cwnd = min(s.Cwnd, s.SSThresh)
	}
	s.Cwnd = min(s.Cwnd, s.CwndClamp)
}

func hyblaFrac(odds uint32) uint32 {
	if odds > 7 {
		return 128
	}
	return hyblaFraction[odds]
}

var hyblaVars = []VarDesc{
	{Name: "rho", Doc: "normalised RTT ρ = SRTT/RTT0, at least 1"},
	{Name: "rho2", Doc: "ρ²"},
	{Name: "enabled", Doc: "1 while Hybla is active (ca_state open)"},
}

func (h *Hybla) Vars() []VarDesc { return hyblaVars }

func (h *Hybla) ReadVars(_ *Sock, dst []float64) {
	dst[0] = float64(h.rho3ls) / 8
	dst[1] = float64(h.rho27ls) / 128
	dst[2] = b2f(h.enabled)
}

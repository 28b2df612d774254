package ccai

// Scalable TCP constants (Kelly, "Scalable TCP: improving performance in
// highspeed wide area networks", CCR 2003: a = 0.01, b = 0.125).
const (
	// scalableAICnt: cwnd grows by one packet per 100 acknowledged packets
	// (a = 0.01) once cwnd ≥ 100; below that, as Reno.
	scalableAICnt = 100
	// scalableAICnt310: Linux 3.10 used 50, "to account for delayed ack",
	// because it counted ACKs rather than packets.
	scalableAICnt310 = 50
	// scalableMDScale: on loss cwnd becomes cwnd − cwnd/8 (b = 1/8).
	scalableMDScale = 3
)

// Scalable is Scalable TCP: multiplicative increase of 1% per packet
// acknowledged and a decrease of 1/8 on loss, so that the recovery time after
// a loss is independent of the window.
//
// Profile differences:
//   - ProfileLinux counts acknowledged packets and uses one increment per
//     100 (commit "tcp: fix stretch ACK bugs in Scalable", 5.7, which also
//     raised TCP_SCALABLE_AI_CNT from 50 to 100 and passes the slow-start
//     leftover to congestion avoidance). ProfileLinux310 counts ACKs, one
//     increment per 50 of them.
//   - Undo: ProfileLinux310 has no undo of its own and gets the kernel's
//     fallback max(cwnd, 2·ssthresh), which after a 1/8 reduction nearly
//     doubles the window; see [RenoUndoCwnd] for the kernel changes.
type Scalable struct{}

func init() {
	Register(Info{Name: "scalable", Description: "Scalable TCP (Kelly 2003): a = 0.01, b = 0.125", Family: FamilyLossBased, Beta: 0.875, New: func() Algorithm { return &Scalable{} }})
}

func (*Scalable) Init(*Sock) {}

func (*Scalable) SSThresh(s *Sock) uint32 {
	return max(s.Cwnd-(s.Cwnd>>scalableMDScale), 2)
}

func (*Scalable) CongAvoid(s *Sock, acked uint32) {
	if !s.IsCwndLimited() {
		return
	}
	if s.InSlowStart() {
		acked = s.SlowStart(acked)
		if acked == 0 || s.Profile == ProfileLinux310 {
			return
		}
	}
	s.CongAvoidAI(min(s.Cwnd, scalableAI(s)), acked)
}

func scalableAI(s *Sock) uint32 {
	if s.Profile == ProfileLinux310 {
		return scalableAICnt310
	}
	return scalableAICnt
}

func (*Scalable) SetState(*Sock, CAState) {}

func (*Scalable) CwndEvent(*Sock, Event) {}

func (*Scalable) UndoCwnd(s *Sock) uint32 { return RenoUndoCwnd(s) }

var scalableVars = []VarDesc{
	{Name: "ai_cnt", Doc: "packets (ACKs in linux-3.10) acknowledged per one-packet increase"},
}

func (*Scalable) Vars() []VarDesc { return scalableVars }

func (*Scalable) ReadVars(s *Sock, dst []float64) {
	dst[0] = float64(min(s.Cwnd, scalableAI(s)))
}

package ccai

// Reno is standard AIMD congestion control (RFC 5681): slow start, one packet
// per RTT in congestion avoidance, and halving on loss. The ACT paper calls
// it AIMD.
type Reno struct{}

func init() {
	Register(Info{Name: "reno", Description: "AIMD (RFC 5681), Linux's tcp_reno", Family: FamilyReno, Beta: 0.5, New: func() Algorithm { return &Reno{} }})
}

func (*Reno) Init(*Sock) {}

func (*Reno) SSThresh(s *Sock) uint32 { return RenoSSThresh(s) }

// CongAvoid is RFC 5681 §3.1: slow start below ssthresh, then one packet per
// window of acknowledged packets.
func (*Reno) CongAvoid(s *Sock, acked uint32) { RenoCongAvoid(s, acked) }

func (*Reno) SetState(*Sock, CAState) {}

func (*Reno) CwndEvent(*Sock, Event) {}

func (*Reno) UndoCwnd(s *Sock) uint32 { return RenoUndoCwnd(s) }

// RenoCongAvoid is Reno's window growth, shared by algorithms that fall back
// to it (Linux's tcp_reno_cong_avoid).
func RenoCongAvoid(s *Sock, acked uint32) {
	if !s.IsCwndLimited() {
		return
	}
	if s.InSlowStart() {
		acked = s.SlowStart(acked)
		if acked == 0 {
			return
		}
	}
	s.CongAvoidAI(s.Cwnd, acked)
}

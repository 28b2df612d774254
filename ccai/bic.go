package ccai

import "time"

// BIC constants (Xu, Harfoush and Rhee, "Binary increase congestion control
// (BIC) for fast long-distance networks", INFOCOM 2004, §3; Linux's
// defaults).
const (
	bicBetaScale = 1024 // β is in units of 1/1024
	// bicBeta: multiplicative decrease to 0.8 of cwnd (β = 819/1024).
	bicBeta = 819
	// bicB: binary search divides the distance to W_max by B = 4.
	bicB = 4
	// bicMaxIncrement: S_max, at most 16 packets per RTT.
	bicMaxIncrement = 16
	// bicLowWindow: below 14 packets BIC behaves as Reno.
	bicLowWindow = 14
	// bicSmoothPart: near W_max the increase is slowed to B/20 packets per
	// RTT (cnt = cwnd·20/B).
	bicSmoothPart = 20
	// bicAckRatioShift: the delayed-ACK ratio is kept ×16.
	bicAckRatioShift = 4
	// bicUpdateHold: recompute cnt at most every HZ/32 while cwnd is
	// unchanged.
	bicUpdateHold = time.Second / 32
)

// Bic is BIC-TCP: below W_max (the window at the last loss) it binary
// searches towards it, growing by the distance/B but at most S_max = 16 and
// slowing near W_max; above W_max it probes outwards slowly, then linearly at
// S_max. Fast convergence lowers W_max when a loss comes before W_max was
// regained. Below 14 packets it is Reno. As in Linux, the per-ACK step
// count is divided by the estimated delayed-ACK ratio.
//
// Profile differences:
//   - Undo: ProfileLinux310 restores max(cwnd, cwnd at the last loss), BIC's
//     own undo of that era; ProfileLinux uses [RenoUndoCwnd] (commit "tcp:
//     consolidate congestion control undo functions", 4.14).
//   - ProfileLinux passes the slow-start leftover on and counts acknowledged
//     packets in [Sock.CongAvoidAI] (commit "tcp: fix stretch ACK bugs in
//     BIC", 5.7); ProfileLinux310 counts ACKs.
type Bic struct {
	cnt         uint32        // packets acked per cwnd increment
	lastMaxCwnd uint32        // W_max
	lossCwnd    uint32        // cwnd at the last loss
	lastCwnd    uint32        // cwnd at the last update
	lastTime    time.Duration // time of the last update
	epochStart  time.Duration // start of the current epoch; 0 = none
	delayedAck  uint32        // ACK ratio ×16
}

func init() {
	Register(Info{Name: "bic", Description: "BIC-TCP (Xu, Harfoush & Rhee 2004): binary-search increase", Family: FamilyLossBased, Beta: 0.5, New: func() Algorithm { return &Bic{} }})
}

// reset starts afresh after a timeout. The cwnd at the last loss survives,
// so that an undone timeout can restore it (commit "tcp: fix undo after RTO
// for BIC", 3.8).
func (b *Bic) reset() {
	*b = Bic{delayedAck: 2 << bicAckRatioShift, lossCwnd: b.lossCwnd}
}

func (b *Bic) Init(*Sock) {
	*b = Bic{}
	b.reset()
}

func (b *Bic) CongAvoid(s *Sock, acked uint32) {
	if !s.IsCwndLimited() {
		return
	}
	if s.InSlowStart() {
		acked = s.SlowStart(acked)
		if acked == 0 || s.Profile == ProfileLinux310 {
			return
		}
	}
	b.update(s)
	s.CongAvoidAI(b.cnt, acked)
}

// update computes cnt, the packets acknowledged per one-packet increase
// (paper §3, Fig. 1).
func (b *Bic) update(s *Sock) {
	cwnd := s.Cwnd
	if b.lastCwnd == cwnd && s.Now-b.lastTime <= bicUpdateHold {
		return
	}
	b.lastCwnd = cwnd
	b.lastTime = s.Now
	if b.epochStart == 0 {
		b.epochStart = max(s.Now, 1) // 0 means "no epoch"
	}
	switch {
	case cwnd <= bicLowWindow:
		// Small windows: Reno, one packet per RTT.
		b.cnt = cwnd
		return
	case cwnd < b.lastMaxCwnd:
		// Binary search towards W_max.
		dist := (b.lastMaxCwnd - cwnd) / bicB
		switch {
		case dist > bicMaxIncrement:
			b.cnt = cwnd / bicMaxIncrement // linear increase, S_max
		case dist <= 1:
			b.cnt = cwnd * bicSmoothPart / bicB // smooth approach
		default:
			b.cnt = cwnd / dist
		}
	default:
		// Max probing above W_max: slow, then accelerating to S_max.
		switch {
		case cwnd < b.lastMaxCwnd+bicB:
			b.cnt = cwnd * bicSmoothPart / bicB
		case cwnd < b.lastMaxCwnd+bicMaxIncrement*(bicB-1):
			b.cnt = cwnd * (bicB - 1) / (cwnd - b.lastMaxCwnd)
		default:
			b.cnt = cwnd / bicMaxIncrement
		}
	}
	// Before the first loss, grow at least 5% per RTT.
	if b.lastMaxCwnd == 0 && b.cnt > 20 {
		b.cnt = 20
	}
	b.cnt = (b.cnt << bicAckRatioShift) / max(b.delayedAck, 1)
	b.cnt = max(b.cnt, 1)
}

// SSThresh is the multiplicative decrease to β = 0.8 (0.5 below
// Low_Window), with fast convergence of W_max (paper §3.1).
func (b *Bic) SSThresh(s *Sock) uint32 {
	b.epochStart = 0
	if s.Cwnd < b.lastMaxCwnd {
		b.lastMaxCwnd = s.Cwnd * (bicBetaScale + bicBeta) / (2 * bicBetaScale)
	} else {
		b.lastMaxCwnd = s.Cwnd
	}
	b.lossCwnd = s.Cwnd
	if s.Cwnd <= bicLowWindow {
		return max(s.Cwnd>>1, 2)
	}
	return max(s.Cwnd*bicBeta/bicBetaScale, 2)
}

func (b *Bic) SetState(_ *Sock, state CAState) {
	if state == StateLoss {
		b.reset()
	}
}

func (*Bic) CwndEvent(*Sock, Event) {}

func (b *Bic) UndoCwnd(s *Sock) uint32 {
	if s.Profile == ProfileLinux310 {
		return max(s.Cwnd, b.lossCwnd)
	}
	return RenoUndoCwnd(s)
}

// PktsAcked tracks the delayed-ACK ratio, as an EWMA with gain 1/16.
func (b *Bic) PktsAcked(s *Sock, a AckSample) {
	if s.CAState == StateOpen {
		b.delayedAck += a.PktsAcked - b.delayedAck>>bicAckRatioShift
	}
}

var bicVars = []VarDesc{
	{Name: "w_max", Doc: "W_max, the window before the last reduction after fast convergence (packets)"},
	{Name: "cnt", Doc: "acked packets per window increment"},
	{Name: "loss_cwnd", Doc: "cwnd at the last loss (packets)"},
	{Name: "ack_ratio", Doc: "estimated packets per ACK"},
	{Name: "epoch_s", Doc: "seconds since the epoch started (0 if none)"},
}

func (b *Bic) Vars() []VarDesc { return bicVars }

func (b *Bic) ReadVars(s *Sock, dst []float64) {
	dst[0] = float64(b.lastMaxCwnd)
	dst[1] = float64(b.cnt)
	dst[2] = float64(b.lossCwnd)
	dst[3] = float64(b.delayedAck) / (1 << bicAckRatioShift)
	if b.epochStart != 0 {
		dst[4] = float64(s.Now-b.epochStart) / float64(time.Second)
	} else {
		dst[4] = 0
	}
}

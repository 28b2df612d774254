package ccai

// YeAH constants (Baiocchi, Castellani and Vacirca, "YeAH-TCP: Yet Another
// Highspeed TCP", PFLDnet 2007, §3; Linux's defaults).
const (
	yeahAlpha   = 80 // Q_max: most packets a flow may keep queued
	yeahGamma   = 1  // decongestion removes queue/γ packets…
	yeahDelta   = 3  // …and on loss at least cwnd/2^δ (log2)
	yeahEpsilon = 1  // decongestion removes at most cwnd/2^ε (log2)
	yeahPhy     = 8  // φ: queueing delay above BaseRTT/2^φ means congestion (log2)
	yeahRho     = 16 // ρ: RTTs of Reno mode before a loss counts as competition
	yeahZeta    = 50 // ζ: fast-mode RTTs that reset the Reno-emulation count
	// yeahScalableAICnt is Scalable TCP's 1 packet per 100 acknowledged
	// (Kelly 2003), the fast mode's increase.
	yeahScalableAICnt = 100
)

// Yeah is YeAH-TCP: a "fast" mode that grows like Scalable TCP while the
// estimated queue Q = cwnd·(RTT − BaseRTT)/RTT is small, and a "slow" mode
// that grows like Reno once Q exceeds Q_max = 80 packets or the queueing
// delay exceeds BaseRTT/2^φ. In slow mode it also drains its own queue
// ("precautionary decongestion") once per RTT. On loss it removes the
// estimated queue (at least cwnd/8, at most cwnd/2) unless it has been in
// slow mode long enough (ρ RTTs) to suspect competing Reno flows, in which
// case it halves. RTT bookkeeping is Vegas' (see [Vegas]).
//
// Profile differences:
//   - Undo: ProfileLinux310 has no undo of its own and gets the kernel's
//     fallback max(cwnd, 2·ssthresh); see [RenoUndoCwnd].
//   - ProfileLinux grows in fast mode with [Sock.CongAvoidAI] over
//     min(cwnd, 100) acknowledged packets and passes the slow-start
//     leftover on (commit "tcp: fix stretch ACK bugs in Yeah", 5.7).
//     ProfileLinux310 adds the packets acknowledged by the last ACK in Open
//     state and increments once the count exceeds min(cwnd, 100).
type Yeah struct {
	vegasCore
	lastQ      uint32 // queue estimate at the last per-RTT update (packets)
	doingReno  uint32 // RTTs spent in slow (Reno) mode; 0 = fast mode
	renoCount  uint32 // Reno-emulation window: floor for decongestion
	fastCount  uint32 // fast-mode RTTs since the last reset
	lastAcked  uint32 // 3.10 only: packets acknowledged by the last ACK
	decongests uint32 // precautionary decongestions so far
}

func init() {
	Register(Info{Name: "yeah", Description: "YeAH-TCP (Baiocchi et al. 2007): Scalable/Reno switching on a Vegas queue estimate", Family: FamilyLossBased, Beta: 0.5, New: func() Algorithm { return &Yeah{} }})
}

func (y *Yeah) Init(s *Sock) {
	y.init(s)
	y.doingReno = 0
	y.lastQ = 0
	y.renoCount = 2
	y.fastCount = 0
	y.lastAcked = 1
	y.decongests = 0
	// Keep cwnd·128 inside uint32, as Linux does for YeAH.
	s.CwndClamp = min(s.CwndClamp, 0xffffffff/128)
}

func (y *Yeah) PktsAcked(s *Sock, a AckSample) {
	if s.CAState == StateOpen {
		y.lastAcked = a.PktsAcked
	}
	y.pktsAcked(a)
}

func (y *Yeah) SetState(s *Sock, state CAState) { y.setState(s, state) }

func (y *Yeah) CwndEvent(s *Sock, ev Event) { y.cwndEvent(s, ev) }

func (*Yeah) UndoCwnd(s *Sock) uint32 { return RenoUndoCwnd(s) }

func (y *Yeah) CongAvoid(s *Sock, acked uint32) {
	if !s.IsCwndLimited() {
		return
	}
	y.grow(s, acked)
	if s.SndUna > y.begSndNxt {
		y.perRTT(s)
	}
}

func (y *Yeah) grow(s *Sock, acked uint32) {
	if s.InSlowStart() {
		acked = s.SlowStart(acked)
		if acked == 0 || s.Profile == ProfileLinux310 {
			return
		}
	}
	switch {
	case y.doingReno != 0:
		s.CongAvoidAI(s.Cwnd, acked)
	case s.Profile == ProfileLinux310:
		// Scalable, counting the packets of the last ACK.
		s.CwndCnt += y.lastAcked
		if s.CwndCnt > min(s.Cwnd, yeahScalableAICnt) {
			if s.Cwnd < s.CwndClamp {
				s.Cwnd++
			}
			s.CwndCnt = 0
		}
		y.lastAcked = 1
	default:
		s.CongAvoidAI(min(s.Cwnd, yeahScalableAICnt), acked)
	}
}

// perRTT runs once a full window has been acknowledged: it estimates the
// queue, picks the mode and decongests if needed (paper §3).
func (y *Yeah) perRTT(s *Sock) {
	if y.cntRTT > 2 {
		rtt := uint64(y.minRTT)
		base := uint64(y.baseRTT)
		queue := uint32(uint64(s.Cwnd) * (rtt - base) / rtt)
		if queue > yeahAlpha || rtt-base > base>>yeahPhy {
			if queue > yeahAlpha && s.Cwnd > y.renoCount {
				reduction := min(queue/yeahGamma, s.Cwnd>>yeahEpsilon)
				s.Cwnd -= reduction
				s.Cwnd = max(s.Cwnd, y.renoCount)
				s.SSThresh = s.Cwnd
				y.decongests++
			}
			if y.renoCount <= 2 {
				y.renoCount = max(s.Cwnd>>1, 2)
			} else {
				y.renoCount++
			}
			y.doingReno = min(y.doingReno+1, 0xffffff)
		} else {
			y.fastCount++
			if y.fastCount > yeahZeta {
				y.renoCount = 2
				y.fastCount = 0
			}
			y.doingReno = 0
		}
		y.lastQ = queue
	}
	y.begSndNxt = s.SndNxt
	y.cntRTT = 0
	y.minRTT = vegasNoRTT
}

// SSThresh removes the estimated queue, bounded to [cwnd/8, cwnd/2], while
// the flow is alone; after ρ RTTs of Reno mode it halves (paper §3.2).
func (y *Yeah) SSThresh(s *Sock) uint32 {
	var reduction uint32
	if y.doingReno < yeahRho {
		reduction = min(y.lastQ, max(s.Cwnd>>1, 2))
		reduction = max(reduction, s.Cwnd>>yeahDelta)
	} else {
		reduction = max(s.Cwnd>>1, 2)
	}
	y.fastCount = 0
	y.renoCount = max(y.renoCount>>1, 2)
	if reduction+2 >= s.Cwnd {
		return 2 // the kernel computes this difference signed
	}
	return s.Cwnd - reduction
}

var yeahVars = []VarDesc{
	{Name: "fast", Doc: "1 in fast (Scalable) mode, 0 in slow (Reno) mode"},
	{Name: "queue", Doc: "queue estimate Q at the last per-RTT update (packets)"},
	{Name: "reno_count", Doc: "Reno-emulation window, floor for decongestion (packets)"},
	{Name: "doing_reno", Doc: "consecutive RTTs in slow mode"},
	{Name: "fast_count", Doc: "fast-mode RTTs since the last reset"},
	{Name: "base_rtt_ms", Doc: "BaseRTT (ms; 0 if none)"},
	{Name: "decongestions", Doc: "precautionary decongestions so far"},
}

func (y *Yeah) Vars() []VarDesc { return yeahVars }

func (y *Yeah) ReadVars(_ *Sock, dst []float64) {
	dst[0] = b2f(y.doingReno == 0)
	dst[1] = float64(y.lastQ)
	dst[2] = float64(y.renoCount)
	dst[3] = float64(y.doingReno)
	dst[4] = float64(y.fastCount)
	dst[5] = usToMs(y.baseRTT, vegasNoRTT)
	dst[6] = float64(y.decongests)
}

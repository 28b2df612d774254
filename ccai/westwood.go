package ccai

import "time"

// Westwood+ constants (Mascolo, Grieco et al., "Performance evaluation and
// comparison of Westwood+, New Reno, and Vegas TCP congestion control",
// CCR 34(2), 2004, §2; Linux's defaults).
const (
	// westwoodRTTMin: bandwidth samples are taken once per RTT, but never
	// over less than 50 ms, so that ACK compression does not inflate them.
	westwoodRTTMin = 50 * time.Millisecond
	// westwoodInitRTT: RTT assumed before the first sample (Linux: 20 s).
	westwoodInitRTT = 20 * time.Second
)

// Westwood is TCP Westwood+: Reno whose window after a loss is set from an
// end-to-end bandwidth estimate instead of being halved. Once per RTT (at
// least 50 ms) the bytes acknowledged in that interval give a sample
// b_k = d_k/Δ_k; it passes twice through the low-pass filter
// x ← (7x + b)/8 (the paper's discrete filter with coefficient 7/8).
// On entering Recovery ssthresh is halved as Reno; when the reduction
// completes, and on a timeout, cwnd and ssthresh become BWE·RTT_min/MSS
// (at least 2). Duplicate ACKs count as one MSS delivered each, and the
// cumulative ACK that follows is credited only with what was not already
// counted.
//
// Westwood watches every ACK through [InAckEventer] and takes its
// post-loss window in [Algorithm.CwndEvent]: the machinery must send
// EventLoss after it has set ssthresh from SSThresh (as tcp_enter_loss
// does), and EventCompleteCWR when Recovery or CWR ends.
//
// Profile differences:
//   - Undo: ProfileLinux310 has no undo of its own and gets the kernel's
//     fallback max(cwnd, 2·ssthresh), which after a bandwidth-based
//     reduction can be far above the pre-loss window; see [RenoUndoCwnd].
//   - Linux 3.10 delivered the fast/slow-path ACK notifications as
//     cwnd_event CA_EVENT_FAST_ACK/SLOW_ACK; later kernels use in_ack_event
//     (commit "net: tcp: split ack slow/fast events from cwnd events",
//     3.18). The behaviour is the same.
type Westwood struct {
	bwNsEst     uint64        // first filter stage, bytes/s
	bwEst       uint64        // bandwidth estimate BWE, bytes/s
	rttWinStart time.Duration // start of the current sampling interval
	bk          uint64        // bytes acknowledged in the interval
	sndUna      uint64        // snd_una at the last ACK
	cumulAck    uint64
	accounted   uint64 // bytes already credited through duplicate ACKs
	rtt         time.Duration
	rttMin      time.Duration
	firstAck    bool
	resetRTTMin bool
}

func init() {
	Register(Info{Name: "westwood", Description: "TCP Westwood+ (Mascolo et al.): bandwidth-estimate-based window after loss", Family: FamilyLossBased, Beta: 0, New: func() Algorithm { return &Westwood{} }})
}

func (w *Westwood) Init(s *Sock) {
	*w = Westwood{
		rttWinStart: s.Now,
		sndUna:      s.SndUna,
		rtt:         westwoodInitRTT,
		rttMin:      westwoodInitRTT,
		firstAck:    true,
		resetRTTMin: true,
	}
}

func (*Westwood) SSThresh(s *Sock) uint32 { return RenoSSThresh(s) }

func (*Westwood) CongAvoid(s *Sock, acked uint32) { RenoCongAvoid(s, acked) }

func (*Westwood) SetState(*Sock, CAState) {}

func (*Westwood) UndoCwnd(s *Sock) uint32 { return RenoUndoCwnd(s) }

// PktsAcked keeps the latest RTT sample.
func (w *Westwood) PktsAcked(_ *Sock, a AckSample) {
	if a.RTT > 0 {
		w.rtt = a.RTT
	}
}

func (w *Westwood) CwndEvent(s *Sock, ev Event) {
	switch ev {
	case EventCompleteCWR:
		s.SSThresh = w.bwRTTMin(s)
		s.Cwnd = s.SSThresh
	case EventLoss:
		s.SSThresh = w.bwRTTMin(s)
		// Take RTT_min afresh from the next ACK.
		w.resetRTTMin = true
	}
}

// bwRTTMin is the window that fills the estimated pipe, BWE·RTT_min.
func (w *Westwood) bwRTTMin(s *Sock) uint32 {
	mss := uint64(max(s.MSS, 1))
	bdp := w.bwEst / mss * uint64(w.rttMin) / uint64(time.Second)
	bdp += w.bwEst % mss * uint64(w.rttMin) / uint64(time.Second) / mss
	return uint32(max(min(bdp, 0xffffffff), 2))
}

// InAckEvent accounts the bytes an ACK delivered.
func (w *Westwood) InAckEvent(s *Sock, flags AckFlags, _ uint32) {
	w.updateWindow(s)
	if flags&AckSlowPath != 0 {
		w.bk += w.ackedCount(s)
	} else {
		w.bk += s.SndUna - w.sndUna
		w.sndUna = s.SndUna
	}
	if w.resetRTTMin {
		w.rttMin = w.rtt
		w.resetRTTMin = false
	} else {
		w.rttMin = min(w.rttMin, w.rtt)
	}
}

// updateWindow closes a sampling interval once it has lasted an RTT (and at
// least 50 ms) and feeds its bandwidth sample to the filter.
func (w *Westwood) updateWindow(s *Sock) {
	if w.firstAck {
		w.sndUna = s.SndUna
		w.firstAck = false
	}
	delta := s.Now - w.rttWinStart
	if w.rtt > 0 && delta > max(w.rtt, westwoodRTTMin) {
		w.filter(w.bk * uint64(time.Second) / uint64(delta))
		w.bk = 0
		w.rttWinStart = s.Now
	}
}

// filter runs a sample through both stages of x ← (7x + b)/8; the first
// sample initialises both.
func (w *Westwood) filter(sample uint64) {
	if w.bwNsEst == 0 && w.bwEst == 0 {
		w.bwNsEst = sample
		w.bwEst = sample
		return
	}
	w.bwNsEst = westwoodLowPass(w.bwNsEst, sample)
	w.bwEst = westwoodLowPass(w.bwEst, w.bwNsEst)
}

func westwoodLowPass(x, b uint64) uint64 { return (7*x + b) >> 3 }

// ackedCount is the delivery credited to a slow-path ACK: one MSS for a
// duplicate ACK, and for a cumulative ACK what duplicates did not already
// cover.
func (w *Westwood) ackedCount(s *Sock) uint64 {
	mss := uint64(s.MSS)
	w.cumulAck = s.SndUna - w.sndUna
	if w.cumulAck == 0 {
		w.accounted += mss
		w.cumulAck = mss
	}
	if w.cumulAck > mss {
		if w.accounted >= w.cumulAck {
			w.accounted -= w.cumulAck
			w.cumulAck = mss
		} else {
			w.cumulAck -= w.accounted
			w.accounted = 0
		}
	}
	w.sndUna = s.SndUna
	return w.cumulAck
}

var westwoodVars = []VarDesc{
	{Name: "bw_est", Doc: "filtered bandwidth estimate BWE (Mbit/s)"},
	{Name: "bw_ns_est", Doc: "first filter stage (Mbit/s)"},
	{Name: "rtt_min_ms", Doc: "RTT_min used for the post-loss window (ms)"},
	{Name: "bw_rtt_min", Doc: "BWE·RTT_min/MSS, the post-loss window (packets)"},
}

func (w *Westwood) Vars() []VarDesc { return westwoodVars }

func (w *Westwood) ReadVars(s *Sock, dst []float64) {
	dst[0] = float64(w.bwEst) * 8 / 1e6
	dst[1] = float64(w.bwNsEst) * 8 / 1e6
	dst[2] = float64(w.rttMin) / float64(time.Millisecond)
	dst[3] = float64(w.bwRTTMin(s))
}

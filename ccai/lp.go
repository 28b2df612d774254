package ccai

import "time"

// TCP-LP constants (Kuzmanovic and Knightly, "TCP-LP: a distributed
// algorithm for low priority data transfer", INFOCOM 2003, §III; Linux's
// defaults).
const (
	// lpThreshPercent: early congestion is inferred when the smoothed
	// one-way delay exceeds d_min + δ·(d_max − d_min) with δ = 0.15
	// (paper §III.B).
	lpThreshPercent = 15
	// lpInferenceMult: the inference timeout, during which a second
	// indication cuts cwnd to 1, is 3 RTTs (paper §III.C, itt = 3·RTT).
	lpInferenceMult = 3
	lpNoOWD         = 0xffffffff
)

// LP is TCP-LP, a low-priority (scavenger) transport: it infers congestion
// early from one-way delays, before any loss, and yields to standard flows.
// The one-way delay d is smoothed as d_s ← 7/8·d_s + 1/8·d; an early
// indication is d_s > d_min + 15%·(d_max − d_min). The first indication
// halves cwnd and starts an inference timeout of 3 RTTs; a further
// indication within the timeout cuts cwnd to 1; while inside the timeout
// cwnd does not grow (paper §III). After each indication d_min and d_max are
// re-anchored at the current smoothed delay (d_s and 2·d_s), and d_max
// forgets its single largest sample, as in Linux. Otherwise LP is Reno.
//
// LP needs [Sock.OneWayDelay], which the machinery fills when it models TCP
// timestamps; when it is 0 no delay sample is taken and LP is Reno, as Linux
// is without timestamps. Linux first estimates the receiver's timestamp
// clock over a few ACKs; with the simulator's exact one-way delay that step
// is not needed.
//
// Profile differences:
//   - Undo: ProfileLinux310 has no undo of its own and gets the kernel's
//     fallback max(cwnd, 2·ssthresh); see [RenoUndoCwnd].
//   - Reno growth uses the profile-aware helpers ([RenoCongAvoid]).
type LP struct {
	sowd      uint32 // smoothed one-way delay ×8 (µs)
	owdMin    uint32 // d_min (µs)
	owdMax    uint32 // d_max (µs)
	owdMaxRsv uint32 // the largest sample, kept out of d_max (µs)
	lastDrop  time.Duration
	dropped   bool // lastDrop is set
	inference time.Duration
	withinThr bool // the last delay was below the early-congestion threshold
	withinInf bool // the last ACK came within the inference timeout
	cuts      uint32
}

func init() {
	Register(Info{Name: "lp", Description: "TCP-LP (Kuzmanovic & Knightly 2003): low-priority, one-way-delay early congestion inference", Family: FamilyReno, Beta: 0.5, New: func() Algorithm { return &LP{} }})
}

func (l *LP) Init(*Sock) {
	*l = LP{owdMin: lpNoOWD}
}

func (*LP) SSThresh(s *Sock) uint32 { return RenoSSThresh(s) }

func (*LP) SetState(*Sock, CAState) {}

func (*LP) CwndEvent(*Sock, Event) {}

func (*LP) UndoCwnd(s *Sock) uint32 { return RenoUndoCwnd(s) }

// CongAvoid grows as Reno, except inside the inference timeout.
func (l *LP) CongAvoid(s *Sock, acked uint32) {
	if !l.withinInf {
		RenoCongAvoid(s, acked)
	}
}

// delaySample folds a one-way delay sample into d_min, d_max and d_s.
func (l *LP) delaySample(s *Sock) {
	if s.OneWayDelay <= 0 {
		return
	}
	m := rttMicros(s.OneWayDelay)
	l.owdMin = min(l.owdMin, m)
	if m > l.owdMax {
		// Forget the largest sample ever seen: d_max takes the previous
		// record and the new one is held in reserve.
		if m > l.owdMaxRsv {
			if l.owdMaxRsv == 0 {
				l.owdMax = m
			} else {
				l.owdMax = l.owdMaxRsv
			}
			l.owdMaxRsv = m
		} else {
			l.owdMax = m
		}
	}
	if l.sowd != 0 {
		l.sowd = uint32(int64(l.sowd) + int64(m) - int64(l.sowd>>3))
	} else {
		l.sowd = m << 3
	}
}

// PktsAcked takes the delay sample and infers early congestion (paper
// §III.B–C).
func (l *LP) PktsAcked(s *Sock, a AckSample) {
	if a.RTT > 0 {
		l.delaySample(s)
		l.inference = lpInferenceMult * a.RTT
	}
	l.withinInf = l.dropped && s.Now-l.lastDrop < l.inference
	l.withinThr = l.sowd>>3 < l.owdMin+lpThreshPercent*(l.owdMax-l.owdMin)/100
	if l.withinThr {
		return
	}
	// Early congestion: re-anchor the delay range at the current delay.
	l.owdMin = l.sowd >> 3
	l.owdMax = l.sowd >> 2
	l.owdMaxRsv = l.sowd >> 2
	if l.withinInf {
		s.Cwnd = 1
	} else {
		s.Cwnd = max(s.Cwnd>>1, 1)
	}
	l.lastDrop = s.Now
	l.dropped = true
	l.cuts++
}

var lpVars = []VarDesc{
	{Name: "within_thr", Doc: "1 if the smoothed one-way delay is below the early-congestion threshold"},
	{Name: "within_inf", Doc: "1 inside the inference timeout after an early-congestion cut"},
	{Name: "sowd_ms", Doc: "smoothed one-way delay d_s (ms)"},
	{Name: "owd_min_ms", Doc: "d_min (ms; 0 if none)"},
	{Name: "owd_max_ms", Doc: "d_max (ms)"},
	{Name: "inference_ms", Doc: "inference timeout, 3·RTT (ms)"},
	{Name: "early_cuts", Doc: "cwnd reductions from early congestion inference"},
}

func (l *LP) Vars() []VarDesc { return lpVars }

func (l *LP) ReadVars(_ *Sock, dst []float64) {
	dst[0] = b2f(l.withinThr)
	dst[1] = b2f(l.withinInf)
	dst[2] = float64(l.sowd>>3) / 1000
	dst[3] = usToMs(l.owdMin, lpNoOWD)
	dst[4] = float64(l.owdMax) / 1000
	dst[5] = float64(l.inference) / float64(time.Millisecond)
	dst[6] = float64(l.cuts)
}

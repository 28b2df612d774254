package ccai

import "time"

// BBR v1's long-term ("policer") bandwidth model, as Linux has had it
// since BBR's first release (4.9) and documents in tcp_bbr.c: token-bucket
// policers deliver a steady rate and drop the excess, so an interval of at
// least 4 rounds that ends with a loss, whose loss rate is at least 20%,
// gives a long-term bandwidth sample; two consecutive samples within 1/8
// (or 4 kbit/s) of each other mean a policer, and BBR then uses their
// average as its bandwidth, at pacing gain 1, for 48 rounds of PROBE_BW
// before probing again.
const (
	bbrLtIntvlMinRTTs = 4
	bbrLtLossThresh   = 50          // loss rate ≥ 50/256 ≈ 20%
	bbrLtBWRatio      = bbrUnit / 8 // samples within 1/8 of each other
	bbrLtBWDiff       = 4000 / 8    // … or within 4 kbit/s (bytes/s)
	bbrLtBWMaxRTTs    = 48          // rounds a policer estimate is used
	bbrUSPerMS        = int64(time.Millisecond / time.Microsecond)
)

// ltState is the long-term sampler's state.
type ltState struct {
	sampling      bool
	rttCnt        uint32
	useBW         bool
	bw            uint64 // packets/µs ×2^24, like BtlBw
	lastDelivered uint64
	lastLost      uint64
	lastStamp     time.Duration // s.DeliveredTime at the interval's start
	lost          uint64        // packets marked lost so far (Linux's tp->lost)
}

// bwEst is the bandwidth BBR paces and sizes cwnd by: the long-term
// estimate while a policer is believed in, BtlBw otherwise (bbr_bw).
func (b *BBR) bwEst() uint64 {
	if b.lt.useBW {
		return b.lt.bw
	}
	return b.maxBW()
}

func (b *BBR) resetLtInterval(s *Sock) {
	b.lt.lastStamp = s.DeliveredTime
	b.lt.lastDelivered = s.Delivered
	b.lt.lastLost = b.lt.lost
	b.lt.rttCnt = 0
}

func (b *BBR) resetLt(s *Sock) {
	b.lt.bw = 0
	b.lt.useBW = false
	b.lt.sampling = false
	b.resetLtInterval(s)
}

// ltIntervalDone takes a long-term sample bw: close to the previous one,
// a policer is detected; otherwise it becomes the previous one.
func (b *BBR) ltIntervalDone(s *Sock, bw uint64) {
	if b.lt.bw != 0 {
		diff := b.lt.bw - bw
		if bw > b.lt.bw {
			diff = bw - b.lt.bw
		}
		if diff*bbrUnit <= bbrLtBWRatio*b.lt.bw || b.pacingRateFor(s, diff, bbrUnit) <= bbrLtBWDiff {
			b.lt.bw = (bw + b.lt.bw) >> 1
			b.lt.useBW = true
			b.pacingGain = bbrUnit // pace at the policed rate
			b.lt.rttCnt = 0
			return
		}
	}
	b.lt.bw = bw
	b.resetLtInterval(s)
}

// ltSampling is bbr_lt_bw_sampling: called on every valid rate sample,
// and with losses > 0 on an RTO.
func (b *BBR) ltSampling(s *Sock, losses uint32, appLimited bool) {
	if b.lt.useBW {
		if b.mode == BBRProbeBW && b.roundStart {
			if b.lt.rttCnt++; b.lt.rttCnt >= bbrLtBWMaxRTTs {
				b.resetLt(s)
				b.resetProbeBW(s)
			}
		}
		return
	}
	if !b.lt.sampling {
		if losses == 0 {
			return
		}
		b.resetLtInterval(s)
		b.lt.sampling = true
	}
	if appLimited {
		b.resetLt(s)
		return
	}
	if b.roundStart {
		b.lt.rttCnt++
	}
	if b.lt.rttCnt < bbrLtIntvlMinRTTs {
		return
	}
	if b.lt.rttCnt > 4*bbrLtIntvlMinRTTs {
		b.resetLt(s) // too long: not a policer's steady rate
		return
	}
	if losses == 0 {
		return // intervals end at a loss
	}
	lost := b.lt.lost - b.lt.lastLost
	delivered := s.Delivered - b.lt.lastDelivered
	if delivered == 0 || lost<<bbrScale < bbrLtLossThresh*delivered {
		return
	}
	us := int64((s.DeliveredTime - b.lt.lastStamp) / time.Microsecond)
	if us < bbrUSPerMS {
		return // shorter than the kernel's 1 ms timestamp resolution
	}
	b.ltIntervalDone(s, delivered*bbrBWUnit/uint64(us))
}

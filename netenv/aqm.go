package netenv

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// AQM is the queue discipline of a bottleneck (Env.AQM, the categorical
// parameter aqm).
type AQM uint8

const (
	// AQMDropTail drops an arriving packet when the buffer is full.
	AQMDropTail AQM = iota
	// AQMRED is Random Early Detection (Floyd & Jacobson, ToN 1993; RFC
	// 2309 §3) in gentle mode, with ns-3's RedQueueDisc defaults:
	// thresholds 5 and 15 packets, weight 0.002, max_p 1/50.
	AQMRED
	// AQMCoDel is Controlled Delay (RFC 8289): a packet is dropped at the
	// head when the queuing delay stayed above target for an interval,
	// then at intervals shrinking as 1/√count.
	AQMCoDel
)

// AQMNames are the values of the aqm parameter, in AQM order.
var AQMNames = [...]string{"droptail", "red", "codel"}

func (a AQM) String() string {
	if int(a) < len(AQMNames) {
		return AQMNames[a]
	}
	return fmt.Sprintf("aqm(%d)", uint8(a))
}

// MarshalText writes the AQM by name (seeds and scenarios read as users
// write them).
func (a AQM) MarshalText() ([]byte, error) {
	if int(a) >= len(AQMNames) {
		return nil, fmt.Errorf("aqm %d: want one of %v", uint8(a), AQMNames)
	}
	return []byte(AQMNames[a]), nil
}

// UnmarshalText reads an AQM by name.
func (a *AQM) UnmarshalText(b []byte) error {
	i := slices.Index(AQMNames[:], string(b))
	if i < 0 {
		return fmt.Errorf("aqm %q: want one of %v", b, AQMNames)
	}
	*a = AQM(i)
	return nil
}

// RED's parameters: ns-3's RedQueueDisc defaults (MinTh, MaxTh, QW,
// LInterm), which Floyd's guidelines also suggest for a 100-packet buffer.
const (
	redMinTh  = 5
	redMaxTh  = 15
	redWeight = 0.002
	redMaxP   = 1.0 / 50
)

// CoDel's defaults (RFC 8289 §4.2–4.3) when Env leaves them at 0.
const (
	codelTarget   = 5 * time.Millisecond
	codelInterval = 100 * time.Millisecond
)

// red is the state of a RED queue: the average queue length, the packets
// since the last drop, and when the queue went idle.
type red struct {
	avg       float64
	count     int
	idleSince time.Duration
	idle      bool
	rng       *rand.Rand
}

// redVerdict is RED's decision on an arriving packet.
type redVerdict uint8

const (
	redPass redVerdict = iota
	// redEarly: a probabilistic drop, which ECN turns into a mark.
	redEarly
	// redForced: the average is beyond 2·max_th; dropped even with ECN
	// (ns-3's UseHardDrop).
	redForced
)

// arrive decides on an arriving packet, given the instantaneous queue q
// (packets) and the transmission time s of a typical packet (for the
// idle-time decay, Floyd & Jacobson §4).
func (r *red) arrive(now time.Duration, q int, s time.Duration) redVerdict {
	if r.idle {
		// The average decays as if m small packets had gone by while
		// the queue was empty.
		m := 0.0
		if s > 0 {
			m = float64(now-r.idleSince) / float64(s)
		}
		r.avg = float64(math.Pow(1-redWeight, m) * r.avg)
		r.idle = false
	}
	r.avg = float64((1-redWeight)*r.avg) + float64(redWeight*float64(q))
	var pb float64
	switch {
	case r.avg < redMinTh:
		r.count = -1
		return redPass
	case r.avg < redMaxTh:
		pb = float64(redMaxP*(r.avg-redMinTh)) / (redMaxTh - redMinTh)
	case r.avg < 2*redMaxTh:
		// Gentle RED: from max_p at max_th to 1 at 2·max_th.
		pb = redMaxP + float64((1-redMaxP)*(r.avg-redMaxTh))/redMaxTh
	default:
		r.count = 0
		return redForced
	}
	r.count++
	// Spread drops uniformly: pa = pb / (1 − count·pb).
	pa := 1.0
	if d := 1 - float64(float64(r.count)*pb); d > 0 {
		pa = pb / d
	}
	if r.rng.Float64() < pa {
		r.count = 0
		return redEarly
	}
	return redPass
}

// empty records that the queue went idle at now.
func (r *red) empty(now time.Duration) { r.idle, r.idleSince = true, now }

// codel is the state of a CoDel queue (RFC 8289 §5).
type codel struct {
	target, interval time.Duration
	firstAbove       time.Duration // 0: the delay is not above target
	dropNext         time.Duration
	count, lastCount uint32
	dropping         bool
}

// okToDrop is RFC 8289's dodequeue test for a packet that waited sojourn
// with rest packets left behind it: true once the delay has stayed above
// target for an interval. A queue of at most one packet is never cut.
func (c *codel) okToDrop(now, sojourn time.Duration, rest int) bool {
	if sojourn < c.target || rest <= 1 {
		c.firstAbove = 0
		return false
	}
	if c.firstAbove == 0 {
		c.firstAbove = now + c.interval
		return false
	}
	return now >= c.firstAbove
}

// controlLaw is the next drop time: t + interval/√count.
func (c *codel) controlLaw(t time.Duration) time.Duration {
	return t + time.Duration(float64(c.interval)/math.Sqrt(float64(c.count)))
}

// dequeue runs CoDel's dequeue (RFC 8289 §5.5) on l's queue: it drops
// packets at the head while the control law says so and returns the
// packet to send, if any.
func dequeueCoDel[P LinkPacket](l *Link[P]) (P, bool) {
	c := &l.codel
	now := l.sim.Now()
	p, at, ok := l.pop()
	if !ok {
		c.firstAbove = 0
		c.dropping = false
		return p, false
	}
	drop := c.okToDrop(now, now-at, l.qLen)
	if c.dropping {
		if !drop {
			c.dropping = false
		}
		for c.dropping && now >= c.dropNext {
			c.count++
			if l.congest(p) {
				// Marked, not dropped: it goes, and the next signal
				// follows the control law (Linux's codel_dequeue).
				c.dropNext = c.controlLaw(c.dropNext)
				return p, true
			}
			if p, at, ok = l.pop(); !ok {
				c.firstAbove = 0
				c.dropping = false
				return p, false
			}
			if !c.okToDrop(now, now-at, l.qLen) {
				c.dropping = false
			} else {
				c.dropNext = c.controlLaw(c.dropNext)
			}
		}
		return p, true
	}
	if drop {
		if !l.congest(p) {
			p, at, ok = l.pop()
			if ok {
				c.okToDrop(now, now-at, l.qLen)
			}
		}
		c.dropping = true
		// Start near the drop rate that last controlled the queue if
		// it was recent (RFC 8289 §5.5).
		if delta := c.count - c.lastCount; delta > 1 && now-c.dropNext < 16*c.interval {
			c.count = delta
		} else {
			c.count = 1
		}
		c.dropNext = c.controlLaw(now)
		c.lastCount = c.count
		return p, ok
	}
	return p, true
}

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
	// AQMPIE is Proportional Integral controller Enhanced (RFC 8033): a
	// drop probability updated every 15 ms from the queuing delay's
	// distance to a 15 ms target and its trend, applied to arrivals.
	AQMPIE
)

// AQMNames are the values of the aqm parameter, in AQM order.
var AQMNames = [...]string{"droptail", "red", "codel", "pie"}

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

// PIE's parameters: RFC 8033 §5's recommended defaults.
const (
	pieTarget   = 15 * time.Millisecond  // QDELAY_REF
	pieTUpdate  = 15 * time.Millisecond  // T_UPDATE
	pieMaxBurst = 150 * time.Millisecond // MAX_BURST
	pieAlpha    = 0.125                  // Hz
	pieBeta     = 1.25                   // Hz
	// pieMarkECN: with ECN, a packet is marked instead of dropped while
	// the drop probability is at most 10% (RFC 8033 §5.1).
	pieMarkECN = 0.1
)

// pieTuning is RFC 8033 §4.2's auto-tuning table: below a probability, the
// update's step is divided by div.
var pieTuning = [...]struct{ below, div float64 }{
	{0.000001, 2048}, {0.00001, 512}, {0.0001, 128}, {0.001, 32}, {0.01, 8}, {0.1, 2},
}

// pie is the state of a PIE queue (RFC 8033 §4). The drop probability is
// updated every T_UPDATE; instead of a timer event, every enqueue and
// dequeue first runs the updates that fell due since the last one, each
// with the queuing delay the queue had at its moment (the queue does not
// change between two of our events), which is what a periodic timer would
// compute, without an event per 15 ms on every link of every run.
type pie struct {
	prob       float64
	qdelayOld  time.Duration
	burst      time.Duration // the burst allowance left
	nextUpdate time.Duration
	rng        *rand.Rand
}

// reset starts a PIE queue at now (RFC 8033 §4.1: a full burst
// allowance, no drops).
func (p *pie) reset(now time.Duration, rng *rand.Rand) {
	*p = pie{burst: pieMaxBurst, nextUpdate: now + pieTUpdate, rng: rng}
}

// catchUp runs the probability updates due by now. qdelay(t) is the
// queuing delay at t: the head packet's wait so far, by timestamps (RFC
// 8033 §5.2's alternative to a departure-rate estimate).
func (p *pie) catchUp(now time.Duration, qdelay func(t time.Duration) time.Duration, empty bool) {
	for p.nextUpdate <= now {
		if empty && p.prob == 0 && p.qdelayOld == 0 && p.burst == pieMaxBurst {
			// The fixed point of an idle queue: skip to the last
			// update due.
			p.nextUpdate += (now - p.nextUpdate) / pieTUpdate * pieTUpdate
		}
		p.update(qdelay(p.nextUpdate))
		p.nextUpdate += pieTUpdate
	}
}

// update is RFC 8033 §4.2's calculate_drop_prob and §4.3's burst
// allowance, at one T_UPDATE.
func (p *pie) update(qdelay time.Duration) {
	d := float64(pieAlpha*(qdelay-pieTarget).Seconds()) + float64(pieBeta*(qdelay-p.qdelayOld).Seconds())
	// Auto-tuning: the smaller the probability, the smaller its steps,
	// so that a light load is controlled as smoothly as a heavy one.
	for _, t := range pieTuning {
		if p.prob < t.below {
			d /= t.div
			break
		}
	}
	// Above 10%, at most 2% a step, so one burst cannot drive the
	// probability to 1.
	if p.prob >= 0.1 && d > 0.02 {
		d = 0.02
	}
	p.prob += d
	if qdelay == 0 && p.qdelayOld == 0 {
		// An idle queue: the probability decays by 2% a step.
		p.prob *= 0.98
	}
	if qdelay > 250*time.Millisecond {
		// A delay far above any target: add 2% at once.
		p.prob += 0.02
	}
	p.prob = min(max(p.prob, 0), 1)
	p.qdelayOld = qdelay
	p.burst = max(0, p.burst-pieTUpdate)
	if p.prob == 0 && qdelay < pieTarget/2 && p.qdelayOld < pieTarget/2 {
		p.burst = pieMaxBurst
	}
}

// dropEarly is RFC 8033 §4.1's drop_early for an arrival to a queue of
// queued packets: whether PIE signals congestion with it.
func (p *pie) dropEarly(queued int) bool {
	switch {
	case p.burst > 0:
		return false
	case p.qdelayOld < pieTarget/2 && p.prob < 0.2:
		return false
	case queued < 2: // fewer than two MTU-sized packets (ours are at most one MTU)
		return false
	}
	return p.rng.Float64() < p.prob
}

// pieCatchUp runs l's PIE updates due by now (pie.catchUp).
func (l *Link[P]) pieCatchUp() {
	l.pie.catchUp(l.sim.Now(), l.headWait, l.qLen == 0)
}

// headWait is how long the packet at the head of the queue has waited at
// t (0 with an empty queue).
func (l *Link[P]) headWait(t time.Duration) time.Duration {
	if l.qLen == 0 {
		return 0
	}
	return max(0, t-l.qAt[l.qHead])
}

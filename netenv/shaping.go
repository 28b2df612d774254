package netenv

import (
	"time"

	"github.com/actfuzz/actfuzz/netenv/sim"
)

// policer is a token-bucket policer in front of a bottleneck (Env's
// policer_rate, policer_burst): tokens accrue at the rate up to the
// bucket, a packet takes its size in tokens, and a packet that finds too
// few is dropped, not delayed. This is what ISPs deploy and what BBR v1's
// long-term bandwidth model was built against (Cardwell et al., "BBR
// congestion control", IETF 97; Flach et al., SIGCOMM 2016).
type policer struct {
	rate   float64 // bytes per ns; 0: no policer
	bucket float64 // bytes
	tokens float64
	last   time.Duration
	primed bool
}

// minBucket is the least bucket: one full-sized packet, so that a
// policer never drops everything.
const minBucket = 1500

func (p *policer) on() bool { return p.rate > 0 }

// apply takes a phase's policer; a policer that starts (or starts again)
// begins with a full bucket, one that changes keeps its tokens.
func (p *policer) apply(e *Env, now time.Duration) {
	if e.PolicerRate <= 0 {
		*p = policer{}
		return
	}
	p.refill(now)
	p.rate = float64(e.PolicerRate*1e6) / 8 / 1e9
	p.bucket = max(float64(e.PolicerBurst*1000), minBucket)
	if !p.primed {
		p.tokens, p.last, p.primed = p.bucket, now, true
	}
	p.tokens = min(p.tokens, p.bucket)
}

func (p *policer) refill(now time.Duration) {
	if p.primed {
		// float64() around products keeps the arithmetic unfused, so
		// every platform rounds alike.
		p.tokens = min(p.bucket, p.tokens+float64(float64(now-p.last)*p.rate))
		p.last = now
	}
}

// admit takes size bytes of tokens at now, or reports that there are too
// few.
func (p *policer) admit(now time.Duration, size uint32) bool {
	p.refill(now)
	if float64(size) > p.tokens {
		return false
	}
	p.tokens -= float64(size)
	return true
}

// ackAggregator holds the packets entering a reverse (ACK) link and
// releases them together, as a Wi-Fi station aggregates its frames into
// one transmission opportunity and a DOCSIS modem sends a grant's worth
// at once: at every multiple of the period (Env.AckAgg) of simulated
// time, or as soon as max (Env.AckAggMax) are held. Released packets then
// queue, serialize and propagate as any other, so they leave back to back.
type ackAggregator[P LinkPacket] struct {
	l       *Link[P]
	period  time.Duration
	max     int
	held    []P
	release *sim.Event
	pending bool // release is scheduled
}

// applyAggregation sets a reverse link's ACK aggregation; turning it off
// releases what is held.
func (l *Link[P]) applyAggregation(e *Env) {
	if e.AckAgg <= 0 {
		if l.agg != nil {
			l.agg.flush()
			l.agg = nil
		}
		return
	}
	if l.agg == nil {
		l.agg = &ackAggregator[P]{l: l}
		l.agg.release = sim.NewEvent(l.cfg.Node, sim.KindTimer, l.cfg.Tag, l.agg)
	}
	l.agg.period, l.agg.max = ms(e.AckAgg), e.AckAggMax
}

// hold keeps p until the next release.
func (a *ackAggregator[P]) hold(p P) {
	a.held = append(a.held, p)
	if a.max > 0 && len(a.held) >= a.max {
		a.flush()
		return
	}
	if !a.pending {
		now := a.l.sim.Now()
		a.l.sim.Schedule(a.release, (now/a.period+1)*a.period-now)
		a.pending = true
	}
}

// flush releases every held packet, in order.
func (a *ackAggregator[P]) flush() {
	if a.pending {
		a.l.sim.Cancel(a.release)
		a.pending = false
	}
	var zero P
	for i, p := range a.held {
		a.held[i] = zero
		a.l.enqueue(p)
	}
	a.held = a.held[:0]
}

// Handle releases the held packets at a period boundary.
func (a *ackAggregator[P]) Handle(*sim.Event) {
	a.pending = false
	a.flush()
}

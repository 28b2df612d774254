package upstream

import (
	"math"
	"testing"
	"time"
)

// bottleneck acknowledges the sender's data as a path of round-trip time
// rtt with a bottleneck of one segment per spacing delivers it: segment i
// is acknowledged at max(its send time + rtt, the previous ACK + spacing),
// one ACK per segment, for at most acks ACKs. after runs after each ACK and
// ends the run when it returns false.
func (p *peer) bottleneck(inFlight []segment, spacing time.Duration, acks int, after func(n int) bool) {
	type sentAt struct {
		s segment
		t time.Time
	}
	var q []sentAt
	add := func(segs []segment) {
		for _, s := range segs {
			if s.len > 0 {
				q = append(q, sentAt{s, p.clock.Now()})
			}
		}
	}
	add(inFlight)
	last := p.clock.Now()
	for n := 0; n < acks && len(q) > 0; n++ {
		at := q[0].t.Add(rtt)
		if next := last.Add(spacing); next.After(at) {
			at = next
		}
		if d := at.Sub(p.clock.Now()); d > 0 {
			p.advance(d)
		}
		last = at
		s := q[0].s
		q = q[1:]
		p.ack(s.seq + uint32(s.len))
		if p.unlimited {
			p.fill()
		}
		add(p.sent())
		if !after(n) {
			return
		}
	}
}

// TestCubicRunawayAfterHyStartExit: when HyStart ends slow start, gVisor's
// CUBIC (pkg/tcpip/transport/tcp/cubic.go) sets ssthresh = cwnd in
// updateHyStart, and the next ACK goes straight to getCwnd (Update:
// cwnd ≥ ssthresh). enterCongestionAvoidance, which starts CUBIC's epoch
// (T = now, K = 0, W_max = cwnd), runs only from updateSlowStart when cwnd
// crosses ssthresh, so it is skipped: T is still the connection's start
// (newCubicCC), K 0 and W_max 0, and the target W_cubic(t + RTT) =
// C·t³ with t the connection's age. RFC 9438 §4.2 counts t from the
// start of the current congestion-avoidance stage (t_epoch) and bounds
// the target to 1.5·cwnd, so one ACK grows cwnd by at most half a
// segment; getCwnd applies only the lower bound (google/gvisor#13958),
// not the upper one, so every ACK adds (target − cwnd)/cwnd segments.
//
// Here a keep-alive connection is idle for 20 s and then sends in bulk
// through a 1-segment-per-ms bottleneck with 100 ms RTT (timestamps on, so
// HyStart gets an RTT sample per ACK and its ACK-train detector fires).
// The test asserts what gVisor does today; a fixed gVisor fails it.
func TestCubicRunawayAfterHyStartExit(t *testing.T) {
	p := newPeerWith(t, peerConfig{cc: "cubic", ts: true})
	const idle = 20 * time.Second
	p.advance(idle)
	p.fill()
	var (
		exitAck            = -1
		atExit, after1, c1 uint32
		trace              []uint32
	)
	p.bottleneck(p.sent(), time.Millisecond, 5000, func(n int) bool {
		i := p.info()
		if exitAck < 0 {
			if i.SndSsthresh != math.MaxUint32 {
				// HyStart set ssthresh to the cwnd of that moment;
				// the same ACK then went through getCwnd.
				exitAck, atExit, after1 = n, i.SndSsthresh, i.SndCwnd
				t.Logf("ACK %d: HyStart ends slow start: ssthresh %d, cwnd %d", n, i.SndSsthresh, i.SndCwnd)
			}
			return true
		}
		trace = append(trace, i.SndCwnd)
		if len(trace) == 100 { // one RTT of ACKs at the bottleneck's rate
			c1 = i.SndCwnd
			return false
		}
		return true
	})
	if exitAck < 0 {
		t.Fatal("HyStart did not end slow start in 5,000 ACKs")
	}
	t.Logf("cwnd on the ACKs after the exit: %v …", trace[:10])
	t.Logf("cwnd %d when HyStart fired, %d after that ACK, %d one RTT (100 ACKs) later; RFC 9438 allows at most +0.5 per ACK", atExit, after1, c1)
	// gVisor today: the exit's own ACK adds more than 10 segments and one RTT more than doubles cwnd (RFC 9438: at most
	// 0.5 per ACK, 50 in 100 ACKs).
	if after1 < atExit+10 || c1 < 2*atExit {
		t.Fatalf("cwnd %d → %d (one ACK) → %d (100 ACKs): the runaway is gone; has HyStart's exit started CUBIC's epoch, or getCwnd bounded the target to 1.5·cwnd?", atExit, after1, c1)
	}
}

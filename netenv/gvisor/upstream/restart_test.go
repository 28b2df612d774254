package upstream

import (
	"bytes"
	"testing"
	"time"

	"gvisor.dev/gvisor/pkg/tcpip"
)

// TestRestartWindowWithDataOutstanding: (*sender).sendData (snd.go)
// lowers cwnd to the initial window when nothing was sent for more than an
// RTO, "per RFC 5681, page 10", whether or not data is outstanding. RFC
// 5681 §4.1 ("Restarting Idle Connections") concerns a connection that has
// been idle, without the ACK clock; Linux restarts the window only when
// nothing is in flight (tcp_cwnd_restart is reached from
// tcp_event_data_sent only with packets_out 0). Here the ACK clock runs:
// ACKs of the last flight arrive every 100 ms (a receiver behind a slow
// bottleneck), each restarting the retransmission timer, while the
// application has nothing more to send. sendData runs on every ACK, and
// the first ACK more than an RTO after the last send drops cwnd from 82 to
// 10 with 77 segments outstanding. When the application writes again
// nothing can be sent; every later ACK grows cwnd (cc.Update) and then
// calls sendData, whose restart check (the last send is still more than an
// RTO ago) undoes the growth: cwnd stays at the initial window until the
// flight drains below it.
//
// The test asserts what gVisor does today; a fixed gVisor fails it.
func TestRestartWindowWithDataOutstanding(t *testing.T) {
	p := newPeer(t, "reno", false)
	write := func(segments int) {
		t.Helper()
		if _, err := p.ep.Write(bytes.NewReader(make([]byte, segments*mss)), tcpip.WriteOptions{}); err != nil {
			t.Fatalf("Write: %v", err)
		}
		p.settle()
	}
	// Slow start, 10 → 20 → 40 → 80 segments, with exactly as much data
	// as those flights carry: after the last one the application has
	// nothing more to send.
	write(150)
	segs := p.sent()
	for range 3 {
		segs = p.round(segs)
	}
	if len(segs) != 80 {
		t.Fatalf("the fourth flight has %d segments, want 80", len(segs))
	}
	// The flight is acknowledged slowly, one segment every 100 ms (a
	// receiver behind a slow bottleneck): the ACK clock runs, the
	// retransmission timer is restarted by each ACK and never fires.
	next := 0
	ackNext := func() {
		s := segs[next]
		p.ack(s.seq + uint32(s.len))
		next++
	}
	var cwnds []uint32
	for range 5 {
		p.advance(rtt)
		ackNext()
		cwnds = append(cwnds, p.info().SndCwnd)
	}
	t.Logf("cwnd after the ACKs at 100, 200, ..., 500 ms after the last send: %v", cwnds)
	if cwnds[1] != 82 || cwnds[2] != 10 {
		t.Fatalf("cwnd %v after the slow ACKs, want 82 at 200 ms and 10 at 300 ms (gVisor today: the restart window at the first ACK more than an RTO after the last send); has sendData's restart been limited to an idle connection?", cwnds)
	}
	before := p.info()
	if before.CcState != 0 {
		t.Fatalf("state %v before the write, want Open (no timeout)", before.CcState)
	}
	t.Logf("before the write: cwnd %d, rto %v, %d segments outstanding, last send %v ago",
		before.SndCwnd, before.RTO, len(segs)-next, 5*rtt)
	if 5*rtt <= before.RTO {
		t.Fatalf("the pause (%v) is not longer than the RTO (%v): the scenario needs a longer pause", 5*rtt, before.RTO)
	}

	// The application writes again.
	write(40)
	after := p.info()
	sent := p.sent()
	t.Logf("after the write: cwnd %d, sent %d", after.SndCwnd, len(sent))
	if after.SndCwnd != 10 || len(sent) != 0 {
		t.Fatalf("after the write: cwnd %d and %d segments sent, want 10 and 0 (gVisor today: the restart window with %d segments outstanding)",
			after.SndCwnd, len(sent), len(segs)-next)
	}
	// Each further ACK (10 ms apart) grows cwnd and sendData undoes it,
	// until fewer than 10 segments are outstanding.
	var atIW int
	for next < len(segs) {
		p.advance(10 * time.Millisecond)
		ackNext()
		if len(p.sent()) > 0 {
			break
		}
		if c := p.info().SndCwnd; c != 10 {
			t.Fatalf("after ACK %d: cwnd %d, want 10 (the growth undone by the restart)", next, c)
		}
		atIW++
	}
	t.Logf("cwnd at the initial window for %d ACKs; first send with %d segments outstanding", atIW, len(segs)-next)
	if atIW < 50 {
		t.Fatalf("cwnd at the initial window for only %d ACKs", atIW)
	}
}

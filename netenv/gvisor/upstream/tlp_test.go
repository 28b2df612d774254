package upstream

import (
	"bytes"
	"testing"
	"time"

	"gvisor.dev/gvisor/pkg/tcpip"
)

// TestProbePushedByBlockedWrites: with RACK-TLP on (gVisor's default) and
// SACK negotiated, every call of sender.sendData ends in postXmit, which
// schedules the tail-loss probe whenever data is outstanding and
// shouldSchedulePTO holds, whether or not sendData sent anything (snd.go,
// (*sender).postXmit; its comment says "after transmitting new data").
// schedulePTO (rack.go) arms the probe 2·SRTT from now and disables the
// retransmission timer. Endpoint.Write calls sendData, so an application
// that keeps writing while cwnd is full moves the probe, and the
// retransmission timeout it replaced, 2·SRTT into the future at every
// write: while it writes more often than every 2·SRTT, a lost flight is
// never retransmitted. RFC 8985 §7.2 arms the PTO after transmitting new
// data or on an ACK of new data, and RFC 6298 §5 keeps a retransmission
// timer running while data is outstanding (§5.1 starts it when a segment
// is sent and it is not running; nothing in RFC 6298 restarts it on a
// write that sends nothing).
//
// The test asserts what gVisor does today; a fixed gVisor fails it.
func TestProbePushedByBlockedWrites(t *testing.T) {
	p := newPeer(t, "reno", true)
	write := func(n int) {
		t.Helper()
		if _, err := p.ep.Write(bytes.NewReader(make([]byte, n)), tcpip.WriteOptions{}); err != nil {
			t.Fatalf("Write: %v", err)
		}
		p.settle()
	}
	// The initial window (10 segments) leaves; the peer never sees it:
	// the whole flight is lost.
	write(10 * mss)
	if first := p.sent(); len(first) != 10 {
		t.Fatalf("initial flight: %d segments, want 10", len(first))
	}
	info := p.info()
	t.Logf("after the handshake: srtt %v rto %v", info.RTT, info.RTO)

	// The application writes 1,000 bytes every 150 ms (less than 2·SRTT
	// = 200 ms) for 10 s. cwnd is full, so nothing new can be sent.
	const every, writing = 150 * time.Millisecond, 10 * time.Second
	for elapsed := time.Duration(0); elapsed < writing; elapsed += every {
		p.advance(every)
		write(1000)
		if s := p.sent(); len(s) != 0 {
			t.Fatalf("at %v of writing the sender sent %d segments (first %+v): the probe or the retransmission timeout fired; has postXmit stopped rescheduling the probe on writes that send nothing?",
				elapsed+every, len(s), s[0])
		}
	}
	// gVisor today: 10 s, 33 RTOs' worth, without a retransmission. Once
	// the writes stop, the probe goes out 2·SRTT after the last one.
	var silent time.Duration
	for silent = 0; silent < 5*time.Second; silent += 10 * time.Millisecond {
		p.advance(10 * time.Millisecond)
		if s := p.sent(); len(s) != 0 {
			t.Logf("first segment after the writes stopped: %v later, seq %d len %d (the probe)", silent+10*time.Millisecond, s[0].seq-p.iss, s[0].len)
			return
		}
	}
	t.Fatalf("nothing sent %v after the writes stopped", silent)
}

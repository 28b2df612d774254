package symbolic

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/netenv"
)

// handshakeTCP is a short transfer over a 10 Mbit/s, 20 ms link that opens
// with the handshake.
func handshakeTCP(w Window, end time.Duration, metrics ...string) *Scenario {
	return &Scenario{
		Name: "handshake",
		TCP: &TCPSpec{
			Flows:     []netenv.Flow{{CCA: "reno", Bytes: 60 * 1448}},
			Env:       netenv.Env{BW: 10, Delay: 20, Buffer: 100, App: 10000},
			SACK:      true,
			Handshake: true,
		},
		End:     end,
		Window:  w,
		Metrics: metrics,
	}
}

// TestSynAckWindowBruteForce: the SYN-ACK's delay over [900, 1100] ms
// crosses the sender's 1 s SYN timeout, which gives three regimes (no
// retransmission; a spurious one, undone by the timestamp echo; the
// retransmitted SYN-ACK overtaking the first, initial window 1). Every
// reduction setting must agree with each of the 201 runs.
func TestSynAckWindowBruteForce(t *testing.T) {
	w := Window{N: 1, Select: "kind", Kind: "syn-ack", Lo: 900 * time.Millisecond, Hi: 1100 * time.Millisecond, Res: time.Millisecond}
	testBruteForce(t, handshakeTCP(w, 5*time.Second, "cwnd", "syn_retransmits", "retransmits", "delivered_bytes"), 3)
}

// TestSynWindowBruteForce: the SYN's delay over [8, 1200] ms at 8 ms
// resolution. The SYN's delay is the first RTT sample, from which the
// sender computes its RTO: a timer offset that depends on the uncertain
// delay, outside the linear model. The classes of such runs are
// approximations, and the report must flag them (diverged); the others
// must be exact.
func TestSynWindowBruteForce(t *testing.T) {
	w := Window{N: 1, Select: "kind", Kind: "syn", Lo: 8 * time.Millisecond, Hi: 1200 * time.Millisecond, Res: 8 * time.Millisecond}
	bruteForceSettings(t, handshakeTCP(w, 5*time.Second, "cwnd", "syn_retransmits", "delivered_bytes"), 2, true)
}

// TestAckWindowBruteForce: two ACKs near the end of a transfer (earlier ones
// are covered by the cumulative ACKs behind them) over [1, 48] ms; the
// sender's final window and completion depend on when they arrive. (From
// the 36th ACK: since the sender keeps is_cwnd_limited for the last window
// as Linux does, every ACK of it grows cwnd in slow start, to 70 however
// the 32nd and 33rd arrive.)
func TestAckWindowBruteForce(t *testing.T) {
	if testing.Short() {
		t.Skip("brute force over 2304 TCP runs")
	}
	w := Window{N: 2, Select: "kind", Kind: "ack", From: 36, Lo: time.Millisecond, Hi: 48 * time.Millisecond, Res: time.Millisecond}
	sc := handshakeTCP(w, 190*time.Millisecond, "cwnd", "done")
	sc.TCP.Handshake = false
	bruteForceSettings(t, sc, 3, true)
}

func TestWindowKindErrors(t *testing.T) {
	for _, tc := range []struct {
		w    Window
		want string
	}{
		{Window{N: 1, Select: "kind", Kind: "syn-ack", Lo: 1, Hi: 2}, "handshake"},
		{Window{N: 2, Select: "kind", Kind: "syn", Lo: 1, Hi: 2}, "1 packet"},
		{Window{N: 2, Select: "last", Kind: "ack", Lo: 1, Hi: 2}, "from and count"},
		{Window{N: 1, Select: "kind", Kind: "rst", Lo: 1, Hi: 2}, "want data, fin, syn, syn-ack or ack"},
	} {
		sc := handshakeTCP(tc.w, time.Second)
		sc.Window.Lo, sc.Window.Hi = time.Millisecond, 2*time.Millisecond
		if tc.want == "handshake" {
			sc.TCP.Handshake = false
		}
		err := sc.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one saying %q", tc.w, err, tc.want)
		}
	}
}

// appLimitedTCP is a short transfer whose application writes slower than
// the link: the sender idles between writes, and the timer it arms on
// each write and ACK is the RTO that the window's delay moves (rtt.go).
func appLimitedTCP(app float64, from int) *Scenario {
	return &Scenario{
		Name: "app-limited",
		TCP: &TCPSpec{
			Flows: []netenv.Flow{{CCA: "reno", Bytes: 16 * 1448}},
			Env:   netenv.Env{BW: 10, Delay: 20, Buffer: 100, App: app},
			SACK:  true,
		},
		End:     20 * time.Second,
		Window:  Window{N: 1, Select: "range", From: from, Lo: time.Millisecond, Hi: time.Second, Res: time.Millisecond},
		Metrics: []string{"cwnd", "ssthresh", "done"},
	}
}

// TestAppLimitedBruteForce: windows near the end of application-limited
// transfers; their classes must be exact. (Windows earlier in such
// transfers are concretized: more samples follow than the coefficients'
// powers of two allow, rtt.go. The sender's send timer, which an
// application-limited sender schedules at an absolute time, has its own
// form, abstime.go; TestAbsoluteTimersBruteForce checks earlier windows.)
func TestAppLimitedBruteForce(t *testing.T) {
	for _, tc := range []struct {
		app  float64
		from int
	}{
		{1, 13}, {2, 13}, {4, 13}, {1, 14},
	} {
		t.Run(fmt.Sprintf("app %v from %d", tc.app, tc.from), func(t *testing.T) {
			bruteForceCheck(t, appLimitedTCP(tc.app, tc.from), 2, false, noFlags)
		})
	}
}

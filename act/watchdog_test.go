package act

import (
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/quicgo"
)

// TestWatchdogCoversRealTimeRuns: a worker's watchdog never kills a run
// that is still within what its subject allows a run by design. The quic
// subject runs in real time for up to its 2-minute cap (and its own 30 s
// stall watchdog); a fixed 60 s watchdog killed such runs as hangs with no
// record at all (the "hang at time 0" of issue 54: 2 of 40 simulations).
func TestWatchdogCoversRealTimeRuns(t *testing.T) {
	quic := (&quicgo.Subject{}).Capabilities()
	ranByDesign := quicgo.DefaultMaxTime + quicgo.DefaultStallTimeout
	cases := []struct {
		name    string
		opt     IsolateOptions
		caps    netenv.Capabilities
		median  time.Duration
		atLeast time.Duration
		exactly time.Duration // when > 0
	}{
		{name: "native, no median", caps: netenv.NativeCapabilities(), exactly: defaultWatchdog},
		{name: "native, 2 s median", caps: netenv.NativeCapabilities(), median: 2 * time.Second, exactly: 100 * time.Second},
		{name: "quic, no median", caps: quic, atLeast: ranByDesign + defaultWatchdog},
		{name: "quic, 1 s median", caps: quic, median: time.Second, atLeast: ranByDesign + defaultWatchdog},
		{name: "explicit watchdog wins", opt: IsolateOptions{Watchdog: 5 * time.Second}, caps: quic, exactly: 5 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opt := c.opt.ForSubject(c.caps)
			e := &isolated{opt: opt}
			if c.median > 0 {
				for range 5 {
					e.times.add(c.median)
				}
			}
			got := e.watchdog()
			if c.exactly > 0 && got != c.exactly {
				t.Errorf("watchdog %v, want %v", got, c.exactly)
			}
			if got < c.atLeast {
				t.Errorf("watchdog %v, want at least %v (a run may take that long by design)", got, c.atLeast)
			}
			if opt.Watchdog == 0 && opt.FirstWatchdog() < c.atLeast {
				t.Errorf("drain bound %v, want at least %v", opt.FirstWatchdog(), c.atLeast)
			}
		})
	}
}

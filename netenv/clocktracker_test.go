package netenv_test

import (
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/sim"
	"github.com/actfuzz/actfuzz/netenv/tcp"
)

// clockHeap is the default heap with a tcp.ClockTracker that replays what
// the senders report on concrete values: every appSince is now, nextPace
// is max(nextPace, now) + gap, the sender's now < nextPace is the
// comparison of the values it reported, and every armed timer is the next
// insertion, at max(at, now) for the application's and at nextPace for
// pacing.
type clockHeap struct {
	*sim.Heap
	t     *testing.T
	now   func() time.Duration
	pace  map[int32]time.Duration
	armed *sim.Event
	armAt time.Duration
	// counts of calls, so that the test knows what it exercised
	apps, writes, cuts, advances, checks, waits int
	appChecks, reached                          int
}

func (h *clockHeap) AppClock(flow int32, since time.Duration) {
	h.apps++
	if since != h.now() {
		h.t.Errorf("flow %d: application clock restarted at %v, now %v", flow, since, h.now())
	}
}

func (h *clockHeap) arm(ev *sim.Event, at time.Duration) {
	if h.armed != nil {
		h.t.Errorf("a second arming before the insertion of %p", h.armed)
	}
	h.armed, h.armAt = ev, at
}

func (h *clockHeap) ArmAppWrite(flow int32, ev *sim.Event, at time.Duration) {
	h.writes++
	h.arm(ev, max(at, h.now()))
}

func (h *clockHeap) AppCheck(flow int32, at time.Duration, reached bool) {
	h.appChecks++
	if reached != (h.now() >= at) {
		h.t.Errorf("flow %d: application check at %v, now %v: reached %v", flow, at, h.now(), reached)
	}
	if reached {
		h.reached++
	}
}

func (h *clockHeap) AppCut(flow int32) { h.cuts++ }

func (h *clockHeap) PaceAdvance(flow int32, gap, next time.Duration) {
	h.advances++
	if want := max(h.pace[flow], h.now()) + gap; next != want {
		h.t.Errorf("flow %d: nextPace %v, want max(%v, %v) + %v = %v", flow, next, h.pace[flow], h.now(), gap, want)
	}
	h.pace[flow] = next
}

func (h *clockHeap) PaceReset(flow int32) { h.pace[flow] = 0 }

func (h *clockHeap) PaceCheck(flow int32, ev *sim.Event, wait bool) {
	h.checks++
	if want := h.now() < h.pace[flow]; wait != want {
		h.t.Errorf("flow %d: the sender waits %v, now %v < nextPace %v is %v", flow, wait, h.now(), h.pace[flow], want)
	}
	if wait {
		h.waits++
		h.arm(ev, h.pace[flow])
	}
}

func (h *clockHeap) Insert(e *sim.Event) {
	if h.armed != nil {
		if e != h.armed || e.At != h.armAt {
			h.t.Errorf("the insertion after an arming is %p at %v, want the timer %p at %v", e, e.At, h.armed, h.armAt)
		}
		h.armed = nil
	}
	h.Heap.Insert(e)
}

var _ tcp.ClockTracker = (*clockHeap)(nil)

// TestClockTracker: a scheduler that implements tcp.ClockTracker sees every
// restart of the application's clock, every pacing deadline and every
// timer armed from them, consistently, and the run is the run of the
// default heap (same trace hash).
func TestClockTracker(t *testing.T) {
	for _, tc := range []struct {
		name string
		cca  string
		app  float64 // Mbit/s (0: the default's)
		loss float64
		// fast: the application's rate rises to 100 Mbit/s at 1 s (an
		// environment switch: SetAppRate restarts its clock)
		fast bool
		// what the run must exercise
		writes, waits, cuts bool
	}{
		{"application-limited reno", "reno", 2, 0, false, true, false, false},
		{"application-limited reno, then not", "reno", 2, 0, true, true, false, false},
		{"reno with runts", "reno", 0.1, 0, false, true, false, true},
		{"paced bbr", "bbr", 0, 0.01, false, false, true, false},
		{"paced, application-limited bbr", "bbr", 5, 0, true, true, true, false},
		// An application faster than the link fills the 4 MB send
		// buffer and blocks on it, and wakes on the ACKs that free it.
		{"reno blocking on the send buffer", "reno", 200, 0, false, true, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := netenv.DefaultEnv()
			if tc.app > 0 {
				env.App = tc.app
			}
			env.Loss = tc.loss
			bytes := uint64(1_000_000)
			if tc.app > 100 {
				bytes = 6 << 20 // beyond tcp.DefaultSndBuf
			}
			cfg := single(tc.cca, env, bytes, 7)
			if tc.fast {
				later := env
				later.App = 100
				cfg.Schedule = netenv.Schedule{{Env: env, Until: time.Second}, {Env: later}}
			}
			cfg.Handshake = true // establish restarts the clock at the SYN-ACK
			h := &clockHeap{Heap: sim.NewHeap(256), t: t, pace: map[int32]time.Duration{}}
			sameTraceWith(t, cfg, h, &h.now)
			if tc.fast && h.apps < 2 || h.apps == 0 || tc.writes && h.writes < 10 || tc.waits && (h.advances < 100 || h.waits < 10) || tc.cuts && h.cuts < 10 ||
				tc.writes && (h.reached < 10 || h.appChecks-h.reached < 10) {
				t.Errorf("%d clock restarts, %d application timers, %d runts, %d pacing advances, %d waits of %d checks: the run exercises too little", h.apps, h.writes, h.cuts, h.advances, h.waits, h.checks)
			}
			t.Logf("%d clock restarts, %d application timers, %d runts, %d pacing advances, %d waits of %d checks, %d of %d application checks reached", h.apps, h.writes, h.cuts, h.advances, h.waits, h.checks, h.reached, h.appChecks)
		})
	}
}

// rateHeap is the default heap with a tcp.RateTracker that checks what
// the senders report of their rate samples: instants in the past, a send
// phase that starts before the segment that defines the sample, and
// samples only where an algorithm takes them (a ccai.CongController).
type rateHeap struct {
	*sim.Heap
	t       *testing.T
	now     func() time.Duration
	samples int
}

func (h *rateHeap) RateSample(flow int32, priorTime, firstSent, sent time.Duration) {
	h.samples++
	now := h.now()
	if priorTime < 0 || priorTime > now || sent > now || firstSent > sent {
		h.t.Errorf("flow %d: sample at %v with delivered time %v, send phase %v…%v", flow, now, priorTime, firstSent, sent)
	}
}

var _ tcp.RateTracker = (*rateHeap)(nil)

// TestRateTracker: a scheduler that implements tcp.RateTracker sees the
// rate samples of an algorithm that takes them (BBR) and none of one that
// does not (CUBIC), consistently, and the run is the run of the default
// heap (same trace hash).
func TestRateTracker(t *testing.T) {
	for _, tc := range []struct {
		cca  string
		want bool // samples expected
	}{
		{"bbr", true},
		{"cubic", false},
	} {
		t.Run(tc.cca, func(t *testing.T) {
			env := netenv.DefaultEnv()
			env.Loss = 0.01
			cfg := single(tc.cca, env, 1_000_000, 7)
			h := &rateHeap{Heap: sim.NewHeap(256), t: t}
			sameTraceWith(t, cfg, h, &h.now)
			if tc.want && h.samples < 100 || !tc.want && h.samples != 0 {
				t.Errorf("%d rate samples; want samples: %v", h.samples, tc.want)
			}
			t.Logf("%d rate samples", h.samples)
		})
	}
}

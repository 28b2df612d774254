package netenv_test

import (
	"context"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/sim"
	"github.com/actfuzz/actfuzz/netenv/tcp"
)

// trackingHeap is the default heap with a tcp.RTTTracker that checks what
// the senders report: samples chain (each starts from the state the last
// one left), are taken after what they time, and every armed timeout is
// RTO() of the state with its backoff and is the next insertion of its
// timer.
type trackingHeap struct {
	*sim.Heap
	t        *testing.T
	sim      func() time.Duration
	state    map[int32]tcp.RTTState
	armed    *sim.Event
	armAt    time.Duration
	samples  int
	arms     int
	timeouts int
}

func (h *trackingHeap) RTTSample(flow int32, sent time.Duration, before, after tcp.RTTState) {
	h.samples++
	if before != h.state[flow] {
		h.t.Errorf("flow %d: sample starts from %+v, the last one left %+v", flow, before, h.state[flow])
	}
	if sent < 0 || sent > h.sim() {
		h.t.Errorf("flow %d: sample of a segment sent at %v, now %v", flow, sent, h.sim())
	}
	h.state[flow] = after
}

func (h *trackingHeap) ArmRTO(flow int32, ev *sim.Event, backoff uint32, rto time.Duration) {
	h.arms++
	if backoff > 0 {
		h.timeouts++
	}
	st := h.state[flow]
	want := tcp.InitialRTO
	if st.SRTT != 0 {
		want = min(st.SRTT+max(st.MDev, tcp.MinRTO), tcp.MaxRTO)
	}
	want = min(want<<min(backoff, 16), tcp.MaxRTO)
	if rto != want {
		h.t.Errorf("flow %d: armed %v, RTO() of %+v with backoff %d is %v", flow, rto, st, backoff, want)
	}
	h.armed, h.armAt = ev, h.sim()+rto
}

func (h *trackingHeap) Insert(e *sim.Event) {
	if h.armed != nil {
		if e != h.armed || e.At != h.armAt {
			h.t.Errorf("the insertion after ArmRTO is %p at %v, want the timer %p at %v", e, e.At, h.armed, h.armAt)
		}
		h.armed = nil
	}
	h.Heap.Insert(e)
}

// TestRTTTracker: a scheduler that implements tcp.RTTTracker sees every
// sample and arming, consistently, and the run is the run of the default
// heap (same trace hash).
func TestRTTTracker(t *testing.T) {
	env := netenv.DefaultEnv()
	env.Loss = 0.1 // timeouts, so that backoff shows
	cfg := single("reno", env, 2_000_000, 7)
	cfg.Handshake = true // the SYN's sample too
	h := &trackingHeap{Heap: sim.NewHeap(256), t: t, state: map[int32]tcp.RTTState{}}
	sameTraceWith(t, cfg, h, &h.sim)
	if h.samples < 100 || h.arms < 100 || h.timeouts == 0 {
		t.Errorf("%d samples, %d armings, %d after a timeout: the run exercises too little", h.samples, h.arms, h.timeouts)
	}
}

// sameTraceWith runs cfg on the scheduler h, whose clock (*now) reads the
// session's, and checks that the trace is the default heap's: a tracker
// must watch the run, never change it.
func sameTraceWith(t *testing.T, cfg netenv.Config, h sim.Scheduler, now *func() time.Duration) {
	t.Helper()
	plain, _ := run(t, cfg)
	var s *netenv.Session
	*now = func() time.Duration {
		if s == nil {
			return 0 // NewSession starts the senders at time 0
		}
		return s.Now()
	}
	cfg.Scheduler = h
	s, err := netenv.NewSession(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Finish(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.TraceSHA256 != plain.TraceSHA256 {
		t.Errorf("trace %s with the tracker, %s without", res.TraceSHA256, plain.TraceSHA256)
	}
}

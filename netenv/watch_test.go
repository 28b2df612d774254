package netenv

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/netenv/sim"
)

// Watch returns the run's own outcome, a hang fault when progress stops,
// and ctx's error when ctx ends; it abandons the run in the last two.
func TestWatch(t *testing.T) {
	release := make(chan struct{}) // the abandoned runs end with the test
	t.Cleanup(func() { close(release) })
	block := func(context.Context) (Result, error) { <-release; return Result{}, nil }
	cases := []struct {
		name    string
		run     func(context.Context) (Result, error)
		cancel  bool
		want    func(Result, error) bool
		abandon bool
	}{
		{"done", func(context.Context) (Result, error) { return Result{Events: 7}, nil },
			false, func(r Result, err error) bool { return err == nil && r.Events == 7 }, false},
		{"hang", block, false, func(_ Result, err error) bool {
			var f *Fault
			return errors.As(err, &f) && f.Kind == "hang" && f.Detail == "stuck"
		}, true},
		{"cancelled", block, true, func(_ Result, err error) bool { return errors.Is(err, context.Canceled) }, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if c.cancel {
				cancel()
			}
			var abandoned atomic.Bool
			// Only the hang case may end by the watchdog: a loaded machine
			// can delay the run's goroutine past any short stall.
			stall := time.Hour
			if c.name == "hang" {
				stall = 20 * time.Millisecond
			}
			res, err := Watch(ctx, stall, func() uint64 { return 0 }, func() { abandoned.Store(true) },
				func() string { return "stuck" }, c.run)
			if !c.want(res, err) {
				t.Fatalf("Watch: %+v, %v", res, err)
			}
			if abandoned.Load() != c.abandon {
				t.Errorf("abandoned %v, want %v", abandoned.Load(), c.abandon)
			}
		})
	}
}

// NoteCap names the cap a capped run hit: the event budget (the given one,
// or DefaultMaxEvents when unset) or else simulated time.
func TestNoteCap(t *testing.T) {
	for _, c := range []struct {
		capped bool
		events uint64
		max    uint64
		want   string
	}{
		{false, DefaultMaxEvents, 0, ""},
		{true, DefaultMaxEvents, 0, "events"},
		{true, DefaultMaxEvents - 1, 0, "time"},
		{true, 10, 10, "events"},
		{true, 9, 10, "time"},
	} {
		r := Result{Capped: c.capped, Events: c.events}
		r.NoteCap(sim.Limits{MaxEvents: c.max})
		if r.CapReason != c.want {
			t.Errorf("%+v: CapReason %q, want %q", c, r.CapReason, c.want)
		}
	}
}

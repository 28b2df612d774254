package linux

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/tcp"
)

// openOrSkip opens the subject or skips the test with the one-line reason.
func openOrSkip(t testing.TB) *Subject {
	t.Helper()
	s, err := New(Options{})
	if errors.Is(err, ErrUnavailable) {
		t.Skipf("linux subject unavailable: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// counter counts records and keeps the last of each flow.
type counter struct {
	n       int
	last    map[int32]tcp.StateRecord
	reasons map[tcp.Reason]int
	back    int // records whose time went back within a flow
}

func (c *counter) Observe(r *tcp.StateRecord) {
	if c.last == nil {
		c.last = map[int32]tcp.StateRecord{}
		c.reasons = map[tcp.Reason]int{}
	}
	if l, ok := c.last[r.Flow]; ok && r.Time < l.Time {
		c.back++
	}
	c.n++
	c.reasons[r.Reason]++
	c.last[r.Flow] = *r
}

func config(cca string, bytes uint64, e netenv.Env) netenv.Config {
	return netenv.Config{Seed: 1, Schedule: netenv.Constant(e), SACK: true,
		Flows: []netenv.Flow{{CCA: cca, Bytes: bytes}}, HashTrace: true}
}

func TestRunDeliversEverything(t *testing.T) {
	s := openOrSkip(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e := netenv.Env{Loss: 1e-3, BW: 10, Delay: 20, App: 10000, Buffer: 100}
	var c counter
	res, err := s.Run(ctx, config("cubic", 2_000_000, e), &c)
	if err != nil {
		t.Fatal(err)
	}
	f := res.Flows[0]
	t.Logf("result %+v; records %d %v; stats late n=%d", res, c.n, c.reasons, len(s.LastStats().Late))
	if !f.Done || f.DeliveredBytes != 2_000_000 {
		t.Fatalf("done %v delivered %d, want all 2000000", f.Done, f.DeliveredBytes)
	}
	if c.n < 100 {
		t.Fatalf("%d records, want one per ACK (> 100)", c.n)
	}
	if c.back > 0 {
		t.Fatalf("%d records went back in time", c.back)
	}
}

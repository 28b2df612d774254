package sim

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// plainHeap hides the default heap from Sim's type check, so that the
// simulator takes the general path (remove, then insert) for every move.
type plainHeap struct{ *Heap }

type churn struct {
	s      *Sim
	r      *rand.Rand
	timers []*Event
	log    *[]string
}

func (c *churn) Handle(e *Event) {
	*c.log = append(*c.log, time.Duration(c.s.Now()).String()+"/"+string(rune('a'+e.Tag)))
	// Each event moves a few timers, mostly later (like a retransmission
	// timer pushed back by every ACK), sometimes earlier, sometimes off.
	for range 3 {
		t := c.timers[c.r.IntN(len(c.timers))]
		switch k := c.r.IntN(10); {
		case k < 6:
			c.s.Schedule(t, time.Duration(50+c.r.IntN(100)))
		case k < 8:
			c.s.Schedule(t, time.Duration(c.r.IntN(20)))
		case k < 9:
			c.s.ScheduleAt(t, c.s.Now()+time.Duration(c.r.IntN(60)))
		default:
			c.s.Cancel(t)
		}
	}
}

// TestRearmKeepsOrder checks that moving queued timers later in place
// (rearm) executes exactly the events, at exactly the times and in exactly
// the order, of removing and inserting them.
func TestRearmKeepsOrder(t *testing.T) {
	for _, tc := range []struct {
		name   string
		seed   uint64
		timers int
		limits Limits
	}{
		{"few timers", 1, 3, Limits{MaxEvents: 5000}},
		{"many timers", 2, 40, Limits{MaxEvents: 5000}},
		{"time cap", 3, 5, Limits{MaxTime: 20000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := func(sched Scheduler) ([]string, uint64) {
				s := New(sched, tc.limits)
				var log []string
				c := &churn{s: s, r: rand.New(rand.NewPCG(tc.seed, 1)), log: &log}
				for i := range tc.timers {
					e := NewEvent(0, KindTimer, uint8(i), c)
					c.timers = append(c.timers, e)
					s.Schedule(e, time.Duration(i))
				}
				if err := s.Run(context.Background()); err != nil {
					t.Fatal(err)
				}
				return log, s.Events()
			}
			got, gotN := run(NewHeap(4))
			want, wantN := run(plainHeap{NewHeap(4)})
			if gotN != wantN || !slices.Equal(got, want) {
				t.Fatalf("rearm: %d events, general path %d; first difference at %d", gotN, wantN, firstDiff(got, want))
			}
			if len(got) < 100 {
				t.Fatalf("only %d events ran", len(got))
			}
		})
	}
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

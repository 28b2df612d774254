package sim

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// refSched is a brute-force Scheduler: a slice, a linear search for the
// minimum and real removals.
type refSched struct{ evs []*Event }

func (r *refSched) Len() int { return len(r.evs) }

func (r *refSched) Insert(e *Event) {
	e.index = int32(len(r.evs))
	r.evs = append(r.evs, e)
}

func (r *refSched) Remove(e *Event) {
	i := slices.Index(r.evs, e)
	if i < 0 {
		return
	}
	r.evs = slices.Delete(r.evs, i, i+1)
	for j := i; j < len(r.evs); j++ {
		r.evs[j].index = int32(j)
	}
	e.index = -1
}

func (r *refSched) PopMin() *Event {
	if len(r.evs) == 0 {
		return nil
	}
	m := 0
	for i, e := range r.evs {
		if before(e, r.evs[m]) {
			m = i
		}
	}
	e := r.evs[m]
	r.Remove(e)
	return e
}

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
		// What the handlers see must not depend on the scheduler.
		if t.Queued() {
			*c.log = append(*c.log, "q")
		}
	}
}

// TestRearmKeepsOrder checks that the default heap, which moves timers
// later and cancels them in place, executes exactly the events, at exactly
// the times and in exactly the order, of a brute-force scheduler that
// removes and inserts them.
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
			want, wantN := run(&refSched{})
			if gotN != wantN || !slices.Equal(got, want) {
				t.Fatalf("heap: %d events, brute force %d; first difference at %d", gotN, wantN, firstDiff(got, want))
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

package sim

import (
	"slices"
	"testing"
	"time"
)

type untilRecorder struct {
	s   *Sim
	got *[]time.Duration
}

func (r untilRecorder) Handle(e *Event) { *r.got = append(*r.got, r.s.Now()) }

// TestRunUntil checks that RunUntil executes exactly the events due by t,
// in order, leaves the clock at t, reports the next due time, and stops at
// the time cap.
func TestRunUntil(t *testing.T) {
	tests := []struct {
		name     string
		at       []time.Duration
		cap      time.Duration
		until    []time.Duration
		ran      [][]time.Duration // events run by each call
		next     []time.Duration
		pending  []bool
		stoppedT bool
	}{
		{
			name:    "in steps",
			at:      []time.Duration{3, 1, 2, 2},
			until:   []time.Duration{0, 2, 2, 5},
			ran:     [][]time.Duration{nil, {1, 2, 2}, nil, {3}},
			next:    []time.Duration{1, 3, 3, 0},
			pending: []bool{true, true, true, false},
		},
		{
			name:     "time cap",
			at:       []time.Duration{1, 10},
			cap:      5,
			until:    []time.Duration{20},
			ran:      [][]time.Duration{{1}},
			next:     []time.Duration{0},
			pending:  []bool{false},
			stoppedT: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := New(nil, Limits{MaxTime: tc.cap})
			var got []time.Duration
			for _, at := range tc.at {
				s.ScheduleAt(NewEvent(0, KindTimer, 0, untilRecorder{s, &got}), at)
			}
			for i, u := range tc.until {
				got = got[:0]
				next, pending := s.RunUntil(u)
				if !slices.Equal(got, tc.ran[i]) || next != tc.next[i] || pending != tc.pending[i] {
					t.Fatalf("RunUntil(%v): ran %v next %v pending %v; want %v %v %v", u, got, next, pending, tc.ran[i], tc.next[i], tc.pending[i])
				}
				if !s.Stopped() && s.Now() != u {
					t.Fatalf("RunUntil(%v): clock at %v", u, s.Now())
				}
			}
			if s.Stopped() != tc.stoppedT || s.Capped() != tc.stoppedT {
				t.Fatalf("stopped %v capped %v, want %v", s.Stopped(), s.Capped(), tc.stoppedT)
			}
		})
	}
}

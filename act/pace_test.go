package act

import (
	"testing"
	"time"
)

func TestCheckpointPace(t *testing.T) {
	const s = time.Second
	tests := []struct {
		name  string
		least time.Duration
		took  []time.Duration // durations recorded in turn
		want  []time.Duration // the period after each
	}{
		{"fast checkpoints keep the campaign's period", 30 * s,
			[]time.Duration{100 * time.Millisecond, 200 * time.Millisecond},
			[]time.Duration{30 * s, 30 * s}},
		{"50 times a checkpoint's duration, reached by doubling", 30 * s,
			[]time.Duration{5 * s, 5 * s, 5 * s, 5 * s, 6 * s, 6 * s, 6 * s},
			[]time.Duration{60 * s, 120 * s, 240 * s, 250 * s, 250 * s, 250 * s, 300 * s}},
		// The first checkpoint waited 9 s for a server that restarted.
		{"a slow first checkpoint", 30 * s,
			[]time.Duration{9 * s, 260 * time.Millisecond, 940 * time.Millisecond},
			[]time.Duration{60 * s, 30 * s, 30 * s}},
		// A checkpoint that waited out a server restart does not put the
		// next one 50 times that far.
		{"one slow checkpoint among fast ones", 30 * s,
			[]time.Duration{2 * s, 2 * s, 25 * s, 2 * s, 2 * s, 2 * s},
			[]time.Duration{60 * s, 100 * s, 100 * s, 100 * s, 100 * s, 100 * s}},
		{"three slow ones in a row count", 30 * s,
			[]time.Duration{2 * s, 2 * s, 4 * s, 4 * s, 4 * s},
			[]time.Duration{60 * s, 100 * s, 100 * s, 100 * s, 200 * s}},
		{"the period is capped", 30 * s,
			[]time.Duration{20 * s, 20 * s, 20 * s, 20 * s, 20 * s, 20 * s},
			[]time.Duration{60 * s, 120 * s, 240 * s, 480 * s, maxCheckpointPeriod, maxCheckpointPeriod}},
		{"a campaign's own period above the cap holds", time.Hour,
			[]time.Duration{60 * s, 60 * s},
			[]time.Duration{time.Hour, time.Hour}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newCheckpointPace(tt.least)
			for i, d := range tt.took {
				if got := p.record(d); got != tt.want[i] {
					t.Fatalf("after %v: next checkpoint in %v, want %v", tt.took[:i+1], got, tt.want[i])
				}
			}
		})
	}
}

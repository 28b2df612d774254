package cli

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// TestWatchHeap: the watcher says nothing while the collector paces
// itself (few collections, or many on a small heap), says it once when it
// thrashes with a live heap over half the soft limit (however long that
// lasts), and stops with its context.
func TestWatchHeap(t *testing.T) {
	const limit = 1000
	const period = 10 * time.Millisecond
	// Collections between two reads that are over thrashPerSecond unless
	// the reads are more than 200 s apart, however loaded the machine.
	const many = 1000
	for _, tc := range []struct {
		name     string
		live     []uint64 // read in turn (the first at the start); the last repeats
		perRead  uint64   // collections between reads
		want     int      // calls of thrash
		wantLive uint64
	}{
		{"paced", []uint64{900}, 0, 0, 0},
		{"small heap collected often", []uint64{100, 400, 500}, many, 0, 0},
		{"thrashing", []uint64{100, 600, 900}, many, 1, 600},
		{"thrashing on", []uint64{950}, many, 1, 950},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			var reads, calls atomic.Int64
			read := func() heapReading {
				i := int(reads.Add(1)) - 1
				return heapReading{live: tc.live[min(i, len(tc.live)-1)], cycles: uint64(i) * tc.perRead}
			}
			var got heapReading
			done := make(chan struct{})
			go func() {
				watchHeap(ctx, limit, read, period, func(h heapReading, perSecond float64) {
					if perSecond <= thrashPerSecond {
						t.Errorf("thrash at %.1f collections a second", perSecond)
					}
					got = h
					calls.Add(1)
				})
				close(done)
			}()
			for reads.Load() < int64(len(tc.live)+3) && calls.Load() == 0 {
				time.Sleep(time.Millisecond)
			}
			time.Sleep(3 * period)
			cancel()
			<-done
			if n := int(calls.Load()); n != tc.want {
				t.Fatalf("thrash said %d times, want %d", n, tc.want)
			}
			if tc.want > 0 && got.live != tc.wantLive {
				t.Fatalf("thrash said at %d live, want %d", got.live, tc.wantLive)
			}
		})
	}
}

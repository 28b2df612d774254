package cli

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// TestWatchLiveHeap: the watcher says nothing while the live heap is
// within the soft limit, says it once when the heap goes over (however
// long it stays over), and stops with its context.
func TestWatchLiveHeap(t *testing.T) {
	for _, tc := range []struct {
		name  string
		heaps []uint64 // read in turn; the last repeats
		want  int      // calls of over
	}{
		{"within", []uint64{10, 90, 100}, 0},
		{"over once", []uint64{10, 101, 50}, 1},
		{"over and staying", []uint64{200}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			var reads, calls atomic.Int64
			read := func() uint64 {
				i := min(int(reads.Add(1))-1, len(tc.heaps)-1)
				return tc.heaps[i]
			}
			var got [2]uint64
			done := make(chan struct{})
			go func() {
				watchLiveHeap(ctx, 100, read, time.Millisecond, func(live, limit uint64) {
					calls.Add(1)
					got = [2]uint64{live, limit}
				})
				close(done)
			}()
			for reads.Load() < int64(len(tc.heaps)+5) && calls.Load() == 0 {
				time.Sleep(time.Millisecond)
			}
			time.Sleep(20 * time.Millisecond)
			cancel()
			<-done
			if n := int(calls.Load()); n != tc.want {
				t.Fatalf("over called %d times, want %d", n, tc.want)
			}
			if tc.want > 0 && (got[0] <= 100 || got[1] != 100) {
				t.Fatalf("over(%d, %d): want a live heap over the limit of 100", got[0], got[1])
			}
		})
	}
}

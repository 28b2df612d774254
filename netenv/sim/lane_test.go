package sim

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestLanesKeepHeapOrder runs random schedules in which some events belong
// to FIFO lanes, mostly but not always in time order, with cancellations of
// parked, head and free events, and checks that the heap pops exactly what
// a brute-force minimum over every queued event would.
func TestLanesKeepHeapOrder(t *testing.T) {
	for _, tc := range []struct {
		name     string
		seed     uint64
		lanes    int
		reorderP float64 // probability that a lane event is earlier than its lane's last
		cancelP  float64
	}{
		{"in order", 1, 3, 0, 0},
		{"reordered", 2, 3, 0.3, 0},
		{"cancellations", 3, 4, 0.1, 0.2},
		{"one lane many cancels", 4, 1, 0.05, 0.4},
		{"no lanes", 5, 0, 0, 0.1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(tc.seed, 7))
			h := NewHeap(4)
			var queued []*Event // brute-force reference
			var seq uint64
			now := time.Duration(0)
			laneLast := make([]time.Duration, tc.lanes+1)
			insert := func() {
				e := NewEvent(0, KindTimer, 0, nil)
				seq++
				e.Seq = seq
				e.At = now + time.Duration(r.IntN(50))
				if tc.lanes > 0 && r.IntN(3) > 0 {
					e.Lane = int32(1 + r.IntN(tc.lanes))
					if r.Float64() >= tc.reorderP {
						e.At = max(e.At, laneLast[e.Lane]+time.Duration(r.IntN(3)))
					}
					laneLast[e.Lane] = max(laneLast[e.Lane], e.At)
				}
				h.Insert(e)
				queued = append(queued, e)
			}
			for step := 0; step < 20000; step++ {
				switch {
				case r.IntN(2) == 0 || len(queued) == 0:
					insert()
				case r.Float64() < tc.cancelP:
					i := r.IntN(len(queued))
					h.Remove(queued[i])
					if queued[i].Queued() {
						t.Fatalf("step %d: removed event still queued", step)
					}
					queued = slices.Delete(queued, i, i+1)
				default:
					want := slices.MinFunc(queued, func(a, b *Event) int {
						if before(a, b) {
							return -1
						}
						if before(b, a) {
							return 1
						}
						return 0
					})
					got := h.PopMin()
					if got != want {
						t.Fatalf("step %d: popped (%v,%d), want (%v,%d)", step, got.At, got.Seq, want.At, want.Seq)
					}
					if got.Queued() {
						t.Fatalf("step %d: popped event still queued", step)
					}
					now = got.At
					queued = slices.DeleteFunc(queued, func(e *Event) bool { return e == got })
				}
				if h.Len() != len(queued) {
					t.Fatalf("step %d: Len %d, want %d", step, h.Len(), len(queued))
				}
			}
		})
	}
}

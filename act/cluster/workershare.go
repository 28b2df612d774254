package cluster

import (
	"context"
	"slices"
	"sync"
)

// share shares a host's Procs slots between the campaigns it serves. A
// slot runs one configuration (Worker.runOne), so the host never runs
// more than Procs simulations at once whatever the number of campaigns,
// and a chunk's configurations run in as many slots as they get. A free slot goes to the waiting campaign that
// holds the fewest (the first to ask among those): campaigns that all
// have work get shares that differ by one slot at most, and a campaign
// without work leaves its slots to the others.
type share struct {
	mu      sync.Mutex
	free    int
	held    map[string]int
	waiters []*shareWaiter
}

type shareWaiter struct {
	id      string
	granted chan struct{} // closed when the slot is granted
}

func newShare(procs int) *share { return &share{free: procs, held: map[string]int{}} }

// acquire waits for a slot for campaign id, or for ctx to end (an error).
func (s *share) acquire(ctx context.Context, id string) error {
	s.mu.Lock()
	wt := &shareWaiter{id: id, granted: make(chan struct{})}
	s.waiters = append(s.waiters, wt)
	s.grant()
	s.mu.Unlock()
	select {
	case <-wt.granted:
		return nil
	case <-ctx.Done():
	}
	s.mu.Lock()
	if i := slices.Index(s.waiters, wt); i >= 0 {
		s.waiters = slices.Delete(s.waiters, i, i+1)
		s.mu.Unlock()
		return ctx.Err()
	}
	s.mu.Unlock()
	s.release(id) // granted meanwhile
	return ctx.Err()
}

// release frees a slot of campaign id.
func (s *share) release(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held[id]--; s.held[id] <= 0 {
		delete(s.held, id)
	}
	s.free++
	s.grant()
}

// grant hands the free slots to the waiters (s.mu held).
func (s *share) grant() {
	for s.free > 0 && len(s.waiters) > 0 {
		best := 0
		for i, wt := range s.waiters {
			if s.held[wt.id] < s.held[s.waiters[best].id] {
				best = i
			}
		}
		wt := s.waiters[best]
		s.waiters = slices.Delete(s.waiters, best, best+1)
		s.free--
		s.held[wt.id]++
		close(wt.granted)
	}
}

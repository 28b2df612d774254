package act

import (
	"context"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

// gatedSubject is a slow subject: every run waits until the file gate
// exists (or a minute passes), so no batch can merge before it.
type gatedSubject struct {
	netenv.Native
	gate   string
	gaveUp *atomic.Bool // a simulation went on without the gate
}

// Run waits for the gate (a file) for at most 5 minutes, and says whether
// it gave up: whether the run wrote its checkpoint is read from that, not
// from how long the run took (under the race detector at load 45 it took
// over 50 s with the gate opened).
func (s gatedSubject) Run(ctx context.Context, cfg netenv.Config, obs observe.Observer) (netenv.Result, error) {
	opened := false
	for end := time.Now().Add(5 * time.Minute); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(s.gate); err == nil || ctx.Err() != nil {
			opened = true
			break
		}
	}
	if !opened {
		s.gaveUp.Store(true)
	}
	return s.Native.Run(ctx, cfg, obs)
}

// A checkpoint is written while the first batch is still running: the
// period of Options.CheckpointEvery holds however slow a batch is, and
// resuming from that checkpoint ends as an uninterrupted campaign.
func TestCheckpointByWallTime(t *testing.T) {
	c := smallCampaign(t)
	const budget = 128
	full, err := Run(context.Background(), c, Options{Budget: budget, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var gaveUp atomic.Bool
	_, err = Run(ctx, c, Options{Budget: budget, Out: dir, Workers: 2, CheckpointEvery: 50 * time.Millisecond,
		Subject:  gatedSubject{gate: checkpointPath(dir, "act"), gaveUp: &gaveUp},
		Progress: func(Status) { cancel() }})
	if err != nil {
		t.Fatal(err)
	}
	if gaveUp.Load() {
		t.Fatalf("no checkpoint while the batch ran: the run waited for the gate")
	}
	resumed, err := Run(context.Background(), c, Options{Budget: budget, Out: dir, Workers: 1, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range c.Space.Ks() {
		if a, b := full.Store.VisitedRegions(k), resumed.Store.VisitedRegions(k); a != b {
			t.Fatalf("k=%d: %d regions uninterrupted, %d resumed", k, a, b)
		}
	}
}

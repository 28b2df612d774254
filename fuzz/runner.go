package fuzz

import (
	"context"
	"fmt"
	"time"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/coverage"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/sim"
)

// Hit is the first time a campaign condition held in a run.
type Hit = act.Hit

// Outcome is what one simulation produced. The states it visited are in
// the runner's Batch until the next Run.
type Outcome = act.Outcome

// HarnessLimits are the caps of the go-fuzz and native region harnesses:
// cheaper than a campaign's (netenv.DefaultMaxTime, DefaultMaxEvents), so
// that inputs near the corners of P (an application rate of a few bit/s
// keeps a run going for hours of simulated time) cost at most a few
// hundred milliseconds under fuzzing instrumentation. A typical 15 MB run
// needs about 30,000–60,000 events.
var HarnessLimits = sim.Limits{MaxTime: time.Hour, MaxEvents: 150_000}

// Runner runs configurations of one campaign with act's runner (the one
// run tail of campaigns and harnesses: the same projection onto S, the
// same watcher, the same fault findings) into a batch of its own. A Runner
// is not safe for concurrent use; give each goroutine its own.
type Runner struct {
	*act.Runner
	batch *coverage.Batch
}

// NewRunner prepares a runner for campaign c on subject subj (the native
// simulator when nil).
func NewRunner(c *act.Campaign, subj netenv.Subject) (*Runner, error) {
	b, err := coverage.NewBatch(c.Space)
	if err != nil {
		return nil, fmt.Errorf("state space: %w", err)
	}
	r, err := act.NewRunner(c, subj, c.Space)
	if err != nil {
		return nil, err
	}
	return &Runner{Runner: r, batch: b}, nil
}

// Batch holds the distinct states of S visited by the last run.
func (r *Runner) Batch() *coverage.Batch { return r.batch }

// TakeBatch hands over the last run's batch and gives the runner a new one.
func (r *Runner) TakeBatch() *coverage.Batch {
	b := r.batch
	r.batch, _ = coverage.NewBatch(r.Campaign().Space)
	return b
}

// Run simulates g. The batch is reset first.
func (r *Runner) Run(ctx context.Context, g act.Config) Outcome {
	r.batch.Reset()
	return r.Runner.Run(ctx, g, r.batch)
}

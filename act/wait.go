package act

import (
	"context"
	"time"
)

// checkpointTick is the finest period at which the wait for results looks
// at the checkpoint clock.
const checkpointTick = 10 * time.Millisecond

// wait receives results into arrived until configurations base … base+n-1
// have all arrived, ctx is done (the batch is then left unmerged, so a
// resume recomputes it) or the executor fails. Meanwhile it calls
// checkpoint, which saves the merged state when its period has passed:
// a checkpoint is written at least every Options.CheckpointEvery however
// long a batch takes (configurations chosen but not merged are recomputed
// on resume).
func wait(ctx context.Context, ex executor, arrived map[int]result, base, n int, checkpoint func() error) error {
	var tick *time.Ticker
	for got := 0; got < n; {
		if _, ok := arrived[base+got]; ok {
			got++
			continue
		}
		if tick == nil {
			tick = time.NewTicker(checkpointTick)
			defer tick.Stop()
		}
		select {
		case r := <-ex.results():
			arrived[r.idx] = r
		case err := <-ex.failed():
			return err
		case <-ctx.Done():
			return nil
		case <-tick.C:
			if err := checkpoint(); err != nil {
				return err
			}
		}
	}
	return nil
}

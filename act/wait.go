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
//
// When stop is closed (the end of Options.Duration) it drains the
// executor: nothing starts any more, and it returns drained true once
// what was running has ended (at most one watchdog later) or the batch is
// complete. The caller merges the batch's prefix that arrived.
// stopAfter, if set (tests), closes the stop at the arrival of the
// results for which it returns true.
func wait(ctx context.Context, ex executor, arrived map[int]result, base, n int, checkpoint func() error, stop <-chan struct{}, stopAfter func(idx int) bool) (drained bool, err error) {
	var tick *time.Ticker
	var ended <-chan struct{} // the executor's drain, once begun
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
			if stopAfter != nil && stopAfter(r.idx) && !drained {
				drained, ended, stop = true, ex.drain(), nil
			}
		case err := <-ex.failed():
			return drained, err
		case <-ctx.Done():
			return drained, nil
		case <-stop:
			drained, ended, stop = true, ex.drain(), nil
		case <-ended:
			// Nothing runs any more: take what was given.
			for {
				select {
				case r := <-ex.results():
					arrived[r.idx] = r
				default:
					return true, nil
				}
			}
		case <-tick.C:
			if err := checkpoint(); err != nil {
				return drained, err
			}
		}
	}
	return drained, nil
}

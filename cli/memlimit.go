package cli

import (
	"context"
	"log/slog"
	"runtime/debug"
	"runtime/metrics"
	"time"

	"github.com/actfuzz/actfuzz/act"
)

// setMemoryLimit sets the runtime's soft memory limit to its share of the
// campaign's budget, so that the garbage collector keeps the heap within it
// (the store keeps to a smaller share: see act.Options.Memory), and watches
// the live heap against it until ctx ends: a heap the budget does not
// hold is said (watchLiveHeap), not left to a collector that never rests.
func setMemoryLimit(ctx context.Context, c *act.Campaign, flag int64, log *slog.Logger) {
	m := flag
	if m == 0 {
		m = c.Memory
	}
	if m <= 0 {
		return
	}
	limit := m / 10 * act.RuntimeShare
	debug.SetMemoryLimit(limit)
	go watchLiveHeap(ctx, uint64(limit), liveHeap, liveHeapEvery, func(live, limit uint64) {
		log.Warn("memory: the live heap is over the runtime's soft limit, so the garbage collector runs without rest; "+
			"the results waiting for their merge and the batches kept for reuse are not in the budget (README, \"Memory\"): "+
			"raise memory: (or --memory), or lower --lag",
			"live_mb", live>>20, "soft_limit_mb", limit>>20)
	})
}

// liveHeapEvery is how often watchLiveHeap reads the live heap.
const liveHeapEvery = 5 * time.Second

// liveHeap is the heap live after the last garbage collection. A read of
// runtime/metrics does not stop the world.
func liveHeap() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// watchLiveHeap reads the live heap (read) every period until ctx ends,
// and calls over once, the first time it exceeds limit. Below the soft
// limit the collector paces itself; above it, it collects again as soon
// as it has finished (5,000 collections a minute measured at memory:
// 256MB), and the run only slows, so it must be said.
func watchLiveHeap(ctx context.Context, limit uint64, read func() uint64, period time.Duration, over func(live, limit uint64)) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if live := read(); live > limit {
				over(live, limit)
				return
			}
		}
	}
}

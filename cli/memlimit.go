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
// the heap against it until ctx ends: a heap the budget does not hold is
// said (watchHeap), not left to a collector that never rests.
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
	go watchHeap(ctx, uint64(limit), readHeap, heapEvery, func(h heapReading, perSecond float64) {
		log.Warn("memory: the heap is near the runtime's soft limit, so the garbage collector runs without rest; "+
			"the results waiting for their merge and the batches kept for reuse are not in the budget (docs/campaigns.md, \"Memory\"): "+
			"raise memory: (or --memory), or lower --lag",
			"live_mb", h.live>>20, "soft_limit_mb", uint64(limit)>>20, "collections_per_s", int(perSecond))
	})
}

// heapEvery is how often watchHeap reads the heap.
const heapEvery = 5 * time.Second

// heapReading is the heap live after the last garbage collection and the
// collections so far.
type heapReading struct{ live, cycles uint64 }

// readHeap reads the heap from runtime/metrics, which does not stop the
// world.
func readHeap() heapReading {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	var h heapReading
	if s[0].Value.Kind() == metrics.KindUint64 {
		h.live = s[0].Value.Uint64()
	}
	if s[1].Value.Kind() == metrics.KindUint64 {
		h.cycles = s[1].Value.Uint64()
	}
	return h
}

// Thrash is said when, over one period, the collector ran more than
// thrashPerSecond times a second with a live heap over half the soft
// limit. Near the limit the runtime counts all its memory (free spans,
// fragmentation) against it, so the collector starts again as soon as it
// ends while the live heap is still below it: at memory: 256MB, 5,000
// collections a minute with 225–408 MB live (limit 230 MB); a whole store
// at 2 GiB, 37 a second with 1,673 MB live (limit 1,843 MB). Far from the
// limit, collections pace themselves by GOGC: a small heap may be
// collected often, and cheaply, which is not worth a word.
const thrashPerSecond = 5

// watchHeap reads the heap (read) every period until ctx ends, and calls
// thrash once, the first period in which the collector thrashed under
// the soft limit.
func watchHeap(ctx context.Context, limit uint64, read func() heapReading, period time.Duration, thrash func(heapReading, float64)) {
	t := time.NewTicker(period)
	defer t.Stop()
	last, at := read(), time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			h := read()
			rate := float64(h.cycles-last.cycles) / now.Sub(at).Seconds()
			if h.live > limit/2 && rate > thrashPerSecond {
				thrash(h, rate)
				return
			}
			last, at = h, now
		}
	}
}

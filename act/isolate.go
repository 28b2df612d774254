package act

import (
	"context"
	"time"
)

// IsolateOptions configure the supervision of worker processes.
type IsolateOptions struct {
	// Watchdog is the wall-clock time after which a simulation counts as
	// hung; 0: 60 s or 50× the median simulation time, whichever is
	// larger.
	Watchdog time.Duration
	// WorkerMemory is the memory limit of a worker process in bytes; 0:
	// 1 GB.
	WorkerMemory int64
}

func newIsolated(ctx context.Context, c *Campaign, opt Options) executor {
	panic("TODO")
}

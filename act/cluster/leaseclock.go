package cluster

import "time"

// clockStart is the origin of monoClock.
var clockStart = time.Now()

// monoClock is the time since the process started by Go's monotonic
// clock.
func monoClock() time.Duration { return time.Since(clockStart) }

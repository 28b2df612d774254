//go:build !linux

package cluster

import "time"

// leaseClock is the time a lease's durations are measured in: elsewhere
// than Linux, Go's monotonic clock (which may not count a suspended
// machine's sleep; leaseclock_linux.go).
func leaseClock() time.Duration { return monoClock() }

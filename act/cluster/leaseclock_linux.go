package cluster

import (
	"time"

	"golang.org/x/sys/unix"
)

// leaseClock is the time a lease's durations are measured in: Linux's
// CLOCK_BOOTTIME, which counts the time the machine was suspended. Go's
// monotonic clock (CLOCK_MONOTONIC) does not: a holder whose machine
// slept through its lease would find it still fresh on waking, and act
// while a process elsewhere, whose clock went on, had taken it over.
func leaseClock() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return monoClock() // no CLOCK_BOOTTIME (Linux before 2.6.39)
	}
	return time.Duration(ts.Nano())
}

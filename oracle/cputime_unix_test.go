//go:build unix

package oracle

import "syscall"

// cpuTime is the CPU time (user and system, ns) the process has used: on
// a machine shared with other jobs a benchmark's wall time counts the
// time it waited for a core, its CPU time does not.
func cpuTime() (int64, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return ru.Utime.Nano() + ru.Stime.Nano(), true
}

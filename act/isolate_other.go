//go:build !linux

package act

import (
	"errors"
	"os/exec"
)

// orphanProof: a worker notices its coordinator's death when its stdin
// ends (between simulations only).
func orphanProof(*exec.Cmd) {}

// schedStat: unknown, so unstarved time is wall time (procclock.go).
func schedStat(int, map[int]threadTimes) bool { return false }

// resetPeakRSS: no per-simulation peak (the supervisor's samples only).
func resetPeakRSS() bool { return false }

func peakRSS() (int64, error) { return 0, errors.ErrUnsupported }

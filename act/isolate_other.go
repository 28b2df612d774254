//go:build !linux

package act

import "os/exec"

// orphanProof: a worker notices its coordinator's death when its stdin
// ends (between simulations only).
func orphanProof(*exec.Cmd) {}

// schedStat: unknown, so unstarved time is wall time (procclock.go).
func schedStat(int, map[int]threadTimes) bool { return false }

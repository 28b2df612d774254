//go:build !unix

package oracle

// cpuTime is not known here: BenchmarkOracles reports wall time only.
func cpuTime() (int64, bool) { return 0, false }

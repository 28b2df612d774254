//go:build !race

// Package race says whether the race detector is on, as Go's own
// internal/race does: a test whose concurrent code another test exercises
// under the race detector skips there (make test's race step), naming that
// test, and still runs in the plain step.
package race

// Enabled: this binary was built with -race.
const Enabled = false

package corpus

// Faults of a worker process, observed by the campaign's supervisor rather
// than by the subject: the seed's configuration made the process hang, go
// over its memory limit or die. Replaying one needs a worker process
// under a watchdog and a memory limit (act.ReplayIsolated, `actfuzz
// replay`); ReplayWith refuses them rather than hang or die itself.
const (
	FaultHang  = "hang"  // no result within the watchdog
	FaultOOM   = "oom"   // the worker went over its memory limit
	FaultCrash = "crash" // the worker died: a panic on any goroutine, a signal
)

// ProcessFault reports whether a finding kind is a fault of the worker
// process (hang, oom, crash).
func ProcessFault(kind string) bool {
	return kind == FaultHang || kind == FaultOOM || kind == FaultCrash
}

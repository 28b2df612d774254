package act

import (
	"context"
	"log/slog"
	"time"

	"github.com/actfuzz/actfuzz/coverage"
	"github.com/actfuzz/actfuzz/netenv"
)

// Options control one campaign run.
type Options struct {
	Method   string        // "act" (default), "ran" or "man"
	Budget   int           // simulations; 0: the campaign's budget
	Duration time.Duration // wall-clock limit; 0: none
	Workers  int           // 0: GOMAXPROCS
	Out      string        // output directory; "" writes nothing
	// Resume continues the campaign checkpointed in Out, if any.
	Resume bool
	// CheckpointEvery bounds the time between checkpoints (default 30 s).
	CheckpointEvery time.Duration
	// Memory is the memory budget in bytes of the campaign process (0:
	// the campaign's; negative: none). The coverage store and its pools
	// keep to StoreShare tenths of it (see coverage's "Memory budget"); a
	// command should also set the runtime's soft limit to RuntimeShare
	// tenths of it (debug.SetMemoryLimit), leaving the rest for memory the
	// runtime does not return at once. With StoreParts, which cannot
	// coarsen, a budget given (here or in the campaign file) caps the
	// coordinator's index at the store's share: the merge that takes it
	// over is the campaign's last (ErrIndexCapped).
	Memory int64
	// MaxOutOfRange bounds the distinct states outside S that the store
	// keeps (default 1,000,000; negative: keep all). They never count as
	// regions, and in a wide P there are as many of them as inside S.
	MaxOutOfRange int
	Logger        *slog.Logger
	// Subject runs the simulations; nil means the native simulator.
	Subject netenv.Subject
	// Progress, if set, is called after every batch.
	Progress func(Status)
	// OnFinding, if set, is called on the campaign's goroutine for each new
	// finding group as it is found (a caller may cancel the context
	// there, for example once every condition has a hit).
	OnFinding func(*FindingGroup)
	// Program is the command that suggested replay and minimize
	// commands (findings.md) start with; default "actfuzz".
	Program string
	// Isolate runs simulations in supervised worker processes (see
	// isolate.go); false runs them on goroutines of this process. The
	// workers are this executable run as "worker" (WorkerCommand): a
	// program of its own (a custom CCAI's) must then serve that argument
	// with WorkerMain.
	Isolate bool
	IsolateOptions
	// Executor, if set, makes the executor that runs the simulations
	// instead of this process's workers (act/cluster); h is the campaign
	// header it must hand its workers. Workers and Isolate are then
	// unused.
	Executor func(ctx context.Context, h CampaignHeader) (Executor, error)
	// Lag is how many batches of configurations are chosen ahead of the
	// merged ones (0: the checkpoint's when resuming, else DefaultLag).
	// Results depend on it: batch k+Lag is chosen from the store as it
	// stands after batch k. A cluster needs more in flight to keep its
	// workers busy. It is recorded in the checkpoint.
	Lag int
	// StoreParts, when not 0, splits the coverage store into that many
	// parts that the Executor keeps elsewhere (it must be a StoreParts of
	// that count; coverage/parts.go): Run keeps the store's index and
	// merges through the Executor. Results do not depend on it. The
	// report's Store is then the index (every count, no pool; LoadReport
	// reads the whole store from the checkpoint). A split store cannot
	// coarsen: the memory budget caps the index (ErrIndexCapped), and the
	// Executor may cap its parts (ErrStoreCapped). Results are those of a
	// whole store until a cap is hit.
	StoreParts int
	// OnCheckpoint, if set, is called after every checkpoint is written
	// (and after the last), on the campaign's goroutine, with the report
	// so far: `run` regenerates the HTML report from it (package report).
	// The report's Wall is zero until the last call.
	OnCheckpoint func(*Report)
	// onSymBranch, if set, is called after each branch of a symbolic
	// window (tests: an interruption inside a window).
	onSymBranch func(*coverage.Batch)
	// onSymWindow, if set, sees a window's branch batches as they are
	// committed (tests).
	onSymWindow func([]*coverage.Batch)
	// symNoSnapshot runs symbolic branches from time zero (tests).
	symNoSnapshot bool
	// stopAfter, if set, ends the run as the end of Duration does once a
	// result for which it returns true arrives (tests: a stop at a chosen
	// configuration).
	stopAfter func(idx int) bool
}

// DefaultLag is the lag between selection and merge, in batches, of a
// run that does not set Options.Lag.
const DefaultLag = 2

// StatusEvery is how often a campaign rewrites status.json (and
// findings.md, findings.json) between checkpoints.
const StatusEvery = 5 * time.Second

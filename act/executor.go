package act

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/actfuzz/actfuzz/coverage"
	"github.com/actfuzz/actfuzz/netenv"
)

// An executor runs the simulations of dispatched configurations and
// delivers exactly one result per configuration index, in any order. The
// coordinator (Run) owns the configuration log; an executor sees only the
// copies it is given, so selection can go on while simulations run.
type executor interface {
	// dispatch queues the configurations gs, whose indices are base,
	// base+1, …; it does not block. gs belongs to the executor.
	dispatch(base int, gs []Config)
	// results delivers the results.
	results() <-chan result
	// failed delivers an error that stops the campaign (a worker process
	// that cannot be started, a protocol error).
	failed() <-chan error
	// recycle hands back a merged (reset) batch for reuse.
	recycle(b *coverage.Batch)
	// drain starts no more simulations (Run at the end of
	// Options.Duration): those running end with their result (or a fault
	// of their own) or, one watchdog after the drain, are cancelled and
	// give none. The channel closes when none is running any more and
	// every result given is in results().
	drain() <-chan struct{}
	// close stops the workers. Results not yet received are discarded.
	close()
}

// newExecutor returns the executor that opt asks for.
func newExecutor(ctx context.Context, c *Campaign, space coverage.Space, opt Options) (executor, error) {
	if opt.Executor != nil {
		h := c.Header(opt.Subject.Name())
		x, err := opt.Executor(ctx, h)
		if err != nil {
			return nil, fmt.Errorf("executor: %w", err)
		}
		return newExternal(x, space, opt.IsolateOptions.FirstWatchdog()), nil
	}
	if opt.Isolate {
		return newIsolated(ctx, c, opt), nil
	}
	return newInProcess(ctx, c, space, opt.Subject, opt.Workers, opt.IsolateOptions.FirstWatchdog()), nil
}

// Executor runs simulations somewhere else than this process's own
// workers (act/cluster: on worker hosts fed through NATS JetStream). Like
// the built-in executors it delivers exactly one Result per dispatched
// configuration index, in any order; Run merges them in index order, so
// where they ran does not change any result.
type Executor interface {
	// Dispatch queues configurations base, base+1, …; it must not block
	// for long. gs belongs to the executor.
	Dispatch(base int, gs []Config)
	// Results delivers the results, each Index once. States is a
	// coverage.Batch encoding (coverage.Batch.MarshalBinary), or Decoded
	// holds it decoded (then Run hands the batch back through Recycle
	// once merged, if the Executor is a BatchRecycler); a Result with a
	// Fault or StatesDropped may have none.
	Results() <-chan Result
	// Failed delivers an error that stops the campaign.
	Failed() <-chan error
	// Merged says that every configuration below upto is merged: its
	// results may be acknowledged and dropped (a checkpoint may not
	// cover them yet; a resume then runs them again).
	Merged(upto int)
	// Close stops the executor.
	Close()
}

// BatchRecycler is an Executor that delivers decoded batches
// (Result.Decoded) and takes them back for reuse once merged.
type BatchRecycler interface {
	Recycle(b *coverage.Batch)
}

// external adapts an Executor: it decodes the states of each Result that
// the executor did not decode.
type external struct {
	x       Executor
	space   coverage.Space
	res     chan result
	fail    chan error
	batches chan *coverage.Batch
	done    chan struct{}
	wg      sync.WaitGroup
	// watchdog bounds the drain: what runs elsewhere cannot be
	// cancelled from here, so drained closes one watchdog after drain.
	watchdog  time.Duration
	drained   chan struct{}
	drainOnce sync.Once
}

func newExternal(x Executor, space coverage.Space, watchdog time.Duration) *external {
	e := &external{x: x, space: space, res: make(chan result, 2*batchSize), fail: make(chan error, 1),
		batches: make(chan *coverage.Batch, 2*batchSize), done: make(chan struct{}), watchdog: watchdog, drained: make(chan struct{})}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		for {
			select {
			case m, ok := <-x.Results():
				if !ok {
					return
				}
				var r result
				var err error
				if m.Decoded != nil {
					r, err = fromMessage(m, nil)
				} else if r, err = fromMessage(m, e.batch()); err != nil {
					// The executor validates what it delivers: this is a bug.
					select {
					case e.fail <- fmt.Errorf("configuration %d: %w", m.Index, err):
					default:
					}
					return
				}
				select {
				case e.res <- r:
				case <-e.done:
					return
				}
			case err := <-x.Failed():
				select {
				case e.fail <- err:
				default:
				}
				return
			case <-e.done:
				return
			}
		}
	}()
	return e
}

func (e *external) batch() *coverage.Batch {
	select {
	case b := <-e.batches:
		return b
	default:
		b, _ := coverage.NewBatch(e.space) // validated with the store
		return b
	}
}

func (e *external) dispatch(base int, gs []Config) { e.x.Dispatch(base, gs) }
func (e *external) results() <-chan result         { return e.res }
func (e *external) failed() <-chan error           { return e.fail }
func (e *external) merged(upto int)                { e.x.Merged(upto) }

func (e *external) drain() <-chan struct{} {
	e.drainOnce.Do(func() { time.AfterFunc(e.watchdog, func() { close(e.drained) }) })
	return e.drained
}

func (e *external) recycle(b *coverage.Batch) {
	if rc, ok := e.x.(BatchRecycler); ok {
		rc.Recycle(b)
		return
	}
	select {
	case e.batches <- b:
	default:
	}
}

func (e *external) close() {
	close(e.done)
	e.x.Close()
	e.wg.Wait()
}

// inProcess runs simulations on goroutines of this process. A panic on the
// simulating goroutine is the subject's "panic" fault; a hang or a panic on
// another goroutine takes the campaign down (use the isolated executor).
type inProcess struct {
	cancel  context.CancelFunc
	jobs    chan job
	res     chan result
	batches chan *coverage.Batch // merged and reset, for reuse
	queue   sync.WaitGroup       // feeders
	workers sync.WaitGroup
	done    chan struct{}
	// The drain: draining is closed by drain, drained once the workers
	// have stopped; cancelRuns cancels the simulations running one
	// watchdog after it (a subject that checks its context stops).
	draining   chan struct{}
	drained    chan struct{}
	drainOnce  sync.Once
	cancelRuns context.CancelFunc
	watchdog   time.Duration
	abandoned  atomic.Bool // the drain gave up waiting for the workers
}

func newInProcess(ctx context.Context, c *Campaign, space coverage.Space, subj netenv.Subject, n int, watchdog time.Duration) *inProcess {
	ctx, cancel := context.WithCancel(ctx)
	runCtx, cancelRuns := context.WithCancel(ctx)
	e := &inProcess{cancel: cancel, jobs: make(chan job), res: make(chan result, 2*batchSize),
		batches: make(chan *coverage.Batch, 2*batchSize), done: make(chan struct{}),
		draining: make(chan struct{}), drained: make(chan struct{}), cancelRuns: cancelRuns, watchdog: watchdog}
	for range n {
		e.workers.Add(1)
		go func() {
			defer e.workers.Done()
			wk := newWorker(c, space, subj, e.batches)
			for {
				var j job
				select {
				case next, ok := <-e.jobs:
					if !ok {
						return
					}
					j = next
				case <-e.draining:
					return
				}
				select {
				case <-e.draining:
					return // taken as the drain began: not started
				default:
				}
				r := wk.run(runCtx, j)
				if runCtx.Err() != nil {
					return // cancelled: no result
				}
				select {
				case e.res <- r:
				case <-e.done:
				}
			}
		}()
	}
	return e
}

func (e *inProcess) drain() <-chan struct{} {
	e.drainOnce.Do(func() {
		close(e.draining)
		ended := make(chan struct{})
		go func() {
			e.workers.Wait()
			close(ended)
		}()
		go func() {
			t := time.NewTimer(e.watchdog)
			defer t.Stop()
			select {
			case <-ended:
			case <-t.C:
				// A simulation that ignores its context (a CCAI that
				// loops) cannot be stopped in this process: it is
				// abandoned without a result, so that the campaign
				// still ends one watchdog after its Duration.
				e.cancelRuns()
				e.abandoned.Store(true)
			}
			close(e.drained)
		}()
	})
	return e.drained
}

func (e *inProcess) dispatch(base int, gs []Config) {
	e.queue.Add(1)
	go func() {
		defer e.queue.Done()
		for i, g := range gs {
			select {
			case e.jobs <- job{idx: base + i, g: g}:
			case <-e.done:
				return
			}
		}
	}()
}

func (e *inProcess) results() <-chan result { return e.res }

func (e *inProcess) failed() <-chan error { return nil }

func (e *inProcess) recycle(b *coverage.Batch) {
	select {
	case e.batches <- b:
	default:
	}
}

func (e *inProcess) close() {
	e.cancel()
	e.cancelRuns()
	close(e.done)
	e.queue.Wait()
	close(e.jobs)
	if !e.abandoned.Load() {
		e.workers.Wait()
	}
}

// StoreParts is an Executor whose worker hosts send each simulation's
// states to store parts kept elsewhere (coverage/parts.go: the visits'
// counts and pools, the work of every visit) instead of in its Result:
// Run keeps the store's index (the regions, fed with the states the
// parts found new) and merges through it. Results are those of a whole
// store.
type StoreParts interface {
	// PoolSource answers the index's questions about pools, as of the
	// last merge.
	coverage.PoolSource
	// StoreParts is the number of parts.
	StoreParts() int
	// LoadParts gives the parts their contents before anything is merged,
	// each as the source of its encoding (coverage.Store.WriteTo of part j,
	// as coverage.ReadSplit and coverage.SplitEncoded give them): empty
	// parts for a new campaign, a checkpoint's for a resumed one; part 0
	// keeps at most outOfRange distinct states outside S (0: all).
	LoadParts(ctx context.Context, parts []coverage.PartSource, outOfRange int) error
	// MergeParts has every part merge its shares of items, in order, and
	// returns news[i][j], part j's news of item i. When every part merged
	// but one is at its memory cap, it returns the news and an error
	// wrapping ErrStoreCapped: Run ends the campaign after the batch,
	// with its checkpoint, and returns the error.
	MergeParts(ctx context.Context, items []PartItem) ([][]coverage.PartNews, error)
	// SnapshotParts has the parts snapshot themselves as merged so far,
	// for a checkpoint, and returns each snapshot's source: its size, and
	// its encoding (coverage.Store.WriteTo) to read once, whose reader
	// checks it against the SHA-256 the part answered. ctx bounds the reads
	// too.
	SnapshotParts(ctx context.Context) ([]coverage.PartSource, error)
}

// ErrStoreCapped says that a store part reached its memory cap: the
// campaign stopped after a checkpoint, and continues with --resume once
// there are more parts or a larger cap.
var ErrStoreCapped = errors.New("a store part is at its memory cap")

// ErrIndexCapped says that the coordinator's index of a store split into
// parts went over the store's share of the campaign's memory budget (a
// split store cannot coarsen): the campaign stopped after a checkpoint,
// and continues with --resume and a larger budget. It is an
// ErrStoreCapped too.
var ErrIndexCapped error = indexCapped{}

type indexCapped struct{}

func (indexCapped) Error() string {
	return "the coordinator's index of the store parts is over the store's share of the memory budget"
}

func (indexCapped) Is(target error) bool { return target == ErrStoreCapped }

// PartItem is one simulation for the store parts to merge: either a
// configuration whose result's states went to the parts (Index, Shares:
// Result.Shares), or states this process has (Local: the symbolic step's
// branches).
type PartItem struct {
	Config uint64 // the store's config id
	Index  int
	Shares [][]byte
	Local  *coverage.Batch
}

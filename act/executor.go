package act

import (
	"context"
	"sync"

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
	// close stops the workers. Results not yet received are discarded.
	close()
}

// newExecutor returns the executor that opt asks for.
func newExecutor(ctx context.Context, c *Campaign, space coverage.Space, opt Options) executor {
	if opt.Isolate {
		return newIsolated(ctx, c, opt)
	}
	return newInProcess(ctx, c, space, opt.Subject, opt.Workers)
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
}

func newInProcess(ctx context.Context, c *Campaign, space coverage.Space, subj netenv.Subject, n int) *inProcess {
	ctx, cancel := context.WithCancel(ctx)
	e := &inProcess{cancel: cancel, jobs: make(chan job), res: make(chan result, 2*batchSize),
		batches: make(chan *coverage.Batch, 2*batchSize), done: make(chan struct{})}
	for range n {
		e.workers.Add(1)
		go func() {
			defer e.workers.Done()
			wk := newWorker(c, space, subj, e.batches)
			for j := range e.jobs {
				r := wk.run(ctx, j)
				select {
				case e.res <- r:
				case <-e.done:
				}
			}
		}()
	}
	return e
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
	close(e.done)
	e.queue.Wait()
	close(e.jobs)
	e.workers.Wait()
}

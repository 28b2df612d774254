package act

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/coverage"
)

// WorkerPool runs Work messages in supervised worker processes (the
// isolated executor of a local campaign, with its watchdog, memory limit
// and crash detection): the engine of a remote worker host (act/cluster),
// which takes Work from a queue instead of from Run. A hang, an OOM or a
// crash of a worker process is the Result (a fault) of the configuration
// it was running, exactly as in a local isolated campaign.
type WorkerPool struct {
	e      *isolated
	header CampaignHeader
	space  coverage.Space
	mu     sync.Mutex
	wait   map[int]chan result // configuration index → the Run waiting for it
	done   chan struct{}
	wg     sync.WaitGroup
}

// NewWorkerPool starts a pool of procs worker processes for the campaign
// of h. It refuses a header whose Program is not this build's.
func NewWorkerPool(ctx context.Context, h CampaignHeader, opt IsolateOptions, procs int, log *slog.Logger) (*WorkerPool, error) {
	if h.Program != corpus.ProgramVersion() {
		return nil, fmt.Errorf("the campaign was started by build %q and this worker is build %q: its results would not replay from the coordinator's seeds", h.Program, corpus.ProgramVersion())
	}
	c, err := parseCampaign(h.Path, h.Source, h.LinkTraces)
	if err != nil {
		return nil, fmt.Errorf("campaign: %w", err)
	}
	// The pool's results keep their worker process's encoding of the
	// states: Run passes it on rather than encoding them again.
	p := &WorkerPool{e: startIsolated(ctx, h, c.Space, opt, max(procs, 1), log, true), header: h, space: c.Space,
		wait: map[int]chan result{}, done: make(chan struct{})}
	p.wg.Add(1)
	go p.route()
	return p, nil
}

// route hands each result to the Run waiting for its index.
func (p *WorkerPool) route() {
	defer p.wg.Done()
	for {
		select {
		case r := <-p.e.res:
			p.mu.Lock()
			ch := p.wait[r.idx]
			delete(p.wait, r.idx)
			p.mu.Unlock()
			if ch != nil {
				ch <- r // buffered for the whole Work
			}
		case <-p.done:
			return
		}
	}
}

// Run runs the configurations of w, whose indices must be consecutive and
// not already running in this pool, and calls emit with each Result in
// index order (BatchID w.BatchID), its Decoded the states (valid until
// emit returns). It returns when all are emitted, when emit fails, or
// with the error that stopped the pool.
func (p *WorkerPool) Run(ctx context.Context, w Work, emit func(Result) error) error {
	if len(w.Items) == 0 {
		return nil
	}
	base := w.Items[0].Index
	gs := make([]Config, len(w.Items))
	ch := make(chan result, len(w.Items))
	p.mu.Lock()
	for i, it := range w.Items {
		if it.Index != base+i {
			p.mu.Unlock()
			return fmt.Errorf("work %d: configuration indices are not consecutive", w.BatchID)
		}
		if _, busy := p.wait[it.Index]; busy {
			p.mu.Unlock()
			return fmt.Errorf("work %d: configuration %d is already running", w.BatchID, it.Index)
		}
		gs[i] = it.Config
	}
	for _, it := range w.Items {
		p.wait[it.Index] = ch
	}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		for _, it := range w.Items {
			if p.wait[it.Index] == ch {
				delete(p.wait, it.Index)
			}
		}
		p.mu.Unlock()
	}()
	p.e.dispatch(base, gs)
	got := make([]*result, len(w.Items))
	next := 0
	for next < len(got) {
		select {
		case r := <-ch:
			got[r.idx-base] = &r
			for next < len(got) && got[next] != nil {
				r := got[next]
				m, err := r.message(w.BatchID)
				m.Decoded = r.batch // until emit returns
				if err == nil {
					err = emit(m)
				}
				r.batch.Reset()
				p.e.recycle(r.batch)
				got[next] = nil
				if err != nil {
					return err
				}
				next++
			}
		case err := <-p.e.fail:
			p.e.failWith(err) // keep it for the other Runs
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Space is the campaign's state space.
func (p *WorkerPool) Space() coverage.Space { return p.space }

// Close stops the worker processes.
func (p *WorkerPool) Close() {
	close(p.done)
	p.e.close()
	p.wg.Wait()
}

package act

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/coverage"
	"github.com/actfuzz/actfuzz/netenv"
)

// IsolateOptions configure the supervision of worker processes.
type IsolateOptions struct {
	// Watchdog is the time after which a simulation counts as hung, in
	// the worker's unstarved time (procClock: wall time less the time it
	// waited for a CPU, so that a loaded machine does not make hangs);
	// 0: 60 s or 50× the median simulation time, whichever is larger,
	// and at least RunWall + 60 s.
	Watchdog time.Duration
	// RunWall is the wall-clock time a simulation of the subject may take
	// by design (netenv.Capabilities.MaxWall of a real-time subject: the
	// quic subject's runs last up to its 2-minute time cap); without an
	// explicit Watchdog the watchdog is at least RunWall + 60 s, so that a
	// run that ends at its own cap is not taken for a hang. Run sets it
	// from the subject.
	RunWall time.Duration
	// WorkerMemory is the memory limit of a worker process in bytes; 0:
	// 1 GB.
	WorkerMemory int64
	// WorkerCommand is the worker program and its leading arguments; nil:
	// this executable with the argument "worker" (`actfuzz worker`). The
	// supervisor appends --memory-limit.
	WorkerCommand []string
}

const (
	defaultWatchdog = 60 * time.Second
	watchdogFactor  = 50 // × the median simulation time
	rssPoll         = 100 * time.Millisecond
	// helloTimeout and deathWait are in the worker's unstarved time:
	// how long it may take to start, and to exit once its output ended.
	helloTimeout = 30 * time.Second
	deathWait    = 5 * time.Second
)

// ForSubject returns o with RunWall at least caps.MaxWall: what a
// subject's run may take by design.
func (o IsolateOptions) ForSubject(caps netenv.Capabilities) IsolateOptions {
	o.RunWall = max(o.RunWall, caps.MaxWall)
	return o
}

// FirstWatchdog is the explicit Watchdog, else the default before any
// simulation time is known: what bounds a drain and a symbolic window.
func (o IsolateOptions) FirstWatchdog() time.Duration {
	if o.Watchdog > 0 {
		return o.Watchdog
	}
	return o.defaultWatchdog(0)
}

// defaultWatchdog is the watchdog without an explicit one, given the
// median simulation time: 60 s or 50× the median, and never below
// RunWall + 60 s.
func (o IsolateOptions) defaultWatchdog(median time.Duration) time.Duration {
	// RunWall ≥ 0, so the last term is never below the 60 s floor.
	return max(watchdogFactor*median, o.RunWall+defaultWatchdog)
}

func (o IsolateOptions) memory() int64 {
	if o.WorkerMemory > 0 {
		return o.WorkerMemory
	}
	return defaultWorkerMemory
}

func (o IsolateOptions) command() ([]string, error) {
	if len(o.WorkerCommand) > 0 {
		return o.WorkerCommand, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("worker executable: %w", err)
	}
	return []string{exe, "worker"}, nil
}

// isolated is the executor of worker processes. Each of Options.Workers
// supervisors owns one process at a time and feeds it chunks of a batch
// as Work messages. It forwards each Result as it comes, and watches the
// process: a simulation with no Result within the watchdog (unstarved
// time), a process over its memory limit (its own heap check exits with
// ExitWorkerOOM, also at the end of each simulation; the supervisor polls
// VmRSS) and a process that dies are faults (hang, oom, crash). The
// process is killed, and the rest of the chunk goes to a fresh process.
// A fault is charged only to a configuration that a fresh process was
// running first: otherwise an earlier configuration may have caused it
// (a goroutine or memory it left behind, a process that died after its
// result), so the configuration runs again, first in a fresh process,
// and what it does there is its result. Each index is forwarded once,
// so nothing is merged twice, and results do not depend on where, when
// or after what they ran.
type isolated struct {
	ctx     context.Context
	cancel  context.CancelFunc
	opt     IsolateOptions
	space   coverage.Space
	header  CampaignHeader
	work    chan []job
	res     chan result
	fail    chan error
	batches chan *coverage.Batch
	queue   sync.WaitGroup
	sups    sync.WaitGroup
	times   simTimes
	nextID  uint64
	// draining is closed by drain; drained once every supervisor has
	// stopped after it. stopped is done one watchdog after the drain
	// (or when ctx is): what still runs then is cancelled.
	draining  chan struct{}
	drained   chan struct{}
	drainOnce sync.Once
	stopped   context.Context
	stop      context.CancelFunc
	idMu      sync.Mutex
	log       *slog.Logger
	// keepEncoded: results keep their states' encoding (result.encoded)
	// besides the decoded batch, for a WorkerPool to pass on.
	keepEncoded bool
}

func newIsolated(ctx context.Context, c *Campaign, opt Options) executor {
	h := c.Header(opt.Subject.Name())
	return startIsolated(ctx, h, c.Space, opt.IsolateOptions, opt.Workers, opt.Logger, false)
}

func startIsolated(ctx context.Context, h CampaignHeader, space coverage.Space, opt IsolateOptions, workers int, log *slog.Logger, keepEncoded bool) *isolated {
	ctx, cancel := context.WithCancel(ctx)
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	e := &isolated{ctx: ctx, cancel: cancel, opt: opt, space: space, header: h, log: log,
		work: make(chan []job), res: make(chan result, 2*batchSize), fail: make(chan error, 1),
		batches: make(chan *coverage.Batch, 2*batchSize), keepEncoded: keepEncoded,
		draining: make(chan struct{}), drained: make(chan struct{})}
	e.stopped, e.stop = context.WithCancel(ctx)
	for range workers {
		e.sups.Add(1)
		go e.supervise()
	}
	return e
}

func (e *isolated) dispatch(base int, gs []Config) {
	// Chunks small enough to balance the load of a batch over the workers.
	n := max(1, (len(gs)+3)/4)
	e.queue.Add(1)
	go func() {
		defer e.queue.Done()
		for lo := 0; lo < len(gs); lo += n {
			var chunk []job
			for i := lo; i < min(lo+n, len(gs)); i++ {
				chunk = append(chunk, job{idx: base + i, g: gs[i]})
			}
			select {
			case e.work <- chunk:
			case <-e.ctx.Done():
				return
			}
		}
	}()
}

func (e *isolated) results() <-chan result { return e.res }

func (e *isolated) failed() <-chan error { return e.fail }

func (e *isolated) recycle(b *coverage.Batch) {
	select {
	case e.batches <- b:
	default:
	}
}

func (e *isolated) close() {
	e.cancel()
	e.stop()
	e.queue.Wait()
	e.sups.Wait()
}

func (e *isolated) batch() *coverage.Batch {
	select {
	case b := <-e.batches:
		return b
	default:
		b, _ := coverage.NewBatch(e.space) // validated with the store
		return b
	}
}

func (e *isolated) failWith(err error) {
	select {
	case e.fail <- err:
	default:
	}
	e.cancel()
}

// emit forwards a result; false when the executor is closing.
func (e *isolated) emit(r result) bool {
	select {
	case e.res <- r:
		return true
	case <-e.ctx.Done():
		return false
	}
}

func (e *isolated) watchdog() time.Duration {
	if e.opt.Watchdog > 0 {
		return e.opt.Watchdog
	}
	return e.opt.defaultWatchdog(e.times.median())
}

// errStopped says that a supervisor stopped because of drain: the
// simulation it was running, if any, has no result.
var errStopped = errors.New("stopped by the drain")

func (e *isolated) supervise() {
	defer e.sups.Done()
	var p *proc
	defer func() {
		if p != nil {
			p.kill()
		}
	}()
	for {
		var chunk []job
		select {
		case chunk = <-e.work:
		case <-e.ctx.Done():
			return
		case <-e.draining:
			return
		}
		var ok bool
		if p, ok = e.runAll(p, chunk); !ok {
			return
		}
	}
}

// runAll runs chunk to its end in p and the processes that replace it,
// and returns the process left (nil: none); false when the supervisor
// stops (the executor's failure, close or drain).
//
// A fault is charged only to a configuration that a fresh process ran
// first. In a process that ran others before, the fault may be theirs: a
// goroutine or memory one left behind, a process that died after its
// last result and is found dead only now, RSS not yet given back. So the
// configuration runs again, first in a fresh process, and what it does
// there is its result: the verdict is the configuration's own, whatever
// ran before it, at any worker count or chunking. A fault that no
// configuration makes alone is charged to none.
func (e *isolated) runAll(p *proc, chunk []job) (*proc, bool) {
	suspect := -1 // the configuration running again alone (-1: none)
	for len(chunk) > 0 {
		if e.isDraining() {
			return p, false // nothing starts after the drain
		}
		if p == nil {
			var err error
			if p, err = e.start(); err != nil {
				if e.ctx.Err() == nil && e.stopped.Err() == nil {
					e.failWith(err)
				}
				return nil, false
			}
			if e.isDraining() {
				return p, false
			}
		}
		done, fault, err := e.runChunk(p, chunk)
		if done > 0 && chunk[0].idx == suspect {
			e.log.Info("worker fault not made by the configuration alone: charged to none (state left in the process by earlier configurations)", "config", suspect)
		}
		if done > 0 {
			suspect = -1
		}
		chunk = chunk[done:]
		if p.gone && fault == nil && err == nil {
			p.kill()
			p = nil
		}
		switch {
		case err != nil:
			if e.ctx.Err() == nil && !errors.Is(err, errStopped) {
				e.failWith(err)
			}
			return p, false
		case fault != nil:
			pid, fresh := p.pid(), p.ran == 0
			now := time.Now()
			p.clock.poll(now)
			ran := p.clock.elapsed(now).Round(time.Millisecond)
			p.kill()
			p = nil
			if !fresh {
				if e.isDraining() {
					return nil, false // no run alone after the drain: no result
				}
				e.log.Info("worker fault after other configurations: running the configuration again alone before charging it", "config", chunk[0].idx, "kind", fault.Kind, "pid", pid, "unstarved", ran)
				suspect = chunk[0].idx
				continue
			}
			e.log.Warn("worker fault", "config", chunk[0].idx, "kind", fault.Kind, "pid", pid, "unstarved", ran, "detail", fault.Detail)
			if !e.emit(result{idx: chunk[0].idx, batch: e.batch(), fault: fault}) {
				return nil, false
			}
			suspect = -1
			chunk = chunk[1:]
		}
	}
	return p, true
}

// drain stops the start of simulations (Run at the end of
// Options.Duration): each one running ends with its result or its own
// fault, or is cancelled without a result once one watchdog has passed
// since the drain; a fault that needs a run alone to be charged (see
// runAll) is not charged. The channel closes when every supervisor has
// stopped, so every result they gave is in results().
func (e *isolated) drain() <-chan struct{} {
	e.drainOnce.Do(func() {
		close(e.draining)
		time.AfterFunc(e.watchdog(), e.stop)
		go func() {
			e.sups.Wait()
			close(e.drained)
		}()
	})
	return e.drained
}

func (e *isolated) isDraining() bool {
	select {
	case <-e.draining:
		return true
	default:
		return false
	}
}

// runChunk sends chunk to p and forwards its results. It returns how many
// configurations completed and, if p failed on the next one, the fault
// (errStopped: the drain stopped it).
//
// The watchdog runs on p's unstarved time (procclock.go): the time it ran
// or slept, not the time it waited for a CPU on a loaded machine, so a
// starved simulation is not taken for a hung one and a memory hog that a
// loaded machine slows reaches its limit before the watchdog, as it does
// on an idle one. Each simulation's time starts when the result before
// it arrives, and stops while a result is arriving or waits to be read:
// a worker blocked writing to a supervisor that is starved or busy
// forwarding is not simulating.
func (e *isolated) runChunk(p *proc, chunk []job) (int, *corpus.Finding, error) {
	e.idMu.Lock()
	e.nextID++
	id := e.nextID
	e.idMu.Unlock()
	w := Work{Proto: ProtocolVersion, Campaign: e.header, BatchID: id}
	for _, j := range chunk {
		w.Items = append(w.Items, WorkItem{Index: j.idx, Config: j.g})
	}
	p.clock.next(time.Now(), 0)
	if err := p.send(w); err != nil {
		return 0, p.death(e.opt.memory()), nil
	}
	wd := e.watchdog()
	poll := time.NewTicker(rssPoll)
	defer poll.Stop()
	done := 0
	// killed is the fault for which p was killed. The results p wrote
	// before are still read: they are complete, and the fault belongs to
	// the configuration after them, whatever the timing.
	var killed *corpus.Finding
	kill := func(f *corpus.Finding) {
		killed = f
		_ = p.cmd.Process.Kill()
		poll.Stop()
	}
	for {
		select {
		case m, ok := <-p.msgs:
			if !ok {
				p.gone = true
				switch {
				case done == len(chunk):
					return done, nil, nil // died after its last result: the next chunk restarts it
				case killed != nil:
					return done, killed, nil
				case e.ctx.Err() != nil:
					return done, nil, e.ctx.Err() // stopping: not a fault
				}
				return done, p.death(e.opt.memory()), nil
			}
			end, err := e.received(p, chunk, done, id, m, killed != nil)
			if err != nil || end {
				return done, nil, err
			}
			if _, isResult := m.(Result); !isResult {
				continue
			}
			done++
			if killed != nil {
				continue
			}
			if e.isDraining() && done < len(chunk) {
				return done, nil, errStopped // the next one started after the drain
			}
			wd = e.watchdog()
		case now := <-poll.C:
			p.clock.poll(now)
			// A message on its way defers the verdict, for at most one
			// more watchdog (a frame torn by a CCAI that writes to
			// stdout, then hangs, must still end as a hang).
			if d := p.clock.elapsed(now); d >= wd && (!p.arrivingOrQueued() || d >= 2*wd) {
				kill(&corpus.Finding{Kind: corpus.FaultHang, Detail: fmt.Sprintf("no result within the watchdog of %v (unstarved time: the worker's wall time less its waits for a CPU); worker killed", wd)})
				continue
			}
			if rss, err := p.rss(); err == nil && rss > e.opt.memory() {
				kill(&corpus.Finding{Kind: corpus.FaultOOM, Detail: fmt.Sprintf("worker RSS %d bytes over the memory limit of %d bytes; worker killed", rss, e.opt.memory())})
			}
		case <-e.stopped.Done():
			if e.ctx.Err() != nil {
				return done, nil, e.ctx.Err()
			}
			return done, nil, errStopped // cancelled: one watchdog after the drain
		}
	}
}

// received handles message m of p, the reply to chunk after done
// results, in batch id: a Result is forwarded (unless the process was
// killed: its results are read to find where it stopped, and forwarded
// too, being complete), and starts the clock of the next simulation.
// end: the chunk is complete (Done).
func (e *isolated) received(p *proc, chunk []job, done int, id uint64, m Message, killed bool) (end bool, err error) {
	switch m := m.(type) {
	case Result:
		if done >= len(chunk) || m.Index != chunk[done].idx || m.BatchID != id {
			return false, fmt.Errorf("worker %d: result for configuration %d, expected %d", p.pid(), m.Index, chunk[min(done, len(chunk)-1)].idx)
		}
		if !killed {
			e.times.add(p.clock.next(time.Now(), rssPoll))
		}
		// Decoded even when kept encoded: the decoding checks the
		// worker process's states before a host sends them.
		r, err := fromMessage(m, e.batch())
		if err != nil {
			return false, fmt.Errorf("worker %d: configuration %d: %w", p.pid(), m.Index, err)
		}
		if e.keepEncoded && len(m.States) > 0 {
			r.encoded = m.States
		}
		if !e.emit(r) {
			return false, e.ctx.Err()
		}
		p.ran++
		return false, nil
	case Done:
		if killed {
			return false, nil
		}
		if done != len(chunk) {
			return false, fmt.Errorf("worker %d: done after %d of %d results", p.pid(), done, len(chunk))
		}
		return true, nil
	case Failure:
		return false, fmt.Errorf("worker %d: %s", p.pid(), m.Text)
	default:
		return false, fmt.Errorf("worker %d: unexpected %T", p.pid(), m)
	}
}

// start launches a worker process and waits for its Hello; the drain's
// end (stopped) abandons the wait.
func (e *isolated) start() (*proc, error) {
	cmd, err := e.opt.command()
	if err != nil {
		return nil, err
	}
	return startProc(e.stopped, append(slices.Clip(cmd), "--memory-limit", strconv.FormatInt(e.opt.memory(), 10)))
}

// simTimes keeps recent simulation wall times for the watchdog's median.
type simTimes struct {
	mu     sync.Mutex
	recent []time.Duration
	next   int
	med    time.Duration
	adds   int
}

func (s *simTimes) add(d time.Duration) {
	const keep = 1001
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.recent) < keep {
		s.recent = append(s.recent, d)
	} else {
		s.recent[s.next] = d
		s.next = (s.next + 1) % keep
	}
	if s.adds++; s.adds%64 == 1 || len(s.recent) < 64 {
		sorted := slices.Clone(s.recent)
		slices.Sort(sorted)
		s.med = sorted[len(sorted)/2]
	}
}

func (s *simTimes) median() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.med
}

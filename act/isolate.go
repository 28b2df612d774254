package act

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/coverage"
)

// IsolateOptions configure the supervision of worker processes.
type IsolateOptions struct {
	// Watchdog is the time after which a simulation counts as hung, in
	// the worker's unstarved time (procClock: wall time less the time it
	// waited for a CPU, so that a loaded machine does not make hangs);
	// 0: 60 s or 50× the median simulation time, whichever is larger.
	Watchdog time.Duration
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
	helloTimeout    = 30 * time.Second
)

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
	// stopped after it. capAt is when the drain cancels what still runs.
	draining  chan struct{}
	drained   chan struct{}
	drainOnce sync.Once
	capAt     time.Time
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
	return max(defaultWatchdog, watchdogFactor*e.times.median())
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
	// suspect is the configuration being re-run alone, in a fresh
	// process, after its fault in a process that had run others first
	// (-1: none).
	suspect := -1
	for {
		var chunk []job
		select {
		case chunk = <-e.work:
		case <-e.ctx.Done():
			return
		case <-e.draining:
			return
		}
		for len(chunk) > 0 {
			if e.isDraining() {
				return // nothing starts after the drain
			}
			if p == nil {
				var err error
				if p, err = e.start(); err != nil {
					if e.ctx.Err() == nil {
						e.failWith(err)
					}
					return
				}
				if e.isDraining() {
					return
				}
			}
			done, fault, err := e.runChunk(p, chunk)
			if done > 0 && chunk[0].idx == suspect {
				e.log.Info("worker fault not reproduced by the configuration alone: charged to none (state left in the process by earlier configurations)", "config", suspect)
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
				return
			case fault != nil:
				pid, fresh := p.pid(), p.ran == 0
				now := time.Now()
				p.clock.poll(now)
				ran := p.clock.elapsed(now).Round(time.Millisecond)
				p.kill()
				p = nil
				if !fresh {
					// The fault may be the doing of a configuration the
					// process ran before (a goroutine it left, memory it
					// kept) or show late (a process that died between
					// two chunks): the configuration is run again first
					// in a fresh process, whose verdict is its own.
					if e.isDraining() {
						return // no re-run after the drain: it stays without result
					}
					e.log.Info("worker fault after other configurations: running the configuration again alone before charging it", "config", chunk[0].idx, "kind", fault.Kind, "pid", pid, "unstarved", ran)
					suspect = chunk[0].idx
					continue
				}
				suspect = -1
				e.log.Warn("worker fault", "config", chunk[0].idx, "kind", fault.Kind, "pid", pid, "unstarved", ran, "detail", fault.Detail)
				if !e.emit(result{idx: chunk[0].idx, batch: e.batch(), fault: fault}) {
					return
				}
				chunk = chunk[1:]
			}
		}
	}
}

// drain stops the start of simulations (Run at the end of
// Options.Duration): each one running ends with its result or its own
// fault, or is cancelled without a result once one watchdog has passed
// since the drain; a fault that needs a run alone to be charged (see
// supervise) is not charged. The channel closes when every supervisor
// has stopped, so every result they gave is in results().
func (e *isolated) drain() <-chan struct{} {
	e.drainOnce.Do(func() {
		e.capAt = time.Now().Add(e.watchdog()) // read after draining is closed
		close(e.draining)
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
// The watchdog runs on p's unstarved time (procClock): the time it ran
// or slept, not the time it waited for a CPU on a loaded machine, so a
// starved simulation is not taken for a hung one and a memory hog that a
// loaded machine slows reaches its limit before the watchdog, as it does
// on an idle one.
func (e *isolated) runChunk(p *proc, chunk []job) (int, *corpus.Finding, error) {
	e.idMu.Lock()
	e.nextID++
	id := e.nextID
	e.idMu.Unlock()
	w := Work{Proto: ProtocolVersion, Campaign: e.header, BatchID: id}
	for _, j := range chunk {
		w.Items = append(w.Items, WorkItem{Index: j.idx, Config: j.g})
	}
	now := time.Now()
	p.clock.next(now, 0)
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
			switch m := m.(type) {
			case Result:
				if done >= len(chunk) || m.Index != chunk[done].idx || m.BatchID != id {
					return done, nil, fmt.Errorf("worker %d: result for configuration %d, expected %d", p.pid(), m.Index, chunk[min(done, len(chunk)-1)].idx)
				}
				// Decoded even when kept encoded: the decoding checks
				// the worker process's states before a host sends them.
				r, err := fromMessage(m, e.batch())
				if err != nil {
					return done, nil, fmt.Errorf("worker %d: configuration %d: %w", p.pid(), m.Index, err)
				}
				if e.keepEncoded && len(m.States) > 0 {
					r.encoded = m.States
				}
				if !e.emit(r) {
					return done, nil, e.ctx.Err()
				}
				done++
				p.ran++
				if killed != nil {
					continue
				}
				if e.isDraining() && done < len(chunk) {
					return done, nil, errStopped // the next one started after the drain
				}
				e.times.add(p.clock.next(time.Now(), rssPoll))
				wd = e.watchdog()
			case Done:
				if killed != nil {
					continue
				}
				if done != len(chunk) {
					return done, nil, fmt.Errorf("worker %d: done after %d of %d results", p.pid(), done, len(chunk))
				}
				return done, nil, nil
			case Failure:
				return done, nil, fmt.Errorf("worker %d: %s", p.pid(), m.Text)
			default:
				return done, nil, fmt.Errorf("worker %d: unexpected %T", p.pid(), m)
			}
		case now := <-poll.C:
			p.clock.poll(now)
			if d := p.clock.elapsed(now); d >= wd {
				kill(&corpus.Finding{Kind: corpus.FaultHang, Detail: fmt.Sprintf("no result within the watchdog of %v (unstarved time: the worker's wall time less its waits for a CPU); worker killed", wd)})
				continue
			}
			if rss, err := p.rss(); err == nil && rss > e.opt.memory() {
				kill(&corpus.Finding{Kind: corpus.FaultOOM, Detail: fmt.Sprintf("worker RSS %d bytes over the limit of %d bytes; worker killed", rss, e.opt.memory())})
				continue
			}
			if e.isDraining() && !now.Before(e.capAt) {
				return done, nil, errStopped // cancelled: one watchdog after the drain
			}
		case <-e.ctx.Done():
			return done, nil, e.ctx.Err()
		}
	}
}

// start launches a worker process and waits for its Hello.
func (e *isolated) start() (*proc, error) {
	cmd, err := e.opt.command()
	if err != nil {
		return nil, err
	}
	return startProc(e.ctx, append(slices.Clip(cmd), "--memory-limit", strconv.FormatInt(e.opt.memory(), 10)))
}

// proc is one worker process.
type proc struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	bw     *bufio.Writer
	msgs   chan Message // closed when stdout ends
	stderr *tailBuffer
	waited chan struct{}
	werr   error
	gone   bool // its output ended
	// clock is its unstarved time (the watchdog's), ran the results it
	// gave: 0 while it has run nothing but the configuration in hand.
	clock *simClock
	ran   int
}

func startProc(ctx context.Context, argv []string) (*proc, error) {
	p := &proc{cmd: exec.Command(argv[0], argv[1:]...), msgs: make(chan Message, 16), stderr: &tailBuffer{max: 64 << 10}, waited: make(chan struct{})}
	p.cmd.Stderr = p.stderr
	orphanProof(p.cmd)
	var err error
	if p.in, err = p.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	// Our own pipe, not StdoutPipe: Wait closes StdoutPipe's read end as
	// soon as the process has exited, and Wait runs concurrently with the
	// reader below, so the last results a dying worker wrote (complete,
	// flushed) could be lost and its fault charged to a configuration it
	// had finished. This pipe ends only when the reader has read all.
	out, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	p.cmd.Stdout = outW
	if err := p.cmd.Start(); err != nil {
		out.Close()
		outW.Close()
		return nil, fmt.Errorf("starting worker %q: %w", argv[0], err)
	}
	outW.Close() // the worker holds its own copy
	p.bw = bufio.NewWriter(p.in)
	go func() {
		defer close(p.msgs)
		defer out.Close()
		br := bufio.NewReader(out)
		for {
			m, err := ReadMessage(br)
			if err != nil {
				return // EOF or a torn frame: the process is dying
			}
			p.msgs <- m
		}
	}()
	go func() { p.werr = p.cmd.Wait(); close(p.waited) }()
	select {
	case m, ok := <-p.msgs:
		h, isHello := m.(Hello)
		switch {
		case !ok:
			p.kill()
			return nil, fmt.Errorf("worker %q exited at start: %v: %s", argv[0], p.werr, p.stderr.String())
		case !isHello:
			p.kill()
			return nil, fmt.Errorf("worker %q: first message %T, want Hello", argv[0], m)
		case h.Proto != ProtocolVersion:
			p.kill()
			return nil, fmt.Errorf("worker %q speaks protocol %d, want %d", argv[0], h.Proto, ProtocolVersion)
		}
	case <-time.After(helloTimeout):
		p.kill()
		return nil, fmt.Errorf("worker %q: no Hello within %v", argv[0], helloTimeout)
	case <-ctx.Done():
		p.kill()
		return nil, ctx.Err()
	}
	p.clock = newSimClock(p.pid(), time.Now())
	return p, nil
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

func (p *proc) send(m Message) error {
	if err := WriteMessage(p.bw, m); err != nil {
		return err
	}
	return p.bw.Flush()
}

// kill stops the process and reaps it.
func (p *proc) kill() {
	_ = p.cmd.Process.Kill()
	<-p.waited
	for range p.msgs { // let the reader finish
	}
}

// death waits for a process whose output ended and says why it died.
func (p *proc) death(limit int64) *corpus.Finding {
	select {
	case <-p.waited:
	case <-time.After(5 * time.Second):
		p.kill()
	}
	var ee *exec.ExitError
	if errors.As(p.werr, &ee) && ee.ExitCode() == ExitWorkerOOM {
		return &corpus.Finding{Kind: corpus.FaultOOM, Detail: fmt.Sprintf("worker over its memory limit of %d bytes: %s", limit, strings.TrimSpace(p.stderr.String()))}
	}
	return &corpus.Finding{Kind: corpus.FaultCrash, Detail: fmt.Sprintf("worker died (%v): %s", p.werr, panicText(p.stderr.String()))}
}

// rss is the resident set size of the process (Linux /proc).
func (p *proc) rss() (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.pid()))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) == 2 && f[1] == "kB" {
				kb, err := strconv.ParseInt(f[0], 10, 64)
				return kb << 10, err
			}
		}
	}
	return 0, errors.New("no VmRSS")
}

// panicText is the panic (or fatal error) of a Go process's stderr with
// the first lines of its stack, or the end of stderr.
func panicText(s string) string {
	const maxDetail = 4 << 10
	for _, mark := range []string{"panic: ", "fatal error: "} {
		if i := strings.Index(s, mark); i >= 0 {
			s = s[i:]
			break
		}
	}
	s = strings.TrimSpace(s)
	if len(s) > maxDetail {
		s = s[:maxDetail] + " …"
	}
	return s
}

// tailBuffer keeps the first and last bytes written to it (a process's
// stderr): the head holds a panic's message, the tail the latest output.
type tailBuffer struct {
	mu   sync.Mutex
	max  int
	head []byte
	tail []byte
}

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	written := len(b)
	if n := min(len(b), t.max-len(t.head)); n > 0 {
		t.head = append(t.head, b[:n]...)
		b = b[n:]
	}
	t.tail = append(t.tail, b...)
	if len(t.tail) > t.max {
		t.tail = append(t.tail[:0], t.tail[len(t.tail)-t.max:]...)
	}
	return written, nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.head) + string(t.tail)
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

package act

import (
	"bufio"
	"context"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/coverage"
	"github.com/actfuzz/actfuzz/netenv"
)

// ExitWorkerOOM is the exit status of a worker process whose heap went over
// its memory limit: the supervisor records an "oom" fault.
const ExitWorkerOOM = 86

// defaultWorkerMemory is the default memory limit of a worker process.
const defaultWorkerMemory = 1 << 30

// WorkerMain is the main of a worker process (`actfuzz worker`): it serves
// the worker protocol (protocol.go) on stdin and stdout until stdin ends.
// args are its flags: --memory-limit BYTES (debug.SetMemoryLimit, and the
// process exits with ExitWorkerOOM when its heap exceeds it). open maps a
// subject name to a subject. It returns the exit status: 0 at the end of
// the input, 2 for bad flags, 3 for an I/O or protocol error.
func WorkerMain(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, open func(name string) (netenv.Subject, error)) int {
	fs := flag.NewFlagSet("actfuzz worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	limit := fs.Int64("memory-limit", defaultWorkerMemory, "memory limit in `BYTES`; over it the worker exits with status 86")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *limit <= 0 || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "actfuzz worker: --memory-limit must be > 0 and there are no arguments")
		return 2
	}
	debug.SetMemoryLimit(*limit)
	// Ctrl-C reaches the whole process group: the coordinator, not the
	// worker, decides what becomes of the simulation being run (a result
	// cut short here could be merged before the coordinator sees it).
	signal.Ignore(os.Interrupt)
	go watchHeap(*limit, stderr)
	mem := &memCheck{limit: *limit, stderr: stderr}
	if err := serveWorker(ctx, stdin, stdout, open, mem); err != nil {
		fmt.Fprintf(stderr, "actfuzz worker: %v\n", err)
		return 3
	}
	return 0
}

// watchHeap exits the process when the heap exceeds limit.
func watchHeap(limit int64, stderr io.Writer) {
	for range time.Tick(20 * time.Millisecond) {
		checkHeap(limit, stderr)
	}
}

// checkHeap exits the process with ExitWorkerOOM when the heap (its
// objects, live or not yet swept) exceeds limit. A read of
// runtime/metrics does not stop the world.
func checkHeap(limit int64, stderr io.Writer) {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if h := s[0].Value.Uint64(); h > uint64(limit) {
		fmt.Fprintf(stderr, "actfuzz worker: heap of %d bytes over the memory limit of %d bytes\n", h, limit)
		os.Exit(ExitWorkerOOM)
	}
}

// memCheck accounts a worker's memory per simulation. The periodic checks
// (watchHeap here, the supervisor's RSS samples) see an overrun only if
// one falls while it lasts, and may see the one a simulation left (RSS
// not yet given back) once the next has begun: which configuration is
// charged, if any, would depend on timing. So at the end of each
// simulation, before its result is sent, the heap is checked and so is
// the peak RSS of that simulation alone (the kernel's VmHWM, reset as it
// starts): an overrun, however brief, is charged to the simulation that
// made it, whenever the samples fall. (The supervisor charges a fault
// only to a fresh process's first configuration, so what earlier
// simulations left in the process does not count either.)
type memCheck struct {
	limit  int64
	stderr io.Writer
	peak   bool // the peak was reset at the simulation's start
}

func (m *memCheck) before() {
	if m != nil {
		m.peak = resetPeakRSS()
	}
}

func (m *memCheck) after() {
	if m == nil {
		return
	}
	checkHeap(m.limit, m.stderr)
	if !m.peak {
		return
	}
	if hwm, err := peakRSS(); err == nil && hwm > m.limit {
		fmt.Fprintf(m.stderr, "actfuzz worker: peak RSS of the simulation %d bytes over the memory limit of %d bytes\n", hwm, m.limit)
		os.Exit(ExitWorkerOOM)
	}
}

// ServeWorker answers Work messages read from in with Results and Done
// written to out, until in ends (nil) or a read or write fails.
func ServeWorker(ctx context.Context, in io.Reader, out io.Writer, open func(name string) (netenv.Subject, error)) error {
	return serveWorker(ctx, in, out, open, nil)
}

// serveWorker is ServeWorker, checking mem (if set) around each
// simulation, before its result is sent.
func serveWorker(ctx context.Context, in io.Reader, out io.Writer, open func(name string) (netenv.Subject, error), mem *memCheck) error {
	bw := bufio.NewWriter(out)
	send := func(m Message) error {
		if err := WriteMessage(bw, m); err != nil {
			return err
		}
		return bw.Flush()
	}
	if err := send(Hello{Proto: ProtocolVersion, Program: corpus.ProgramVersion(), PID: os.Getpid()}); err != nil {
		return err
	}
	br := bufio.NewReader(in)
	var sv *served
	for {
		m, err := ReadMessage(br)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		w, ok := m.(Work)
		if !ok {
			return fmt.Errorf("unexpected %T from the coordinator", m)
		}
		if sv == nil || !sv.serves(w.Campaign) {
			if sv != nil {
				sv.close()
			}
			sv, err = serve(w, open)
			if err != nil {
				if err := send(Failure{BatchID: w.BatchID, Text: err.Error()}); err != nil {
					return err
				}
				continue
			}
		}
		for _, it := range w.Items {
			before := runtime.NumGoroutine()
			mem.before()
			r := sv.wk.run(ctx, job{idx: it.Index, g: it.Config})
			settle(before)
			mem.after()
			msg, err := r.message(w.BatchID)
			if err != nil {
				return err
			}
			r.batch.Reset()
			select {
			case sv.batches <- r.batch:
			default:
			}
			if err := send(msg); err != nil {
				return err
			}
		}
		if err := send(Done{BatchID: w.BatchID}); err != nil {
			return err
		}
	}
}

// served is a campaign rebuilt from a header.
type served struct {
	sum     [32]byte
	subj    netenv.Subject
	wk      *worker
	batches chan *coverage.Batch
}

func headerSum(h CampaignHeader) [32]byte {
	return sha256.Sum256(fmt.Appendf(nil, "%d:%s%d:%s%s%s", len(h.Path), h.Path, len(h.Subject), h.Subject, h.Source, h.TraceSums()))
}

func (s *served) serves(h CampaignHeader) bool { return s.sum == headerSum(h) }

func (s *served) close() {
	if c, ok := s.subj.(io.Closer); ok {
		_ = c.Close()
	}
}

func serve(w Work, open func(string) (netenv.Subject, error)) (*served, error) {
	h := w.Campaign
	switch {
	case w.Proto != ProtocolVersion:
		return nil, fmt.Errorf("protocol version %d, this worker speaks %d", w.Proto, ProtocolVersion)
	case h.Program != corpus.ProgramVersion():
		return nil, fmt.Errorf("coordinator is %q, this worker is %q: results would differ", h.Program, corpus.ProgramVersion())
	}
	subj, err := open(h.Subject)
	if err != nil {
		return nil, fmt.Errorf("subject: %w", err)
	}
	c, err := parseCampaignFor(h.Path, h.Source, h.LinkTraces, subj.Capabilities())
	if err != nil {
		if cl, ok := subj.(io.Closer); ok {
			_ = cl.Close()
		}
		return nil, fmt.Errorf("campaign: %w", err)
	}
	s := &served{sum: headerSum(h), subj: subj, batches: make(chan *coverage.Batch, 1)}
	s.wk = newWorker(c, c.Space, subj, s.batches)
	return s, nil
}

// message is the protocol form of a result.
func (r *result) message(batchID uint64) (Result, error) {
	states := r.encoded
	if states == nil {
		var err error
		if states, err = r.batch.MarshalBinary(); err != nil {
			return Result{}, err
		}
	}
	return Result{BatchID: batchID, Index: r.idx, States: states, Mean: r.mean, Best: r.best, BestAt: r.bestAt, Hits: r.hits, Fault: r.fault, Capped: r.capped, Events: r.events}, nil
}

// fromMessage is the result of a protocol Result, its states decoded into
// b (an empty batch; or m.Decoded, when b is nil). A Result with a fault
// or whose states were dropped may have none: b stays empty.
func fromMessage(m Result, b *coverage.Batch) (result, error) {
	switch {
	case b == nil:
		b = m.Decoded
	case len(m.States) == 0 && (m.Fault != nil || m.StatesDropped > 0 || m.Shares != nil):
	default:
		if err := b.UnmarshalBinary(m.States); err != nil {
			return result{}, err
		}
	}
	return result{idx: m.Index, batch: b, mean: m.Mean, best: m.Best, bestAt: m.BestAt, hits: m.Hits, fault: m.Fault, capped: m.Capped, events: m.Events, dropped: m.StatesDropped, shares: m.Shares}, nil
}

// settleFor bounds how long a worker waits, after a simulation, for the
// goroutines a CCAI started during it, in the process's unstarved time.
const settleFor = 2 * time.Second

// settle waits until the goroutines started during a simulation have
// ended (the count is back to before), or settleFor of the process's
// unstarved time (procClock) has passed: a loaded machine that runs the
// goroutine late does not shorten the wait. A CCAI that panics on a
// goroutine of its own then kills the worker before the result of the
// simulation that started it is sent, so the crash is charged to that
// configuration. Goroutines that outlive settleFor are left running: a
// crash they cause later kills the worker during a later configuration,
// which the supervisor then runs again alone before charging it (so it
// is charged to none).
func settle(before int) {
	if runtime.NumGoroutine() <= before {
		return
	}
	clock := newSimClock(os.Getpid(), time.Now())
	for i := 1; runtime.NumGoroutine() > before; i++ {
		time.Sleep(time.Millisecond)
		// A sample reads a file per thread: every 16 ms.
		if i%16 == 0 {
			now := time.Now()
			if clock.poll(now); clock.elapsed(now) >= settleFor {
				return
			}
		}
	}
}

package act

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/actfuzz/actfuzz/corpus"
)

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
	// arriving: a message has begun to arrive and is not in msgs yet
	// (see arrivingOrQueued).
	arriving atomic.Bool
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
			// A message's first byte means the simulation before it
			// has ended: from then on the worker may wait for this
			// process (a large result in a full pipe), not simulate.
			if _, err := br.Peek(1); err != nil {
				return
			}
			p.arriving.Store(true)
			m, err := ReadMessage(br)
			if err != nil {
				return // EOF or a torn frame: the process is dying
			}
			p.msgs <- m
			p.arriving.Store(false)
		}
	}()
	go func() { p.werr = p.cmd.Wait(); close(p.waited) }()
	p.clock = newSimClock(p.pid(), time.Now())
	if err := p.hello(ctx, argv[0]); err != nil {
		p.kill()
		return nil, err
	}
	return p, nil
}

// hello waits for the worker's Hello, at most helloTimeout of its
// unstarved time: a start slowed by a loaded machine is not a failure
// (a failed start ends the campaign).
func (p *proc) hello(ctx context.Context, name string) error {
	tick := time.NewTicker(rssPoll)
	defer tick.Stop()
	for {
		select {
		case m, ok := <-p.msgs:
			h, isHello := m.(Hello)
			switch {
			case !ok:
				<-p.waited
				return fmt.Errorf("worker %q exited at start: %v: %s", name, p.werr, p.stderr.String())
			case !isHello:
				return fmt.Errorf("worker %q: first message %T, want Hello", name, m)
			case h.Proto != ProtocolVersion:
				return fmt.Errorf("worker %q speaks protocol %d, want %d", name, h.Proto, ProtocolVersion)
			}
			return nil
		case now := <-tick.C:
			if p.clock.poll(now); p.clock.elapsed(now) >= helloTimeout {
				return fmt.Errorf("worker %q: no Hello within %v (unstarved time)", name, helloTimeout)
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
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

// death waits for a process whose output ended and says why it died. The
// wait is bounded by deathWait of the process's unstarved time, not of
// the wall clock: a worker exiting with ExitWorkerOOM on a starved
// machine, killed by an impatient wall-clock wait, would be charged as a
// crash.
func (p *proc) death(limit int64) *corpus.Finding {
	clock := newSimClock(p.pid(), time.Now())
	tick := time.NewTicker(rssPoll)
	defer tick.Stop()
wait:
	for {
		select {
		case <-p.waited:
			break wait
		case now := <-tick.C:
			if clock.poll(now); clock.elapsed(now) >= deathWait {
				p.kill()
				break wait
			}
		}
	}
	var ee *exec.ExitError
	if errors.As(p.werr, &ee) && ee.ExitCode() == ExitWorkerOOM {
		return &corpus.Finding{Kind: corpus.FaultOOM, Detail: fmt.Sprintf("worker over its memory limit of %d bytes: %s", limit, strings.TrimSpace(p.stderr.String()))}
	}
	return &corpus.Finding{Kind: corpus.FaultCrash, Detail: fmt.Sprintf("worker died (%v): %s", p.werr, panicText(p.stderr.String()))}
}

// arrivingOrQueued says whether a message of the worker is on its way or
// waits to be read: the simulation it ran has ended, and the time since
// may be the worker's wait for a starved or busy supervisor.
func (p *proc) arrivingOrQueued() bool { return p.arriving.Load() || len(p.msgs) > 0 }

// rss is the resident set size of the process (Linux /proc).
func (p *proc) rss() (int64, error) {
	return statusBytes(fmt.Sprintf("/proc/%d/status", p.pid()), "VmRSS:")
}

// statusBytes reads the field key (VmRSS:, VmHWM:) of a /proc status
// file, in bytes.
func statusBytes(path, key string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, key); ok {
			f := strings.Fields(rest)
			if len(f) == 2 && f[1] == "kB" {
				kb, err := strconv.ParseInt(f[0], 10, 64)
				return kb << 10, err
			}
		}
	}
	return 0, fmt.Errorf("no %s in %s", key, path)
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

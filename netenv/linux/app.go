package linux

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/tcp"
)

// The applications are goroutines of this process whose sockets were
// created inside the namespaces: a socket belongs to the network namespace
// it was created in for its whole life, whichever thread uses it later, so
// only creation needs a thread inside the namespace.

// writeChunk is the most the sending application writes per call.
const writeChunk = 256 << 10

// appMSS is the granularity of a rate-limited application's writes, as
// natively and on the other subjects.
const appMSS = tcp.DefaultMSS

// appFlow is one flow's sending application and socket.
type appFlow struct {
	idx    int
	cca    string
	bytes  uint64
	fd     int
	port   uint16
	cookie uint64

	mu      sync.Mutex
	file    *os.File // the socket, once connecting
	stopped bool

	connectFailed atomic.Bool
	lastInfo      *unix.TCPInfo
}

// newSenderSocket creates flow i's socket in the calling thread's
// namespace with its congestion control (TCP_CONGESTION, tcp(7)) and port.
func newSenderSocket(i int, fc netenv.Flow, port uint16) (*appFlow, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("flow %d: socket: %w", i, err)
	}
	f := &appFlow{idx: i, cca: fc.CCA, bytes: fc.Bytes, fd: fd, port: port}
	if err := unix.SetsockoptString(fd, unix.IPPROTO_TCP, unix.TCP_CONGESTION, fc.CCA); err != nil {
		f.close()
		return nil, fmt.Errorf("flow %d: congestion control %q: setsockopt(TCP_CONGESTION): %w", i, fc.CCA, err)
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Port: int(port), Addr: [4]byte(senderIP)}); err != nil {
		f.close()
		return nil, fmt.Errorf("flow %d: bind port %d: %w", i, port, err)
	}
	c, err := unix.GetsockoptUint64(fd, unix.SOL_SOCKET, unix.SO_COOKIE)
	if err != nil {
		f.close()
		return nil, fmt.Errorf("flow %d: SO_COOKIE: %w", i, err)
	}
	f.cookie = c
	return f, nil
}

// close releases the socket.
func (f *appFlow) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.file != nil {
		_ = f.file.Close()
		f.file = nil
		f.fd = -1
		return
	}
	if f.fd > 0 {
		_ = unix.Close(f.fd)
		f.fd = -1
	}
}

// stop ends the application: a write or a connect in progress returns.
// The socket stays open (its TCP_INFO is read after the run).
func (f *appFlow) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopped = true
	if f.file != nil {
		_ = f.file.SetWriteDeadline(time.Unix(1, 0))
	}
	if f.fd > 0 {
		f.lastInfo, _ = unix.GetsockoptTCPInfo(f.fd, unix.IPPROTO_TCP, unix.TCP_INFO)
	}
}

// send connects and writes the flow's bytes at the application rate of the
// schedule's current phase: unlimited (as fast as the send buffer takes
// them) when the rate is at least 1000× the bottleneck's, as on the native
// subject; otherwise whole segments as they are produced, nothing being
// produced while a write blocks on a full send buffer (netenv/tcp/app.go).
func (f *appFlow) send(ctx context.Context, sched netenv.Schedule, t0 int64) error {
	err := unix.Connect(f.fd, &unix.SockaddrInet4{Port: listenPort, Addr: [4]byte(receiverIP)})
	if err != nil && !errors.Is(err, unix.EINPROGRESS) {
		return fmt.Errorf("flow %d: connect: %w", f.idx, err)
	}
	f.mu.Lock()
	if f.stopped {
		f.mu.Unlock()
		return nil
	}
	f.file = os.NewFile(uintptr(f.fd), fmt.Sprintf("flow-%d", f.idx))
	file := f.file
	f.mu.Unlock()
	rc, err := file.SyscallConn()
	if err != nil {
		return fmt.Errorf("flow %d: %w", f.idx, err)
	}
	var soErr error
	werr := rc.Write(func(fd uintptr) bool {
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
		if n, _ := unix.Poll(pfd, 0); n == 0 {
			return false // still connecting: wait for writability
		}
		if v, err := unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_ERROR); err != nil {
			soErr = err
		} else if v != 0 {
			soErr = unix.Errno(v)
		}
		return true
	})
	if werr != nil || soErr != nil {
		// The kernel gave up on the SYN (loss), or the run ended first.
		f.connectFailed.Store(ctx.Err() == nil)
		return nil
	}
	zeros := make([]byte, writeChunk)
	elapsed := func() time.Duration { return time.Duration(monoNow() - t0) }
	var written uint64
	var produced float64
	last := elapsed()
	for written < f.bytes {
		if ctx.Err() != nil {
			return nil
		}
		now := elapsed()
		env := &sched[phaseAt(sched, now)].Env
		var n uint64
		if env.App >= env.BW*1000 {
			n = min(f.bytes-written, writeChunk)
			produced = float64(written)
			last = now
		} else {
			produced += env.App * 1e6 / 8 * (now - last).Seconds()
			last = now
			avail := uint64(0)
			if produced > float64(written) {
				avail = uint64(produced) - written
			}
			if written+avail < f.bytes {
				avail = avail / appMSS * appMSS
			}
			n = min(avail, f.bytes-written, writeChunk)
			if n == 0 {
				need := float64(appMSS) - (produced - float64(written))
				d := time.Duration(need * 8 / (env.App * 1e6) * 1e9)
				sleep(ctx, min(max(d, 100*time.Microsecond), 50*time.Millisecond))
				continue
			}
		}
		m, err := file.Write(zeros[:n])
		written += uint64(m)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, os.ErrDeadlineExceeded) {
				return nil
			}
			return fmt.Errorf("flow %d: write: %w", f.idx, err)
		}
		// A write that blocked on a full send buffer produced
		// nothing meanwhile.
		last = elapsed()
	}
	return nil
}

// phaseAt is the index of the schedule's phase at time t.
func phaseAt(s netenv.Schedule, t time.Duration) int {
	for i := range len(s) - 1 {
		if t < s[i].Until {
			return i
		}
	}
	return len(s) - 1
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// newListener creates the receiver's listening socket in the calling
// thread's namespace.
func newListener(backlog int) (int, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("receiver: socket: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Port: listenPort, Addr: [4]byte(receiverIP)}); err != nil {
		_ = unix.Close(fd)
		return -1, fmt.Errorf("receiver: bind: %w", err)
	}
	if err := unix.Listen(fd, backlog+8); err != nil {
		_ = unix.Close(fd)
		return -1, fmt.Errorf("receiver: listen: %w", err)
	}
	return fd, nil
}

// receiverApp accepts every flow and reads everything as it arrives.
type receiverApp struct {
	l      net.Listener
	err    error
	byPort map[uint16]int
	counts []atomic.Uint64

	mu    sync.Mutex
	conns []net.Conn
	done  bool
	wg    sync.WaitGroup
}

func newReceiverApp(lfd int, ports []uint16) *receiverApp {
	a := &receiverApp{byPort: map[uint16]int{}, counts: make([]atomic.Uint64, len(ports))}
	for i, p := range ports {
		a.byPort[p] = i
	}
	f := os.NewFile(uintptr(lfd), "listener")
	a.l, a.err = net.FileListener(f) // a duplicate of the descriptor
	_ = f.Close()
	return a
}

func (a *receiverApp) serve(ctx context.Context) {
	if a.err != nil {
		return
	}
	for {
		c, err := a.l.Accept()
		if err != nil {
			return
		}
		a.mu.Lock()
		if a.done {
			a.mu.Unlock()
			_ = c.Close()
			return
		}
		a.conns = append(a.conns, c)
		a.mu.Unlock()
		i, ok := -1, false
		if ta, isTCP := c.RemoteAddr().(*net.TCPAddr); isTCP {
			i, ok = a.byPort[uint16(ta.Port)]
		}
		a.wg.Add(1)
		go func() {
			defer a.wg.Done()
			buf := make([]byte, 256<<10)
			for {
				n, err := c.Read(buf)
				if ok {
					a.counts[i].Add(uint64(n))
				}
				if err != nil {
					if err != io.EOF && ctx.Err() == nil {
						return
					}
					return
				}
			}
		}()
	}
}

// stop closes the listener and every connection and waits for the
// readers.
func (a *receiverApp) stop() {
	a.mu.Lock()
	a.done = true
	if a.l != nil {
		_ = a.l.Close()
	}
	for _, c := range a.conns {
		_ = c.Close()
	}
	a.mu.Unlock()
	a.wg.Wait()
}

func (a *receiverApp) received(i int) uint64 { return a.counts[i].Load() }

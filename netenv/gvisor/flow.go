package gvisor

// flow.go holds a flow and the endpoint driving: the sending application's
// writes (unlimited or rate-limited), faults and TCP_INFO reads.

import (
	"bytes"
	"fmt"
	"math/bits"
	"sync/atomic"
	"time"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/seqnum"
	gtcp "gvisor.dev/gvisor/pkg/tcpip/transport/tcp"
	"gvisor.dev/gvisor/pkg/waiter"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
	"github.com/actfuzz/actfuzz/netenv/sim"
	"github.com/actfuzz/actfuzz/netenv/tcp"
)

// writeChunk is the most the application writes per call.
const writeChunk = 256 << 10

// zeros is the application's data (read-only, shared by all runs).
var zeros = make([]byte, writeChunk)

// appMSS is the granularity of a rate-limited application's writes.
const appMSS = tcp.DefaultMSS

// flow is one TCP connection from the sender host to the receiver host.
type flow struct {
	h     *harness
	idx   int
	cca   string
	bytes uint64

	ep       *gtcp.Endpoint
	wq       waiter.Queue
	port     uint16
	writable atomic.Bool
	written  uint64
	rd       bytes.Reader

	appRate  uint64 // bit/s, 0 = unlimited
	appBase  uint64
	appSince time.Duration
	blocked  bool // a rate-limited application waits for send buffer space
	appEv    *sim.Event

	established bool
	issKnown    bool
	lastUna     seqnum.Value
	acked       uint64
	maxSent     seqnum.Value
	board       ackBoard // what the receiver's ACKs report: delivered
	done        bool
	doneAt      time.Duration
	aborted     bool // gVisor reset the connection

	rep      tcpip.Endpoint
	rwq      *waiter.Queue
	readable atomic.Bool
	received uint64

	rec       observe.Record
	vars      []float64
	hasRec    bool
	last      snapshot // the latest probe snapshot
	hasSnap   bool
	stSegs    uint64
	stRetx    uint64
	stRTO     uint64
	stRecover uint64
	lastCC    ccai.CAState // caState of TCP_INFO's CcState at the last event
}

// appRate is the application rate in bit/s; rates at or above the
// bottleneck's ×1000 are unlimited (as in the native subject).
func appRate(e *netenv.Env) uint64 {
	if e.App >= e.BW*1000 {
		return 0
	}
	return bps(e.App)
}

// Handle runs a rate-limited application's next write.
func (f *flow) Handle(*sim.Event) {
	f.h.tick()
	f.h.settle(f.h.snd)
}

// appWritten is how many bytes the application has produced by now.
func (f *flow) appWritten(now time.Duration) uint64 {
	if f.appRate == 0 {
		return f.bytes
	}
	if f.blocked {
		return f.appBase
	}
	hi, lo := bits.Mul64(f.appRate, uint64(now-f.appSince))
	const div = 8 * uint64(time.Second)
	if hi >= div {
		return f.bytes
	}
	q, _ := bits.Div64(hi, lo, div)
	return min(f.appBase+q, f.bytes)
}

// appTimeFor is when the application will have produced n bytes.
func (f *flow) appTimeFor(n uint64) time.Duration {
	need := n - f.appBase
	hi, lo := bits.Mul64(need, 8*uint64(time.Second))
	if hi >= f.appRate {
		return netenv.DefaultMaxTime * 2
	}
	q, r := bits.Div64(hi, lo, f.appRate)
	if r != 0 {
		q++
	}
	return f.appSince + time.Duration(q)
}

// pump writes what the application has produced, as far as the send
// buffer takes it. A rate-limited application whose write finds the buffer
// full blocks, producing nothing, until the stack says it is writable
// again, and then goes on at its rate (as the native sender's application,
// netenv/tcp/app.go).
func (f *flow) pump() {
	if !f.established || f.done || f.written >= f.bytes {
		return
	}
	now := f.h.sim.Now()
	if f.blocked {
		if !f.writable.Load() {
			return
		}
		f.blocked = false
		f.appSince = now
	}
	target := f.appWritten(now)
	if f.appRate > 0 && target < f.bytes {
		// A rate-limited application writes whole segments (as
		// natively and on ns-3), not the few bytes produced since the
		// last ACK: gVisor, without Nagle, would send each as a runt.
		target = f.written + (target-min(f.written, target))/appMSS*appMSS
	}
	before := f.written
	for f.written < target && f.writable.Load() {
		n := min(target-f.written, writeChunk)
		f.rd.Reset(zeros[:n])
		m, err := f.ep.Write(&f.rd, tcpip.WriteOptions{})
		f.written += uint64(m)
		if err != nil {
			if _, ok := err.(*tcpip.ErrWouldBlock); !ok {
				f.fail(fmt.Errorf("flow %d: write: %v", f.idx, err))
			}
			f.writable.Store(false)
			break
		}
		if m == 0 {
			f.writable.Store(false)
			break
		}
	}
	if f.appRate > 0 && f.written > before {
		f.afterWrite()
	}
	if f.appRate > 0 && f.written < target && !f.writable.Load() {
		f.blocked = true
		f.appBase, f.appSince = f.written, now
		return
	}
	if f.appRate > 0 && f.written < f.bytes && f.written >= target {
		f.h.sim.ScheduleAt(f.appEv, f.appTimeFor(min(f.written+appMSS, f.bytes)))
	}
}

// fail ends the run with a fault: the stack refused what a healthy stack
// accepts.
func (f *flow) fail(err error) {
	if f.h.fault == nil {
		f.h.fault = &netenv.Fault{Kind: "error", Detail: err.Error()}
	}
	f.h.sim.Stop()
}

// info reads TCP_INFO from the harness goroutine (at quiescence).
func (f *flow) info() tcpip.TCPInfoOption {
	var info tcpip.TCPInfoOption
	if err := f.ep.GetSockOpt(&info); err != nil {
		f.fail(fmt.Errorf("flow %d: TCP_INFO: %v", f.idx, err))
	}
	return info
}

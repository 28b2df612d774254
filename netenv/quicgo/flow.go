package quicgo

// flow.go holds the applications: each flow's client dials the server and
// sends the flow's bytes on one stream; the server reads every stream to
// its end.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/qlogwriter"

	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

// alpn is the application protocol both endpoints negotiate.
const alpn = "actfuzz"

// Flow-control windows: large enough never to limit a flow (the
// congestion controller is what is tested), as the gVisor subject's 64 MB
// receive buffer.
const window = 64 << 20

// writeChunk is what an unlimited application hands quic-go per Write.
const writeChunk = 64 << 10

// flow is one connection: its client endpoint and application.
type flow struct {
	h     *harness
	idx   int
	cca   string
	bytes uint64

	conn    *pconn
	tr      *quic.Transport
	qc      atomic.Pointer[quic.Conn]
	tracer  *tracer
	appRate atomic.Uint64 // bit/s, 0: unlimited

	received atomic.Uint64
	doneAt   atomic.Int64 // ns, 0: not done
	// last is the last record emitted (under tracer.mu).
	last observe.Record
}

// quicConfig is both endpoints' configuration; the client's carries the
// flow's tracer.
func (h *harness) quicConfig(t *tracer) *quic.Config {
	idle := max(30*time.Second, 40*time.Duration(h.maxDelayMs()*float64(time.Millisecond)))
	c := &quic.Config{
		HandshakeIdleTimeout:           idle,
		MaxIdleTimeout:                 idle,
		InitialStreamReceiveWindow:     window,
		MaxStreamReceiveWindow:         window,
		InitialConnectionReceiveWindow: window,
		MaxConnectionReceiveWindow:     window,
		DisablePathMTUDiscovery:        true,
	}
	if t != nil {
		c.Tracer = func(context.Context, bool, quic.ConnectionID) qlogwriter.Trace { return t }
	}
	return c
}

// maxDelayMs is the largest one-way delay of the schedule.
func (h *harness) maxDelayMs() float64 {
	var d float64
	for i := range h.cfg.Schedule {
		d = max(d, h.cfg.Schedule[i].Env.Delay)
	}
	return d
}

// setup starts the server and every flow's client application.
func (h *harness) setup(ctx context.Context, env *netenv.Env) error {
	h.server = newPconn(h, serverPort)
	h.srvTr = &quic.Transport{Conn: h.server}
	ln, err := h.srvTr.Listen(h.tlsServer, h.quicConfig(nil))
	if err != nil {
		return fmt.Errorf("quic server: listen: %w", err)
	}
	h.listener = ln
	h.remaining.Store(int32(len(h.cfg.Flows)))
	for i, fc := range h.cfg.Flows {
		f := &flow{h: h, idx: i, cca: fc.CCA, bytes: fc.Bytes}
		f.conn = newPconn(h, clientPort0+i)
		f.tr = &quic.Transport{Conn: f.conn}
		f.tracer = newTracer(h, f)
		f.appRate.Store(appRate(env))
		h.flows = append(h.flows, f)
	}
	h.wg.Add(1)
	go h.accept(ctx)
	for _, f := range h.flows {
		h.wg.Add(1)
		go f.send(ctx)
	}
	return nil
}

// fail reports an application error unless the run is over: a
// *netenv.Fault of kind "error" (quic-go failed to carry the flow: a
// campaign records it as a finding and goes on).
func (h *harness) fail(ctx context.Context, err error) {
	if ctx.Err() != nil || h.abandon.Load() {
		return
	}
	select {
	case h.appErr <- &netenv.Fault{Kind: "error", Detail: err.Error()}:
	default:
	}
	h.poke()
}

// accept is the server application: it accepts every connection and reads
// its streams to the end.
func (h *harness) accept(ctx context.Context) {
	defer h.wg.Done()
	for {
		qc, err := h.listener.Accept(ctx)
		if err != nil {
			return
		}
		addr, _ := qc.RemoteAddr().(*net.UDPAddr)
		if addr == nil || addr.Port-clientPort0 < 0 || addr.Port-clientPort0 >= len(h.flows) {
			_ = qc.CloseWithError(1, "unknown client")
			continue
		}
		f := h.flows[addr.Port-clientPort0]
		h.wg.Add(1)
		go f.receive(ctx, qc)
	}
}

// receive reads the flow's stream to its end; the flow is done when every
// byte has arrived.
func (f *flow) receive(ctx context.Context, qc *quic.Conn) {
	defer f.h.wg.Done()
	st, err := qc.AcceptStream(ctx)
	if err != nil {
		return
	}
	buf := make([]byte, 64<<10)
	for {
		n, err := st.Read(buf)
		if f.received.Add(uint64(n)) >= f.bytes && n > 0 && f.doneAt.Load() == 0 {
			f.doneAt.Store(int64(max(f.h.now(), 1)))
			f.h.remaining.Add(-1)
			f.h.poke()
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && ctx.Err() == nil && f.doneAt.Load() == 0 {
				f.h.fail(ctx, fmt.Errorf("flow %d: server read: %w", f.idx+1, err))
			}
			return
		}
	}
}

// send is the flow's client application: it dials, opens one stream and
// writes the flow's bytes, at the application's rate when it is limited.
func (f *flow) send(ctx context.Context) {
	defer f.h.wg.Done()
	h := f.h
	qc, err := f.tr.Dial(ctx, h.server.addr, h.tlsClient, h.quicConfig(f.tracer))
	if err != nil {
		h.fail(ctx, fmt.Errorf("flow %d: dial: %w", f.idx+1, err))
		return
	}
	f.qc.Store(qc)
	st, err := qc.OpenStreamSync(ctx)
	if err != nil {
		h.fail(ctx, fmt.Errorf("flow %d: open stream: %w", f.idx+1, err))
		return
	}
	buf := make([]byte, writeChunk)
	var written uint64
	for written < f.bytes {
		n := min(uint64(len(buf)), f.bytes-written)
		if rate := f.appRate.Load(); rate > 0 {
			// One datagram's worth per interval at the rate.
			n = min(n, maxDatagramSize)
			select {
			case <-time.After(time.Duration(float64(n*8) / float64(rate) * 1e9)):
			case <-ctx.Done():
				return
			}
		}
		if _, err := st.Write(buf[:n]); err != nil {
			if ctx.Err() == nil {
				h.fail(ctx, fmt.Errorf("flow %d: write: %w", f.idx+1, err))
			}
			return
		}
		written += n
	}
	_ = st.Close()
}

// close closes the flow's connection and endpoint.
func (f *flow) close() {
	if qc := f.qc.Load(); qc != nil {
		_ = qc.CloseWithError(0, "")
	}
	_ = f.tr.Close()
	_ = f.conn.Close()
}

func (f *flow) result() netenv.FlowResult {
	f.tracer.mu.Lock()
	r := f.last
	f.tracer.mu.Unlock()
	fr := netenv.FlowResult{CCA: f.cca, DeliveredBytes: min(f.received.Load(), f.bytes)}
	if at := f.doneAt.Load(); at != 0 {
		fr.Done, fr.DoneAtS = true, time.Duration(at).Seconds()
	}
	if qc := f.qc.Load(); qc != nil {
		s := qc.ConnectionStats()
		fr.SegmentsSent, fr.Retransmits = s.PacketsSent, s.PacketsLost
	}
	fr.Final = netenv.FinalState{Cwnd: r.Cwnd, SRTTms: float64(r.SRTT) / 1e6, RTTVarMs: float64(r.RTTVar) / 1e6, CAState: r.CAState.String()}
	return fr
}

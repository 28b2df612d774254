package linux

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

// The fallback state source (the BPF programs of bpf.go are the first
// choice; the tracer below turns the events of either into records): two
// kernel tracepoints, read as text from a tracefs instance of the run's own (Documentation/trace/ftrace.rst,
// "Instances"): an instance has its own ring buffer, event enables and
// filters, so neither the host's tracing nor another run's sees or
// disturbs ours.
//
//   - tcp:tcp_probe (include/trace/events/tcp.h) fires at the start of
//     tcp_rcv_established, for every segment the established socket
//     receives, before the segment is processed: it carries snd_cwnd,
//     ssthresh and srtt (µs) as they were after the previous segment.
//     It is filtered on the sender sockets' cookies (SO_COOKIE), which are
//     unique on the machine.
//   - tcp:tcp_cong_state_set fires in tcp_set_ca_state, on every change of
//     icsk_ca_state (Open, Disorder, CWR, Recovery, Loss: the same numbers
//     as ccai.CAState). It has no cookie; it is filtered on the sender
//     ports, which the subject allocates so that its concurrent runs never
//     share one.
//
// The instance's clock is "mono", CLOCK_MONOTONIC, the emulator's clock, so
// an event's time is the simulated time of the emulated link.

// tracefsRoot is where tracefs is mounted.
const tracefsRoot = "/sys/kernel/tracing"

// instancePrefix names this subject's tracefs instances: PREFIX-PID-N.
const instancePrefix = "actfuzz"

// ensureTracefs mounts tracefs at tracefsRoot if nothing is mounted there
// (a mount in the host's mount namespace, as `mount -t tracefs` would do;
// it is the kernel's standard location and changes no tracing state).
func ensureTracefs() error {
	if _, err := os.Stat(filepath.Join(tracefsRoot, "instances")); err == nil {
		return nil
	}
	if err := unix.Mount("nodev", tracefsRoot, "tracefs", 0, ""); err != nil {
		return fmt.Errorf("tracefs is not mounted at %s and mounting it failed: %w", tracefsRoot, err)
	}
	return nil
}

// instance is a tracefs instance of one run.
type instance struct {
	dir  string
	pipe *os.File
}

// newInstance creates an instance recording tcp_probe for the given socket
// cookies and tcp_cong_state_set for the given sender ports.
func newInstance(name string, cookies []uint64, ports []uint16) (*instance, error) {
	dir := filepath.Join(tracefsRoot, "instances", name)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("tracefs instance: %w", err)
	}
	in := &instance{dir: dir}
	var probe, state []string
	for _, c := range cookies {
		probe = append(probe, fmt.Sprintf("sock_cookie == %#x", c))
	}
	for _, p := range ports {
		state = append(state, fmt.Sprintf("sport == %d", p))
	}
	writes := [][2]string{
		{"trace_clock", "mono"},
		// Per CPU; a 100 Mbit/s flow makes ~10,000 events a second of
		// ~250 bytes of text, read within milliseconds.
		{"buffer_size_kb", "8192"},
		// Wake the reader on any data, not a fill level.
		{"buffer_percent", "0"},
		{"events/tcp/tcp_probe/filter", strings.Join(probe, " || ")},
		{"events/tcp/tcp_cong_state_set/filter", strings.Join(state, " || ")},
		{"events/tcp/tcp_probe/enable", "1"},
		{"events/tcp/tcp_cong_state_set/enable", "1"},
		{"tracing_on", "1"},
	}
	for _, w := range writes {
		if err := os.WriteFile(filepath.Join(dir, w[0]), []byte(w[1]), 0); err != nil {
			if w[0] == "buffer_percent" && errors.Is(err, os.ErrNotExist) {
				continue // older kernels: trace_pipe wakes on any data anyway
			}
			in.remove()
			return nil, fmt.Errorf("tracefs instance %s: %s: %w", name, w[0], err)
		}
	}
	// Non-blocking, so that the runtime poller owns it and a read
	// deadline ends the reader (trace_pipe implements poll).
	fd, err := unix.Open(filepath.Join(dir, "trace_pipe"), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		in.remove()
		return nil, fmt.Errorf("tracefs instance %s: trace_pipe: %w", name, err)
	}
	in.pipe = os.NewFile(uintptr(fd), "trace_pipe")
	return in, nil
}

// remove disables the events and deletes the instance.
func (in *instance) remove() {
	if in.pipe != nil {
		_ = in.pipe.Close()
		in.pipe = nil
	}
	_ = os.WriteFile(filepath.Join(in.dir, "tracing_on"), []byte("0"), 0)
	_ = os.WriteFile(filepath.Join(in.dir, "events/enable"), []byte("0"), 0)
	var err error
	// rmdir fails with EBUSY while the kernel still holds a reader's
	// reference for a moment after close.
	for range 50 {
		if err = unix.Rmdir(in.dir); err == nil || errors.Is(err, unix.ENOENT) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	slog.Warn("linux subject: could not remove tracefs instance", "dir", in.dir, "err", err)
}

// sweepInstances removes this subject's instances left by processes that
// no longer exist (killed before they could clean up).
func sweepInstances() {
	ents, err := os.ReadDir(filepath.Join(tracefsRoot, "instances"))
	if err != nil {
		return
	}
	for _, ent := range ents {
		pid, ok := parseOwner(ent.Name(), instancePrefix)
		if !ok || pidAlive(pid) {
			continue
		}
		in := &instance{dir: filepath.Join(tracefsRoot, "instances", ent.Name())}
		in.remove()
		slog.Info("linux subject: removed a stale tracefs instance", "dir", in.dir)
	}
}

// event is one parsed trace line.
type event struct {
	at     time.Duration // simulated time
	probe  bool          // tcp_probe (else tcp_cong_state_set)
	cookie uint64
	sport  uint16
	cwnd   uint32
	ssth   uint32
	srtt   time.Duration
	state  uint8
	skaddr string
	// From the BPF programs (bpf.go): a state change carries the window
	// at the change and the kernel's prior_cwnd.
	prior     uint32
	hasWindow bool
	// icsk_rto at the tracepoint (BPF with a known HZ only).
	rto    time.Duration
	hasRTO bool
	// tcp_packets_in_flight and delivered at the tracepoint (BPF).
	inFlight  uint32
	delivered uint64
	hasFlight bool
	// handshake: the socket was still connecting (TCP_SYN_SENT; BPF).
	handshake bool
}

// fromTracepoint overrides TCP_INFO's values, read when the record is
// processed, with those the BPF programs read when the tracepoint fired.
func (ev *event) fromTracepoint(r *observe.Record) {
	if ev.hasRTO {
		r.RTO = ev.rto
	}
	if ev.hasFlight {
		r.InFlight, r.Delivered = ev.inFlight, ev.delivered
	}
}

// parseLine parses one line of trace_pipe; t0 is the run's start
// (CLOCK_MONOTONIC, ns). Lines of other events are not ok.
func parseLine(line string, t0 int64) (ev event, ok bool) {
	var rest string
	var before string
	if i := strings.Index(line, ": tcp_probe: "); i >= 0 {
		ev.probe = true
		before, rest = line[:i], line[i+len(": tcp_probe: "):]
	} else if i := strings.Index(line, ": tcp_cong_state_set: "); i >= 0 {
		before, rest = line[:i], line[i+len(": tcp_cong_state_set: "):]
	} else {
		return ev, false
	}
	// The timestamp is the last field before the event name:
	// "SECONDS.MICROSECONDS".
	ts := before[strings.LastIndexByte(before, ' ')+1:]
	sec, usec, found := strings.Cut(ts, ".")
	s, err1 := strconv.ParseInt(sec, 10, 64)
	u, err2 := strconv.ParseInt(usec, 10, 64)
	if !found || err1 != nil || err2 != nil {
		return ev, false
	}
	ev.at = time.Duration(s*1e9 + u*1e3 - t0)
	for _, kv := range strings.Fields(rest) {
		k, v, found := strings.Cut(kv, "=")
		if !found {
			continue
		}
		switch k {
		case "sock_cookie":
			ev.cookie, _ = strconv.ParseUint(v, 16, 64)
		case "snd_cwnd":
			ev.cwnd = parseU32(v)
		case "ssthresh":
			ev.ssth = parseU32(v)
		case "srtt":
			ev.srtt = time.Duration(parseU32(v)) * time.Microsecond
		case "sport":
			ev.sport = uint16(parseU32(v))
		case "cong_state":
			ev.state = uint8(parseU32(v))
		case "skaddr":
			ev.skaddr = v
		}
	}
	return ev, true
}

func parseU32(s string) uint32 {
	v, _ := strconv.ParseUint(s, 0, 32)
	return uint32(v)
}

// traceFlow is one flow's state as the tracer builds it.
type traceFlow struct {
	idx    int
	fd     int // the sender socket, for TCP_INFO
	port   uint16
	cookie uint64
	skaddr string // the socket's (hashed) address, from its first probe

	rec     observe.Record
	hasRec  bool
	state   ccai.CAState // the latest tcp_cong_state_set
	events  uint64       // probe events seen
	rtoRecs uint64       // records of reason rto
	recov   uint64       // entries into Recovery
	done    bool         // no more records (the flow ended)
	last    time.Duration
}

// tracer reads the instance's events and turns them into state records.
// It is the only caller of obs while it runs.
type tracer struct {
	in       *instance
	t0       int64
	flows    []*traceFlow
	byCookie map[uint64]*traceFlow
	byPort   map[uint16]*traceFlow
	obs      observe.Observer
	lines    uint64
	bad      uint64
	// lost counts events the ring buffer dropped ("CPU:N [LOST M
	// EVENTS]"): the trace has gaps then, and the run says so.
	lost uint64
}

// read consumes trace_pipe until its read deadline passes or it fails.
func (t *tracer) read() {
	br := bufio.NewReaderSize(t.in.pipe, 1<<16)
	for {
		line, err := br.ReadString('\n')
		if len(line) > 0 && err == nil {
			t.lines++
			t.line(line)
		}
		if err != nil {
			if !errors.Is(err, os.ErrDeadlineExceeded) && !errors.Is(err, io.EOF) && !errors.Is(err, os.ErrClosed) {
				slog.Warn("linux subject: reading trace_pipe", "err", err)
			}
			return
		}
	}
}

func (t *tracer) line(line string) {
	ev, ok := parseLine(strings.TrimRight(line, "\n"), t.t0)
	if !ok {
		if _, rest, found := strings.Cut(line, "[LOST "); found {
			n, _, _ := strings.Cut(rest, " ")
			v, _ := strconv.ParseUint(n, 10, 64)
			t.lost += max(v, 1)
			return
		}
		t.bad++
		return
	}
	t.handle(&ev)
}

// handle dispatches one event, from tracefs or from the BPF ring.
func (t *tracer) handle(ev *event) {
	if ev.probe {
		f := t.byCookie[ev.cookie]
		if f == nil || f.done {
			return
		}
		if f.skaddr == "" {
			f.skaddr = ev.skaddr
		}
		f.events++
		t.onProbe(f, ev)
		return
	}
	f := t.byPort[ev.sport]
	if ev.cookie != 0 {
		f = t.byCookie[ev.cookie]
	}
	if f == nil || f.done || (f.skaddr != "" && ev.skaddr != "" && ev.skaddr != f.skaddr) {
		return // another run's socket on the same port (see the filter)
	}
	t.onState(f, ev)
}

// onProbe records the state the probe carries, with the latest ca_state
// and TCP_INFO's other variables. Because tcp_probe fires before the
// segment is processed, the record is the state after the previous
// segment; ca_state changes made while processing that segment have
// already been traced, so they line up.
func (t *tracer) onProbe(f *traceFlow, ev *event) {
	r := &f.rec
	reason := observe.ReasonAck
	if f.hasRec && f.state != r.CAState {
		reason = observe.ReasonState
	}
	t.transition(f, f.state)
	r.Cwnd = ev.cwnd
	r.SSThresh = min(ev.ssth, ccai.InfiniteSSThresh)
	r.SRTT = ev.srtt
	if info, err := unix.GetsockoptTCPInfo(f.fd, unix.IPPROTO_TCP, unix.TCP_INFO); err == nil {
		fillInfo(r, info, false)
	}
	ev.fromTracepoint(r)
	t.emit(f, ev.at, reason)
}

// onState notes a change of ca_state. Entering Loss is an RTO (or, rarely,
// SACK reneging): it is recorded at once, with cwnd and ssthresh from
// TCP_INFO, since no segment may arrive for a while.
func (t *tracer) onState(f *traceFlow, ev *event) {
	st := ccai.CAState(ev.state)
	if st > ccai.StateLoss {
		t.bad++
		return
	}
	if st == ccai.StateRecovery && f.state != ccai.StateRecovery {
		f.recov++
	}
	f.state = st
	if ev.handshake {
		// A SYN's timeout: tcp_retransmit_timer calls tcp_enter_loss in
		// SYN_SENT too. The handshake is not the flow's data transfer
		// (the native subject's records start after it), and counted as
		// one it made the first data timeout a second in a row: a
		// kernel BBR rto-backoff hit (two timeouts of 1 s, the SYN's
		// and the data's).
		return
	}
	if ev.hasWindow {
		// The BPF programs read the window inside tcp_set_ca_state:
		// record the change as it is made, as the native sender does.
		// tcp_enter_loss calls it on every RTO, also in Loss already.
		r := &f.rec
		if f.hasRec && st == r.CAState && st != ccai.StateLoss {
			return
		}
		reason := observe.ReasonState
		if st == ccai.StateLoss {
			reason = observe.ReasonRTO
			f.rtoRecs++
		}
		t.transition(f, st)
		r.Cwnd = ev.cwnd
		r.SSThresh = min(ev.ssth, ccai.InfiniteSSThresh)
		r.PriorCwnd = ev.prior
		if info, err := unix.GetsockoptTCPInfo(f.fd, unix.IPPROTO_TCP, unix.TCP_INFO); err == nil {
			fillInfo(r, info, false)
		}
		ev.fromTracepoint(r)
		t.emit(f, ev.at, reason)
		return
	}
	if st != ccai.StateLoss || !f.hasRec {
		return
	}
	t.transition(f, st)
	if info, err := unix.GetsockoptTCPInfo(f.fd, unix.IPPROTO_TCP, unix.TCP_INFO); err == nil {
		fillInfo(&f.rec, info, true)
	}
	f.rtoRecs++
	t.emit(f, ev.at, observe.ReasonRTO)
}

// fillInfo copies TCP_INFO's variables into a record: rttvar, rto,
// in-flight (tcp_packets_in_flight: unacked − sacked − lost + retrans),
// delivered and the pacing rate (bytes/s, as ccai.Sock.PacingRate); and,
// with window, cwnd, ssthresh and srtt.
func fillInfo(r *observe.Record, info *unix.TCPInfo, window bool) {
	r.RTTVar = time.Duration(info.Rttvar) * time.Microsecond
	r.RTO = time.Duration(info.Rto) * time.Microsecond
	inflight := int64(info.Unacked) - int64(info.Sacked) - int64(info.Lost) + int64(info.Retrans)
	r.InFlight = uint32(max(inflight, 0))
	r.Delivered = uint64(info.Delivered)
	r.PacingRate = info.Pacing_rate
	if info.Pacing_rate == ^uint64(0) {
		r.PacingRate = 0 // ~0U: no pacing rate set
	}
	if window {
		r.Cwnd = info.Snd_cwnd
		r.SSThresh = min(info.Snd_ssthresh, ccai.InfiniteSSThresh)
		r.SRTT = time.Duration(info.Rtt) * time.Microsecond
	}
}

// transition moves the record to ca_state st (observe.Record's
// ObserveTransition).
func (t *tracer) transition(f *traceFlow, st ccai.CAState) { f.rec.ObserveTransition(st, !f.hasRec) }

func (t *tracer) emit(f *traceFlow, at time.Duration, reason observe.Reason) {
	r := &f.rec
	// Times never go back within a flow (per-CPU buffers are merged by
	// timestamp, but an RTO record's time is its event's).
	r.Time = max(at, f.last)
	f.last = r.Time
	r.Reason = reason
	f.hasRec = true
	if t.obs != nil {
		t.obs.Observe(r)
	}
}

// final records a flow's state at its end from TCP_INFO: the effect of
// its last ACK, which no probe shows.
func (t *tracer) final(f *traceFlow, at time.Duration) {
	info, err := unix.GetsockoptTCPInfo(f.fd, unix.IPPROTO_TCP, unix.TCP_INFO)
	if err != nil || f.done {
		return
	}
	st := ccai.CAState(min(info.Ca_state, uint8(ccai.StateLoss)))
	reason := observe.ReasonAck
	if f.hasRec && st != f.rec.CAState {
		reason = observe.ReasonState
	}
	t.transition(f, st)
	fillInfo(&f.rec, info, true)
	t.emit(f, at, reason)
	f.done = true
}

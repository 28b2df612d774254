package linux

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
	"github.com/actfuzz/actfuzz/netenv/tcp"
)

// Defaults of Options.
const (
	// DefaultMaxWall bounds one run: simulated time is wall time here,
	// so the native subject's 4-hour cap would be 4 hours. Two minutes
	// hold a 15 MB transfer at 2 Mbit/s; a campaign whose P reaches high
	// loss on slow links gets capped runs (Result.Capped) rather than
	// workers busy for many minutes on one configuration.
	DefaultMaxWall = 2 * time.Minute
	// DefaultMaxBW is the highest bottleneck rate the emulator holds
	// faithfully on the machines this project runs on (2 shared cores):
	// measured in doc.go, where the delivered rate stays within 2% of the
	// configured one and the one-way delay error's p99 below 1 ms.
	DefaultMaxBW = 200.0
	// initCwnd is the initial window set on the sender's route (RFC
	// 6928, tcp.DefaultInitCwnd natively).
	initCwnd = tcp.DefaultInitCwnd
)

// ErrUnavailable is returned (wrapped) by Open when this machine cannot run
// the subject: not root, no /dev/net/tun, or neither BPF nor tracefs.
var ErrUnavailable = errors.New("the linux subject needs root, /dev/net/tun, network namespaces and tracefs")

// Options configure a Subject.
type Options struct {
	// MaxWall bounds the wall-clock time of one run (0: DefaultMaxWall);
	// a run that reaches it ends capped, as the native subject's time
	// cap.
	MaxWall time.Duration
	// MaxBW is the highest bottleneck bandwidth a configuration may
	// have, Mbit/s (0: DefaultMaxBW).
	MaxBW float64
	// NormalPriority runs the emulator's thread as an ordinary thread
	// instead of SCHED_FIFO (see emulator.run; the fidelity figures of
	// doc.go compare the two).
	NormalPriority bool
	// TraceFS reads the state from tracefs text events instead of the
	// BPF programs (bpf.go), which are used when they load.
	TraceFS bool
}

// Subject runs configurations on the running kernel's TCP: see the package
// documentation. It is safe for concurrent use: each Run has namespaces,
// ports and a tracefs instance of its own.
type Subject struct {
	opt     Options
	ccas    []string
	release string
	pid     int
	runs    atomic.Uint64
	// offsets into struct tcp_sock for the BPF programs; bpfErr says
	// why they are not used.
	offsets bpfOffsets
	bpfErr  error

	// lastStats keeps the emulator's measurements of the latest run
	// (tests and the fidelity figures).
	mu        sync.Mutex
	lastStats Stats
}

var (
	_ netenv.Subject = (*Subject)(nil)
	_ netenv.Capable = (*Subject)(nil)
)

// Open returns the linux subject with default options.
func Open() (netenv.Subject, error) {
	s, err := New(Options{})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// New checks that the machine can run the subject, reads the congestion
// controls the kernel offers, and removes what killed earlier processes
// left behind (tracefs instances; namespaces need no sweeping, see ns.go).
func New(opt Options) (*Subject, error) {
	if opt.MaxWall <= 0 {
		opt.MaxWall = DefaultMaxWall
	}
	if opt.MaxBW <= 0 {
		opt.MaxBW = DefaultMaxBW
	}
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("%w: not running as root", ErrUnavailable)
	}
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	ccas, err := KernelCCAs()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	var uts unix.Utsname
	if err := unix.Uname(&uts); err != nil {
		return nil, fmt.Errorf("uname: %w", err)
	}
	s := &Subject{opt: opt, ccas: ccas, release: unix.ByteSliceToString(uts.Release[:]), pid: os.Getpid()}
	if opt.TraceFS {
		s.bpfErr = errors.New("Options.TraceFS")
	} else if s.offsets, s.bpfErr = kernelOffsets(); s.bpfErr != nil {
		slog.Warn("linux subject: no BPF state source; reading tracefs events (a change of ca_state then shows the state after the whole ACK)", "err", s.bpfErr)
	}
	// tracefs is needed only without BPF (and mounted only then, if it
	// is not); stale instances are swept wherever it is mounted.
	if s.bpfErr != nil {
		if err := ensureTracefs(); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
	}
	sweepInstances()
	return s, nil
}

// KernelCCAs reads the congestion controls the running kernel offers
// (net.ipv4.tcp_available_congestion_control, readable without root),
// sorted.
func KernelCCAs() ([]string, error) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_available_congestion_control")
	if err != nil {
		return nil, err
	}
	ccas := strings.Fields(string(b))
	slices.Sort(ccas)
	return ccas, nil
}

// Name implements netenv.Subject.
func (*Subject) Name() string { return "linux" }

// CCAs implements netenv.Subject: the kernel's
// net.ipv4.tcp_available_congestion_control, which includes modules and
// BPF struct_ops congestion controls registered when the subject opened.
func (s *Subject) CCAs() []string { return slices.Clone(s.ccas) }

// Release is the kernel release (uname -r), recorded in this subject's
// seeds.
func (s *Subject) Release() string { return s.release }

// LastStats returns the emulator's measurements of the latest completed
// run.
func (s *Subject) LastStats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastStats
}

// Capabilities implements netenv.Capable.
func (s *Subject) Capabilities() netenv.Capabilities { return capabilities(s.CCAs()) }

// DefaultCapabilities are the subject's capabilities on this machine
// without opening it (listings): the kernel's congestion controls are
// readable without root.
func DefaultCapabilities() netenv.Capabilities {
	ccas, _ := KernelCCAs()
	return capabilities(ccas)
}

func capabilities(ccas []string) netenv.Capabilities {
	if ccas == nil {
		ccas = []string{} // nil would mean the native registry
	}
	return netenv.Capabilities{
		Name:          "linux",
		CCAs:          ccas,
		Params:        params(),
		Topologies:    []string{netenv.TopoSingleLink, netenv.TopoDumbbell, netenv.TopoParkingLot},
		Deterministic: false,
		Profiles:      false,
		Base:          observe.Names(), // every one (see doc.go for where each comes from)
		// The kernel's congestion controls expose no variables of
		// their own here (TCP_CC_INFO would give some for bbr, dctcp
		// and vegas; not yet mapped).
		Vars: func(string) []ccai.VarDesc { return []ccai.VarDesc{} },
	}
}

// params are the parameters of P the emulator expresses: every one the
// one link model applies, but ECN, whose codepoints the emulator does not
// rewrite in the real packets' IP headers (the kernel would negotiate it
// with net.ipv4.tcp_ecn, which the namespaces leave off).
func params() []string { return netenv.ParamNamesWithoutECN() }

// Check validates cfg for this subject: what netenv.Config.Validate checks,
// congestion controls the kernel offers, and environments the emulator can
// hold. Its errors are the user's (exit 2 at the command line).
func (s *Subject) Check(cfg *netenv.Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	for i, f := range cfg.Flows {
		if !slices.Contains(s.ccas, f.CCA) {
			return fmt.Errorf("flow %d: congestion control %q: the kernel (%s) offers %s (net.ipv4.tcp_available_congestion_control; load a module or register a BPF struct_ops congestion control to add one)",
				i+1, f.CCA, s.release, strings.Join(s.ccas, ", "))
		}
	}
	for i, ph := range cfg.Schedule {
		if ph.Env.BW > s.opt.MaxBW {
			return fmt.Errorf("schedule phase %d: parameter bw = %g Mbit/s: the linux subject's emulator holds at most %g Mbit/s on this machine (measured; see netenv/linux/doc.go)",
				i+1, ph.Env.BW, s.opt.MaxBW)
		}
	}
	if cfg.Profile != ccai.ProfileLinux {
		return fmt.Errorf("profile %s: the linux subject runs the kernel's own code; only the default profile (%s) applies", cfg.Profile, ccai.ProfileLinux)
	}
	if cfg.DelayHook != nil {
		return errors.New("linux subject: DelayHook (the symbolic back-end) is not supported")
	}
	if cfg.Scheduler != nil {
		return errors.New("linux subject: a custom Scheduler is not supported")
	}
	if len(cfg.Flows) > portSpan {
		return fmt.Errorf("flows: the linux subject runs at most %d flows", portSpan)
	}
	return nil
}

// portSpan is how many sender ports a process cycles through; portBase is
// the first of them.
const (
	portSpan = 200
	portBase = 10000
)

// ports allocates the sender ports of run n: a range per process (from its
// pid) and, within it, a window per run, so that concurrent runs (in this
// process and, unless their pids collide modulo 250, in others) never
// share a port: the tcp_cong_state_set filter is by port.
func (s *Subject) ports(n uint64, flows int) []uint16 {
	base := portBase + (s.pid%250)*portSpan
	out := make([]uint16, flows)
	start := int(n*uint64(flows)) % portSpan
	for i := range out {
		p := base + (start+i)%portSpan
		if p == listenPort {
			p = base + portSpan - 1 - i
		}
		out[i] = uint16(p)
	}
	return out
}

// Run implements netenv.Subject.
func (s *Subject) Run(ctx context.Context, cfg netenv.Config, obs observe.Observer) (netenv.Result, error) {
	start := time.Now()
	if err := s.Check(&cfg); err != nil {
		return netenv.Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return netenv.Result{}, err
	}
	n := s.runs.Add(1)
	r := &run{s: s, cfg: &cfg, name: fmt.Sprintf("%s-%d-%d", instancePrefix, s.pid, n), ports: s.ports(n, len(cfg.Flows))}
	defer r.close()
	if cfg.HashTrace {
		r.hasher = netenv.NewTraceHasher(obs)
		obs = r.hasher
	}
	r.obs = obs
	if err := r.setup(); err != nil {
		return netenv.Result{}, err
	}
	res, err := r.execute(ctx)
	if err != nil {
		return netenv.Result{}, err
	}
	res.Wall = time.Since(start)
	return res, nil
}

// run is one Run.
type run struct {
	s      *Subject
	cfg    *netenv.Config
	name   string
	ports  []uint16
	obs    observe.Observer
	hasher *netenv.TraceHasher

	snd, rcv *netns
	flows    []*appFlow
	lfd      int
	in       *instance
	bpf      *bpfSource
	emu      *emulator
	tr       *tracer
}

// setup builds the two namespaces, the sockets and the tracefs instance.
func (r *run) setup() error {
	var err error
	r.snd, err = newNS(func(n *netns) error {
		if err := configure(n, hostConfig{addr: senderIP, peer: receiverIP, sack: r.cfg.SACK, initCwnd: initCwnd}); err != nil {
			return fmt.Errorf("sender namespace: %w", err)
		}
		for i, fc := range r.cfg.Flows {
			f, err := newSenderSocket(i, fc, r.ports[i])
			if err != nil {
				return err
			}
			r.flows = append(r.flows, f)
		}
		return nil
	})
	if err != nil {
		return err
	}
	r.rcv, err = newNS(func(n *netns) error {
		if err := configure(n, hostConfig{addr: receiverIP, peer: senderIP, sack: r.cfg.SACK, initCwnd: initCwnd, receiver: true}); err != nil {
			return fmt.Errorf("receiver namespace: %w", err)
		}
		fd, err := newListener(len(r.cfg.Flows))
		r.lfd = fd
		return err
	})
	if err != nil {
		return err
	}
	cookies := make([]uint64, len(r.flows))
	for i, f := range r.flows {
		cookies[i] = f.cookie
	}
	if r.s.bpfErr == nil {
		if r.bpf, err = newBPFSource(r.s.offsets, cookies); err == nil {
			return nil
		}
		slog.Warn("linux subject: BPF state source failed; reading tracefs events", "err", err)
	}
	r.in, err = newInstance(r.name, cookies, r.ports)
	return err
}

// close releases everything the run holds; the namespaces disappear with
// their last descriptor.
func (r *run) close() {
	for _, f := range r.flows {
		f.close()
	}
	if r.lfd > 0 {
		_ = unix.Close(r.lfd)
		r.lfd = 0
	}
	if r.in != nil {
		r.in.remove()
		r.in = nil
	}
	if r.bpf != nil {
		r.bpf.close()
		r.bpf = nil
	}
	if r.snd != nil {
		r.snd.close()
	}
	if r.rcv != nil {
		r.rcv.close()
	}
}

// execute runs the emulator, the applications and the tracer until every
// flow is done, the time cap, or ctx.
func (r *run) execute(ctx context.Context) (netenv.Result, error) {
	cfg := r.cfg
	capTime := r.s.opt.MaxWall
	if cfg.Limits.MaxTime > 0 {
		capTime = min(capTime, cfg.Limits.MaxTime)
	}
	e := newEmulator(cfg, r.snd.tun, r.rcv.tun, r.ports, capTime)
	e.realtime = !r.s.opt.NormalPriority
	r.emu = e
	tr := &tracer{in: r.in, obs: r.obs, byCookie: map[uint64]*traceFlow{}, byPort: map[uint16]*traceFlow{}}
	for i, f := range r.flows {
		tf := &traceFlow{idx: i, fd: f.fd, port: f.port, cookie: f.cookie}
		tf.rec.Flow = int32(i)
		tr.flows = append(tr.flows, tf)
		tr.byCookie[f.cookie] = tf
		tr.byPort[f.port] = tf
	}
	r.tr = tr

	appCtx, stopApps := context.WithCancel(ctx)
	defer stopApps()
	t0 := monoNow()
	e.t0, tr.t0 = t0, t0
	var wg sync.WaitGroup
	trDone := make(chan struct{})
	go func() {
		defer close(trDone)
		if r.bpf != nil {
			if err := r.bpf.read(t0, tr.handle); err != nil {
				slog.Warn("linux subject: reading the BPF ring", "err", err)
			}
			return
		}
		tr.read()
	}()
	rcv := newReceiverApp(r.lfd, r.ports)
	r.lfd = 0 // owned by the receiver now
	wg.Add(1)
	go func() {
		defer wg.Done()
		rcv.serve(appCtx)
	}()
	appErrs := make(chan error, len(r.flows))
	for _, f := range r.flows {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f.send(appCtx, cfg.Schedule, t0); err != nil && appCtx.Err() == nil {
				appErrs <- err
			}
		}()
	}
	emuErr := make(chan error, 1)
	go func() { emuErr <- e.run(appCtx) }()
	var err error
	select {
	case err = <-emuErr:
	case aerr := <-appErrs:
		stopApps()
		<-emuErr
		err = aerr
	}
	end := e.sim.Now()
	stopApps()
	// The last ACK's probe fires as the kernel processes it, right after
	// the emulator wrote it; give the tracer a moment to read it and
	// whatever else is buffered, then stop it.
	if r.bpf != nil {
		// The last ACK's probe fires as the kernel processes it,
		// within the emulator's write: its record is in the ring.
		r.bpf.stop()
	} else {
		_ = r.in.pipe.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	}
	<-trDone
	for _, f := range r.flows {
		f.stop()
	}
	rcv.stop()
	wg.Wait()
	if err != nil {
		if ctx.Err() != nil {
			return netenv.Result{}, ctx.Err()
		}
		return netenv.Result{}, err
	}
	for i, tf := range tr.flows {
		at := end
		if wf := e.flows[i]; wf.done {
			at = wf.doneAt
		}
		tr.final(tf, at)
	}
	if tr.bad > 0 {
		slog.Warn("linux subject: unparsed trace lines", "lines", tr.bad)
	}
	if tr.lost > 0 {
		slog.Warn("linux subject: the tracefs ring buffer dropped events; this run's trace has gaps", "run", r.name, "lost", tr.lost)
	}
	res := netenv.Result{SimTime: end, Events: e.sim.Events(), Capped: e.sim.Capped()}
	if res.Capped {
		res.CapReason = "time"
	}
	for _, l := range e.links {
		res.Drops += l.Drops()
		res.Losses += l.Losses()
	}
	if r.hasher != nil {
		res.TraceSHA256 = r.hasher.Sum()
	}
	undos := r.undos()
	for i, f := range r.flows {
		wf, tf := e.flows[i], tr.flows[i]
		fr := netenv.FlowResult{
			CCA:            f.cca,
			SegmentsSent:   wf.segs,
			Retransmits:    wf.retx,
			Recoveries:     tf.recov,
			DeliveredBytes: rcv.received(i),
			Done:           wf.done,
			DoneAtS:        wf.doneAt.Seconds(),
			ConnectFailed:  !wf.issKnown || f.connectFailed.Load(),
		}
		if info := f.lastInfo; info != nil {
			fr.Timeouts = uint64(info.Total_rto)
			fr.Retransmits = max(fr.Retransmits, uint64(info.Total_retrans))
		}
		if len(r.flows) == 1 {
			fr.Undos = undos
		}
		rec := &tf.rec
		fr.Final = netenv.FinalState{Cwnd: rec.Cwnd, SSThresh: rec.SSThresh,
			SRTTms: float64(rec.SRTT) / 1e6, RTTVarMs: float64(rec.RTTVar) / 1e6, CAState: rec.CAState.String()}
		res.Flows = append(res.Flows, fr)
	}
	r.s.mu.Lock()
	r.s.lastStats = e.stats
	r.s.mu.Unlock()
	slog.Debug("linux subject: run done", "name", r.name, "sim", end, "events", res.Events,
		"trace_lines", tr.lines, "foreign", e.stats.Foreign, "write_errors", e.stats.WriteErrors)
	return res, nil
}

// undos reads the sender namespace's undo counters (the namespace holds
// only this run's sockets, so its MIB is the run's): full, partial,
// D-SACK and loss undos (include/uapi/linux/snmp.h).
func (r *run) undos() uint64 {
	var total uint64
	_ = r.snd.in(func() error {
		// /proc/thread-self/net, not /proc/net (= /proc/self/net,
		// the thread group leader's namespace).
		m, err := readNetstat("/proc/thread-self/net/netstat")
		if err != nil {
			return err
		}
		total = m["TCPFullUndo"] + m["TCPPartialUndo"] + m["TCPDSACKUndo"] + m["TCPLossUndo"]
		return nil
	})
	return total
}

// readNetstat parses /proc/net/netstat's TcpExt lines.
func readNetstat(path string) (map[string]uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(string(b), "\n")
	m := map[string]uint64{}
	for i := 0; i+1 < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "TcpExt:") || !strings.HasPrefix(lines[i+1], "TcpExt:") {
			continue
		}
		keys, vals := strings.Fields(lines[i])[1:], strings.Fields(lines[i+1])[1:]
		for j := range min(len(keys), len(vals)) {
			var v uint64
			fmt.Sscan(vals[j], &v)
			m[keys[j]] = v
		}
		break
	}
	return m, nil
}

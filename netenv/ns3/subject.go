package ns3

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
	"github.com/actfuzz/actfuzz/netenv/tcp"
)

// MSS is the segment size the driver gives ns-3's sockets (the native
// sender's tcp.DefaultMSS); byte counts are turned into packets with it.
const MSS = tcp.DefaultMSS

// Defaults of Options.
const (
	DefaultRunTimeout   = 2 * time.Minute
	DefaultStartTimeout = 20 * time.Second
)

// Options configure a Subject.
type Options struct {
	// Driver is the driver binary; "" finds it (FindDriver).
	Driver string
	// RunTimeout bounds the wall time of one run; a driver that has not
	// answered by then is killed and the run is a "hang" fault.
	RunTimeout time.Duration
	// StartTimeout bounds the wait for a new driver's HELLO line.
	StartTimeout time.Duration
}

// Subject runs configurations on ns-3.37's TCP models through persistent
// driver processes (one per concurrent Run; idle ones are reused). It is
// safe for concurrent use. See the package documentation.
type Subject struct {
	path   string
	opt    Options
	models []string

	mu     sync.Mutex
	idle   []*driver
	closed bool

	started atomic.Uint64
}

var _ netenv.Subject = (*Subject)(nil)

// Open finds the driver, starts it once to check that ns-3 is usable and
// returns the subject. When ns-3 or the driver is missing the error says,
// once, to run `make ns3` (errors.Is(err, ErrNotInstalled)).
func Open() (netenv.Subject, error) {
	s, err := New(Options{})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// New is Open with options.
func New(opt Options) (*Subject, error) {
	if opt.RunTimeout <= 0 {
		opt.RunTimeout = DefaultRunTimeout
	}
	if opt.StartTimeout <= 0 {
		opt.StartTimeout = DefaultStartTimeout
	}
	path := opt.Driver
	if path == "" {
		p, err := FindDriver()
		if err != nil {
			return nil, err
		}
		path = p
	} else if !isExec(path) {
		return nil, notInstalled(path + " is not an executable file")
	}
	s := &Subject{path: path, opt: opt}
	d, err := s.start()
	if err != nil {
		return nil, err
	}
	s.models = d.models
	s.idle = append(s.idle, d)
	return s, nil
}

// Name is "ns3".
func (s *Subject) Name() string { return "ns3" }

// CCAs lists the ns-3 models the driver offers.
func (s *Subject) CCAs() []string { return append([]string(nil), s.models...) }

// Capabilities implements netenv.Subject: the driver's models by their
// ns-3 names, with the native names as aliases (see Model); every
// parameter of P that Params names (params.go); single-link and dumbbell (the driver builds no
// parking-lot); deterministic (ns-3's simulator and its seeded streams);
// profiles do not apply (ns-3's TCP is its own); every base variable (the
// driver reports each field of its R lines from ns-3's state, see doc.go)
// and no variables of its own (the models keep them private).
func (s *Subject) Capabilities() netenv.Capabilities { return capabilities(s.models) }

// DefaultCapabilities are the capabilities of a driver that offers every
// model of Models, for listings made without starting one.
func DefaultCapabilities() netenv.Capabilities { return capabilities(nil) }

func capabilities(models []string) netenv.Capabilities {
	if len(models) == 0 {
		models = Models
	}
	return netenv.Capabilities{Name: "ns3", CCAs: slices.Clone(models), Aliases: maps.Clone(nativeToNS3),
		Params:     Params(),
		Topologies: []string{netenv.TopoSingleLink, netenv.TopoDumbbell}, Deterministic: true,
		Vars: func(string) []ccai.VarDesc { return nil }}
}

// Driver is the path of the driver binary in use.
func (s *Subject) Driver() string { return s.path }

// Started counts the driver processes started so far (restarts after
// faults included).
func (s *Subject) Started() uint64 { return s.started.Load() }

// Close stops the idle drivers; drivers of runs in progress stop when
// their runs end.
func (s *Subject) Close() error {
	s.mu.Lock()
	idle := s.idle
	s.idle, s.closed = nil, true
	s.mu.Unlock()
	for _, d := range idle {
		d.quit()
	}
	return nil
}

func (s *Subject) start() (*driver, error) {
	s.started.Add(1)
	return startDriver(s.path, s.opt.StartTimeout)
}

func (s *Subject) get() (*driver, error) {
	s.mu.Lock()
	if n := len(s.idle); n > 0 {
		d := s.idle[n-1]
		s.idle = s.idle[:n-1]
		s.mu.Unlock()
		return d, nil
	}
	s.mu.Unlock()
	return s.start()
}

func (s *Subject) put(d *driver) {
	s.mu.Lock()
	if !s.closed {
		s.idle = append(s.idle, d)
		d = nil
	}
	s.mu.Unlock()
	if d != nil {
		d.quit()
	}
}

// Run simulates cfg on ns-3, streaming state records to obs (which may be
// nil). A driver crash, hang or garbage output is a *netenv.Fault (Kind
// "crash", "hang" or "garbage"); the driver is then killed and the next
// Run starts a new one. A cancelled ctx returns ctx.Err(); a ctx deadline
// that passes during the run is a "hang".
func (s *Subject) Run(ctx context.Context, cfg netenv.Config, obs observe.Observer) (netenv.Result, error) {
	start := time.Now()
	models, err := validate(&cfg)
	if err != nil {
		return netenv.Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return netenv.Result{}, err
	}
	d, err := s.get()
	if err != nil {
		return netenv.Result{}, err
	}
	x := &exchange{s: s, d: d, cfg: &cfg, models: models}
	res, err := x.run(ctx, obs)
	if x.healthy {
		s.put(d)
	} else {
		d.kill()
	}
	if err != nil {
		return netenv.Result{}, err
	}
	res.Wall = time.Since(start)
	return res, nil
}

// validate checks what the ns-3 subject can run and resolves the models.
func validate(cfg *netenv.Config) ([]string, error) {
	if len(cfg.Flows) == 0 {
		return nil, fmt.Errorf("flows: at least one flow is needed")
	}
	models := make([]string, len(cfg.Flows))
	for i, f := range cfg.Flows {
		m, err := Model(f.CCA)
		if err != nil {
			return nil, fmt.Errorf("flow %d: %w", i, err)
		}
		if f.Bytes == 0 {
			return nil, fmt.Errorf("flow %d: bytes must be > 0", i)
		}
		if f.Bytes > math.MaxUint32-1 {
			return nil, fmt.Errorf("flow %d: bytes = %d: the ns-3 subject transfers at most 4 GiB per flow (32-bit sequence space)", i, f.Bytes)
		}
		models[i] = m
	}
	switch cfg.Topology {
	case "", netenv.TopoSingleLink, netenv.TopoDumbbell:
	default:
		return nil, fmt.Errorf("topology %q: want %s or %s", cfg.Topology, netenv.TopoSingleLink, netenv.TopoDumbbell)
	}
	if cfg.Scheduler != nil || cfg.DelayHook != nil {
		return nil, errors.New("ns3 subject: custom schedulers and delay hooks (the symbolic back-end) need the native subject")
	}
	if len(cfg.Flows) > 1000 {
		return nil, fmt.Errorf("flows: at most 1000 flows (%d given)", len(cfg.Flows))
	}
	if err := netenv.CheckExpressible(cfg.Schedule, Params(), "ns3"); err != nil {
		return nil, err
	}
	for k, ph := range cfg.Schedule {
		if ph.Env.AQM == netenv.AQMPIE {
			// ns-3.37 has a PieQueueDisc, but the driver does not map
			// it (its defaults and its rate estimator differ from RFC
			// 8033's timestamps, which would need checking first).
			return nil, fmt.Errorf("phase %d: aqm pie: the ns3 subject does not map PIE yet (droptail, red and codel)", k+1)
		}
	}
	for k := 1; k < len(cfg.Schedule); k++ {
		if a, b := cfg.Schedule[0].Env.AQM, cfg.Schedule[k].Env.AQM; a != b {
			return nil, fmt.Errorf("the ns3 subject cannot change aqm between phases (phase 1: %s, phase %d: %s): ns-3 cannot swap a device's root queue disc and keep the packets it holds", a, k+1, b)
		}
	}
	return models, cfg.Schedule.Validate()
}

// appBPS is the application rate in bit/s, 0 for unlimited: netenv's rule,
// rates at or above 1000× the bottleneck are unlimited.
func appBPS(e *netenv.Env) uint64 {
	if e.App >= e.BW*1000 {
		return 0
	}
	return uint64(math.Round(e.App * 1e6))
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// exchange is one request and its answer.
type exchange struct {
	s       *Subject
	d       *driver
	cfg     *netenv.Config
	models  []string
	id      string
	healthy bool
}

func (x *exchange) request() []byte {
	cfg := x.cfg
	maxTime, maxEvents := cfg.Limits.MaxTime, cfg.Limits.MaxEvents
	if maxTime == 0 {
		maxTime = netenv.DefaultMaxTime
	}
	if maxEvents == 0 {
		maxEvents = netenv.DefaultMaxEvents
	}
	sack := 0
	if cfg.SACK {
		sack = 1
	}
	var b strings.Builder
	fmt.Fprintf(&b, "RUN %s %d %d %d %d %d %d\n", x.id, cfg.Seed, sack, int64(maxTime), maxEvents, len(cfg.Flows), len(cfg.Schedule))
	for i, f := range cfg.Flows {
		fmt.Fprintf(&b, "FLOW %s %d\n", x.models[i], f.Bytes)
	}
	out := []byte(b.String())
	for i := range cfg.Schedule {
		out = appendPhase(out, &cfg.Schedule[i])
	}
	return out
}

// fault builds a subject fault naming the seed.
func (x *exchange) fault(kind, format string, args ...any) *netenv.Fault {
	f := &netenv.Fault{Kind: kind, Detail: fmt.Sprintf("ns-3 driver, seed %d: ", x.cfg.Seed) + fmt.Sprintf(format, args...)}
	if tail := strings.TrimSpace(x.d.stderr.String()); tail != "" {
		f.Stack = tail
	}
	return f
}

func (x *exchange) run(ctx context.Context, obs observe.Observer) (netenv.Result, error) {
	d := x.d
	d.nextID++
	x.id = strconv.FormatUint(d.nextID, 10)
	timeout := x.s.opt.RunTimeout
	deadline := time.Now().Add(timeout)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	_ = d.stdin.SetWriteDeadline(deadline)
	_ = d.stdout.SetReadDeadline(deadline)
	defer func() {
		_ = d.stdin.SetWriteDeadline(time.Time{})
		_ = d.stdout.SetReadDeadline(time.Time{})
	}()
	stop := context.AfterFunc(ctx, func() { _ = d.stdout.SetReadDeadline(time.Now()) })
	defer stop()

	if _, err := d.stdin.Write(x.request()); err != nil {
		return netenv.Result{}, x.ioFault(ctx, err, timeout)
	}

	var hasher *netenv.TraceHasher
	sink := obs
	if x.cfg.HashTrace {
		hasher = netenv.NewTraceHasher(obs)
		sink = hasher
	}
	p := parser{nflows: len(x.cfg.Flows)}
	res := netenv.Result{Flows: make([]netenv.FlowResult, len(x.cfg.Flows))}
	gotF := make([]bool, len(x.cfg.Flows))
	for {
		line, err := d.r.ReadSlice('\n')
		if err != nil {
			if errors.Is(err, bufio.ErrBufferFull) {
				return netenv.Result{}, x.fault("garbage", "a line longer than %d bytes: %q", d.r.Size(), truncate(string(line), 80))
			}
			return netenv.Result{}, x.ioFault(ctx, err, timeout)
		}
		line = line[:len(line)-1]
		switch {
		case len(line) > 2 && line[0] == 'R' && line[1] == ' ':
			if err := p.record(line[2:]); err != nil {
				return netenv.Result{}, x.fault("garbage", "%v in %q", err, truncate(string(line), 120))
			}
			if sink != nil {
				sink.Observe(&p.rec)
			}
		case len(line) > 2 && line[0] == 'F' && line[1] == ' ':
			i, fr, err := p.flow(line[2:])
			if err != nil || gotF[i] {
				if err == nil {
					err = errors.New("flow reported twice")
				}
				return netenv.Result{}, x.fault("garbage", "%v in %q", err, truncate(string(line), 120))
			}
			gotF[i] = true
			fr.CCA = x.cfg.Flows[i].CCA
			res.Flows[i] = fr
		case strings.HasPrefix(string(line), "DONE "):
			if err := p.done(line[5:], x.id, &res); err != nil {
				return netenv.Result{}, x.fault("garbage", "%v in %q", err, truncate(string(line), 120))
			}
			for i, ok := range gotF {
				if !ok {
					return netenv.Result{}, x.fault("garbage", "no result for flow %d before DONE", i)
				}
			}
			if hasher != nil {
				res.TraceSHA256 = hasher.Sum()
			}
			x.healthy = true
			return res, nil
		case strings.HasPrefix(string(line), "ERR "):
			f := strings.SplitN(string(line), " ", 3)
			if len(f) == 3 && f[1] == x.id {
				x.healthy = true
				return netenv.Result{}, fmt.Errorf("ns3: the driver rejected the configuration: %s", f[2])
			}
			return netenv.Result{}, x.fault("garbage", "unexpected %q", truncate(string(line), 120))
		default:
			return netenv.Result{}, x.fault("garbage", "unexpected output %q", truncate(string(line), 120))
		}
	}
}

// ioFault classifies a failed read or write: cancellation, hang or crash.
func (x *exchange) ioFault(ctx context.Context, err error, timeout time.Duration) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return ctx.Err()
		}
		if ctx.Err() != nil {
			return x.fault("hang", "no answer before the context's deadline")
		}
		return x.fault("hang", "no answer within %v", timeout)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, os.ErrClosed) || isBrokenPipe(err) {
		return x.fault("crash", "the driver died (%s)", x.d.exitStatus())
	}
	return x.fault("crash", "%v (%s)", err, x.d.exitStatus())
}

func isBrokenPipe(err error) bool {
	return err != nil && strings.Contains(err.Error(), "broken pipe")
}

// parser decodes the driver's lines into records and results.
type parser struct {
	nflows int
	rec    observe.Record
	last   time.Duration
	nums   [16]uint64
}

// fields parses exactly n unsigned decimal fields separated by single
// spaces.
func (p *parser) fields(b []byte, n int) error {
	k := 0
	var v uint64
	digits := 0
	for i := 0; i <= len(b); i++ {
		if i == len(b) || b[i] == ' ' {
			if digits == 0 {
				return errors.New("empty field")
			}
			if k >= n {
				return fmt.Errorf("more than %d fields", n)
			}
			p.nums[k] = v
			k++
			v, digits = 0, 0
			continue
		}
		c := b[i] - '0'
		if c > 9 {
			return fmt.Errorf("bad character %q", b[i])
		}
		if v > (math.MaxUint64-uint64(c))/10 {
			return errors.New("number out of range")
		}
		v = v*10 + uint64(c)
		digits++
	}
	if k != n {
		return fmt.Errorf("%d fields, want %d", k, n)
	}
	return nil
}

func pkts(b uint64) uint32 { return uint32(min(b/MSS, math.MaxUint32)) }

func ssthresh(b uint64) uint32 {
	if b >= math.MaxUint32 { // ns-3's initial (infinite) ssthresh
		return ccai.InfiniteSSThresh
	}
	return pkts(b)
}

func dur(ns uint64) (time.Duration, error) {
	if ns > math.MaxInt64 {
		return 0, errors.New("time out of range")
	}
	return time.Duration(ns), nil
}

var reasons = [...]observe.Reason{observe.ReasonAck, observe.ReasonState, observe.ReasonRTO}

func (p *parser) record(b []byte) error {
	if err := p.fields(b, 14); err != nil {
		return err
	}
	n := &p.nums
	r := &p.rec
	var err error
	if r.Time, err = dur(n[0]); err != nil {
		return err
	}
	if r.Time < p.last {
		return fmt.Errorf("time went back from %v to %v", p.last, r.Time)
	}
	p.last = r.Time
	if n[1] >= uint64(p.nflows) {
		return fmt.Errorf("flow %d out of range", n[1])
	}
	if n[2] >= uint64(len(reasons)) {
		return fmt.Errorf("reason %d out of range", n[2])
	}
	if n[8] > uint64(ccai.StateLoss) || n[9] > uint64(ccai.StateLoss) {
		return errors.New("ca_state out of range")
	}
	r.Flow = int32(n[1])
	r.Reason = reasons[n[2]]
	r.Cwnd = pkts(n[3])
	r.SSThresh = ssthresh(n[4])
	if r.SRTT, err = dur(n[5]); err != nil {
		return err
	}
	if r.RTTVar, err = dur(n[6]); err != nil {
		return err
	}
	if r.RTO, err = dur(n[7]); err != nil {
		return err
	}
	r.CAState = ccai.CAState(n[8])
	r.PrevCAState = ccai.CAState(n[9])
	r.PriorCwnd = pkts(n[10])
	r.InFlight = uint32(min((n[11]+MSS-1)/MSS, math.MaxUint32))
	r.Delivered = n[12] / MSS
	// The driver prints bit/s; observe.Record's pacing rate is bytes/s,
	// as the native sender's (Sock.PacingRate), so that one condition or
	// trace column means the same on both subjects.
	r.PacingRate = n[13] / 8
	r.Vars = nil
	return nil
}

func (p *parser) flow(b []byte) (int, netenv.FlowResult, error) {
	if err := p.fields(b, 13); err != nil {
		return 0, netenv.FlowResult{}, err
	}
	n := &p.nums
	if n[0] >= uint64(p.nflows) {
		return 0, netenv.FlowResult{}, fmt.Errorf("flow %d out of range", n[0])
	}
	if n[6] > 1 || n[12] > uint64(ccai.StateLoss) {
		return 0, netenv.FlowResult{}, errors.New("field out of range")
	}
	for _, i := range []int{7, 10, 11} {
		if n[i] > math.MaxInt64 {
			return 0, netenv.FlowResult{}, errors.New("time out of range")
		}
	}
	return int(n[0]), netenv.FlowResult{
		SegmentsSent:   n[1],
		Retransmits:    n[2],
		Timeouts:       n[3],
		Recoveries:     n[4],
		DeliveredBytes: n[5],
		Done:           n[6] == 1,
		DoneAtS:        float64(n[7]) / 1e9,
		Final: netenv.FinalState{
			Cwnd:     pkts(n[8]),
			SSThresh: ssthresh(n[9]),
			SRTTms:   float64(n[10]) / 1e6,
			RTTVarMs: float64(n[11]) / 1e6,
			CAState:  ccai.CAState(n[12]).String(),
		},
	}, nil
}

func (p *parser) done(b []byte, id string, res *netenv.Result) error {
	f := strings.Split(string(b), " ")
	if len(f) != 8 {
		return fmt.Errorf("%d fields, want 8", len(f))
	}
	if f[0] != id {
		return fmt.Errorf("answer to request %s, want %s", f[0], id)
	}
	var v [6]uint64
	for i, s := range []string{f[1], f[2], f[4], f[5], f[6], f[7]} {
		x, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return err
		}
		v[i] = x
	}
	t, err := dur(v[0])
	if err != nil {
		return err
	}
	res.SimTime = t
	res.Events = v[1]
	res.Drops = v[2]
	res.Losses = v[3]
	res.AQMDrops = v[4]
	res.Marks = v[5]
	switch f[3] {
	case "-":
	case "time", "events":
		res.Capped, res.CapReason = true, f[3]
	default:
		return fmt.Errorf("cap %q", f[3])
	}
	return nil
}

package corpus

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
	"github.com/actfuzz/actfuzz/netenv/sim"
	"github.com/actfuzz/actfuzz/netenv/symbolic"
	"github.com/actfuzz/actfuzz/netenv/tcp"
)

// This file is `actfuzz sym --seed`: a symbolic window of n packets'
// extra delays explored on the whole configuration of any native seed, every
// other packet keeping the delays the seed's PRNG streams give it (symbolic
// plus random, after the packet-dynamics paper). Every class's state
// records go through the seed's condition; each class whose witness hits it
// becomes a seed with pinned delays (PinnedDelays) that Replay reproduces.

// PinnedDelays is a window of packets of one flow with fixed extra delays,
// added on the bottleneck to the random queuing delay each still draws from
// the seed's streams (netenv.Config.DelayHookAdds), so every other packet
// is as the seed had it. The window is counted as in a symbolic TCP
// window: data segments by index (first transmissions), ACKs in the order
// they leave the bottleneck.
type PinnedDelays struct {
	Flow int    `json:"flow"`
	Kind string `json:"kind"` // "data" or "ack"
	// From is the index of the window's first packet.
	From     uint64    `json:"from"`
	DelaysMS []float64 `json:"delays_ms"`
	// What the exploration that wrote the seed knew: the --window text,
	// the branch, its class (constraints over d1…dn, ms) and reductions.
	Window      string   `json:"window,omitempty"`
	Branch      int      `json:"branch"`
	Reductions  string   `json:"reductions,omitempty"`
	Constraints []string `json:"constraints,omitempty"`
}

// apply sets a run configuration's delay hook (a fresh one: an ACK window
// counts ACKs, so every run needs its own Config).
func (p *PinnedDelays) apply(cfg *netenv.Config) error {
	if p.Flow < 0 || p.Flow >= len(cfg.Flows) {
		return fmt.Errorf("flow: %d, want 0–%d", p.Flow, len(cfg.Flows)-1)
	}
	if len(p.DelaysMS) == 0 || len(p.DelaysMS) > symbolic.MaxVars {
		return fmt.Errorf("delays_ms: %d delays, want 1–%d", len(p.DelaysMS), symbolic.MaxVars)
	}
	ds := make([]time.Duration, len(p.DelaysMS))
	for i, d := range p.DelaysMS {
		if math.IsNaN(d) || d < 0 || d > netenv.MaxDelay {
			return fmt.Errorf("delays_ms[%d]: %v ms, want 0–%g", i, d, netenv.MaxDelay)
		}
		ds[i] = time.Duration(math.Round(d * 1e6))
	}
	switch p.Kind {
	case "data", "ack":
	default:
		return fmt.Errorf("kind: %q, want data or ack", p.Kind)
	}
	hook, err := symbolic.WindowHook(p.Flow, p.Kind, p.From, ds)
	if err != nil {
		return err
	}
	cfg.DelayHook, cfg.DelayHookAdds = hook, true
	return nil
}

// WindowSpec is a parsed --window: "last N before hit", "data A..B" or
// "acks A..B" (packet indices of the flow, inclusive).
type WindowSpec struct {
	Text string
	Kind string // "before", "data" or "ack"
	N    int    // "before"
	From int    // "data", "ack"
	To   int
}

// ParseWindowSpec parses a --window. Errors say what is wrong, not which
// flag (the caller adds it).
func ParseWindowSpec(s string) (WindowSpec, error) {
	w := WindowSpec{Text: s}
	f := strings.Fields(strings.ToLower(s))
	const want = "want 'last N before hit', 'data A..B' or 'acks A..B'"
	if len(f) == 0 {
		return w, errors.New("empty: " + want)
	}
	switch f[0] {
	case "last":
		if len(f) != 4 || f[2] != "before" || f[3] != "hit" {
			return w, fmt.Errorf("%q: %s", s, want)
		}
		n, err := strconv.Atoi(f[1])
		if err != nil || n < 1 || n > symbolic.MaxVars {
			return w, fmt.Errorf("%q: N = %s, want 1–%d packets", s, f[1], symbolic.MaxVars)
		}
		w.Kind, w.N = "before", n
		return w, nil
	case "data", "acks", "ack":
		if len(f) != 2 {
			return w, fmt.Errorf("%q: %s", s, want)
		}
		a, b, ok := strings.Cut(f[1], "..")
		x, err1 := strconv.Atoi(a)
		y, err2 := strconv.Atoi(b)
		if !ok || err1 != nil || err2 != nil || x < 0 || y < x {
			return w, fmt.Errorf("%q: range %q, want A..B with 0 ≤ A ≤ B (packet indices of the flow)", s, f[1])
		}
		if y-x+1 > symbolic.MaxVars {
			return w, fmt.Errorf("%q: %d packets, at most %d", s, y-x+1, symbolic.MaxVars)
		}
		w.Kind, w.From, w.To = "data", x, y
		if f[0] != "data" {
			w.Kind = "ack"
		}
		return w, nil
	}
	return w, fmt.Errorf("%q: %s", s, want)
}

// ParseRangeMS parses a --range: "LO..HI" with an optional unit (ms, the
// default, or s) on either bound, e.g. "1..1024ms".
func ParseRangeMS(s string) (lo, hi time.Duration, err error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), "..")
	if !ok {
		return 0, 0, fmt.Errorf("%q: want LO..HI, e.g. 1..1024ms", s)
	}
	unit := time.Millisecond
	parse := func(v string) (float64, error) {
		v = strings.TrimSpace(v)
		switch {
		case strings.HasSuffix(v, "ms"):
			v = strings.TrimSuffix(v, "ms")
		case strings.HasSuffix(v, "s"):
			v, unit = strings.TrimSuffix(v, "s"), time.Second
		}
		return strconv.ParseFloat(v, 64)
	}
	x, err1 := parse(b)
	y, err2 := parse(a)
	if err1 != nil || err2 != nil || math.IsNaN(x) || math.IsNaN(y) {
		return 0, 0, fmt.Errorf("%q: want LO..HI, e.g. 1..1024ms", s)
	}
	lo, hi = time.Duration(math.Round(y*float64(unit))), time.Duration(math.Round(x*float64(unit)))
	if lo < 0 || hi < lo || hi > time.Duration(netenv.MaxDelay*float64(time.Millisecond)) {
		return 0, 0, fmt.Errorf("%q: want 0 ≤ LO ≤ HI ≤ %g ms", s, netenv.MaxDelay)
	}
	return lo, hi, nil
}

// FlowAtHit, as SymSeedOptions.Flow with the window "last N before hit",
// puts the window on the flow that emitted a state record at the hit time:
// ACT's symbolic step knows when a simulation went somewhere new (a state
// record's time) but not whose record it was, and on a shared bottleneck
// the flow that got there is the one whose packets' orders matter. When
// several flows recorded at that very nanosecond the lowest is taken, and
// flow 0 when none did.
const FlowAtHit = -2

// SymSeedOptions configure ExploreSeed.
type SymSeedOptions struct {
	Window WindowSpec
	// Flow is the window's flow (-1: the finding's, else 0;
	// FlowAtHit: the flow of the state record at the hit).
	Flow        int
	Lo, Hi, Res time.Duration
	Reductions  symbolic.Reductions
	MaxBranches int
	TimeLimit   time.Duration
	// NoSnapshot runs every branch from time zero (symbolic.Options).
	NoSnapshot bool
	// OutDir receives the witness seeds ("": none are written); Name
	// prefixes their file names.
	OutDir, Name string
	// MaxSeeds bounds the witness seeds written per condition, the
	// first classes found (0: one for every class that hits).
	MaxSeeds int
	// At, when positive, is the moment "last N before hit" ends at
	// instead of the finding's time (ACT's symbolic step: the moment a
	// simulation reached a new region, act/symstep.go).
	At time.Duration
	// Conditions are the conditions every branch is checked against and
	// witness seeds are replayed with (nil: the seed's finding's).
	Conditions []ConditionSpec
	// Watch, when set, sees every branch's state records in place of the
	// exploration's own watcher over Conditions; its Hits must name the
	// Conditions that held (act's Runner feeds coverage this way).
	Watch symbolic.RunWatcher
	// OnBranch, when set, sees every branch with the window pinned at the
	// branch's witness (the seed's Pinned for PinnedSeed); an error stops
	// the exploration.
	OnBranch func(b *symbolic.Branch, pin *PinnedDelays) error
}

// CondSummary is what the exploration found of one condition.
type CondSummary struct {
	Condition string `json:"condition"`
	// Classes is the number of classes (branches) in which it held.
	Classes int `json:"classes"`
	// Seeds is the number of witness seeds written for them; Mismatch
	// the classes whose witness, replayed on the default scheduler, did
	// not hit (no seed is written for them).
	Seeds    int `json:"seeds"`
	Mismatch int `json:"mismatch,omitempty"`
	// Unwritten counts the hitting classes left without a seed by
	// SymSeedOptions.MaxSeeds.
	Unwritten int `json:"unwritten,omitempty"`
	// MinMS and MaxMS are, per window packet, its smallest and greatest
	// extra delay (ms) over the classes where the condition held.
	MinMS []float64 `json:"min_ms"`
	MaxMS []float64 `json:"max_ms"`
}

// SymSeedResult is the outcome of ExploreSeed.
type SymSeedResult struct {
	Report *symbolic.Report `json:"report"`
	// Window is the resolved window: flow, kind and first packet.
	Flow       int           `json:"flow"`
	Kind       string        `json:"kind"`
	From       uint64        `json:"from"`
	N          int           `json:"n"`
	Conditions []CondSummary `json:"conditions"`
	Seeds      []string      `json:"seeds,omitempty"`
	// LocateEvents is the simulated events of the concrete run that
	// located a "last N before hit" window (0 for the other windows);
	// Report.Events counts the branches'.
	LocateEvents uint64 `json:"locate_events,omitempty"`
}

// seedWatch is the seed's condition on every branch (symbolic.RunWatcher).
type seedWatch struct {
	w     *Watcher
	sched netenv.Schedule
	hits  map[string]bool
}

func newSeedWatch(s *Seed, specs []ConditionSpec) (*seedWatch, error) {
	w, err := NewWatcherFor(netenv.NativeCapabilities(), s.CCAI, specs)
	if err != nil {
		return nil, err
	}
	sw := &seedWatch{w: w, sched: s.Schedule, hits: map[string]bool{}}
	w.OnHit = func(_ int, c *Condition, _ []float64, _ time.Duration) { sw.hits[c.Name] = true }
	return sw, nil
}

func (sw *seedWatch) Observe(r *observe.Record) { sw.w.Observe(r) }
func (sw *seedWatch) Reset()                    { sw.w.Start(sw.sched); clear(sw.hits) }
func (sw *seedWatch) Hits() []string {
	var out []string
	for k := range sw.hits {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// seedConditions are the conditions a seed's exploration checks: its
// finding's.
func seedConditions(s *Seed) []ConditionSpec {
	if f := s.Finding; f != nil && f.Kind == "condition" {
		return []ConditionSpec{f.Spec()}
	}
	return nil
}

// lastBefore gives, per flow, the index of the highest data segment that an
// ACK (its cumulative ACK or a SACK block) reports received, among the ACKs
// that can have reached the sender by t: sent by the receiver at least the
// propagation delay in force at t before it. The window "last N before
// hit" ends there, with packets whose arrivals and ACKs precede the hit
// (-1: none). With flowAtHit it also gives the lowest flow that emitted a
// state record at exactly t (-1: none, or not asked; FlowAtHit): only then
// does the run emit records. It comes from a concrete run of the
// seed. Only ACKs crossing the bottleneck's hooked link are seen, which
// every flow's do except on a parking lot (flow 0's do there too).
func lastBefore(ctx context.Context, cfg netenv.Config, t time.Duration, flowAtHit bool) (last []int64, atHit int, events uint64, err error) {
	last = make([]int64, len(cfg.Flows))
	for i := range last {
		last[i] = -1
	}
	atHit = -1
	ackBy := t - time.Duration(EnvAt(cfg.Schedule, t).Delay*float64(time.Millisecond))
	cfg.DelayHook = func(p *sim.Packet) (time.Duration, int16, bool) {
		if int(p.Flow) >= len(last) || !p.IsAck || p.SYN || p.SentAt > ackBy {
			return 0, 0, false
		}
		end := p.Ack // one past the highest byte reported received
		for i := 0; i < int(p.NSACK) && i < len(p.SACK); i++ {
			if i == 0 && p.DSACK {
				continue
			}
			end = max(end, p.SACK[i].End)
		}
		if end > 0 {
			last[p.Flow] = max(last[p.Flow], int64((end+tcp.DefaultMSS-1)/tcp.DefaultMSS)-1)
		}
		return 0, 0, false
	}
	rec := recordAt{t: t, flow: -1}
	var obs observe.Observer
	if flowAtHit {
		obs = &rec
	}
	r, err := netenv.Run(ctx, cfg, obs)
	if err != nil {
		return nil, -1, r.Events, err
	}
	return last, rec.flow, r.Events, nil
}

// recordAt notes the lowest flow with a state record at time t.
type recordAt struct {
	t    time.Duration
	flow int
}

func (r *recordAt) Observe(rec *observe.Record) {
	if rec.Time == r.t && (r.flow < 0 || int(rec.Flow) < r.flow) {
		r.flow = int(rec.Flow)
	}
}

// ExploreSeed explores a window of a seed's packets; see the file comment.
// Usage errors (a window the seed cannot have) are *UsageError.
func ExploreSeed(ctx context.Context, s *Seed, opt SymSeedOptions) (*SymSeedResult, error) {
	if s.Witness != nil || s.Subject != "native" {
		return nil, &UsageError{"--seed", fmt.Sprintf("a native campaign seed is needed (this one is %s)", seedKind(s))}
	}
	if s.Pinned != nil {
		return nil, &UsageError{"--seed", "the seed already pins a window's delays (it was written by actfuzz sym --seed); explore the seed it came from"}
	}
	base, err := s.Config()
	if err != nil {
		return nil, &UsageError{"--seed", err.Error()}
	}
	x := &seedExploration{seed: s, opt: opt, base: base}
	if err := x.chooseFlow(); err != nil {
		return nil, err
	}
	if partial, err := x.chooseWindow(ctx); err != nil {
		return partial, err
	}
	sc, err := x.scenario()
	if err != nil {
		return nil, err
	}
	rep, err := symbolic.Explore(ctx, sc, symbolic.Options{
		Reductions: opt.Reductions, MaxBranches: opt.MaxBranches, TimeLimit: opt.TimeLimit, NoSnapshot: opt.NoSnapshot,
		KeepBranches: -1, OnBranch: func(b *symbolic.Branch) error { return x.onBranch(ctx, b) },
	})
	x.res.Report = rep
	for _, sp := range x.specs {
		x.res.Conditions = append(x.res.Conditions, *x.sums[sp.Name])
	}
	return x.res, err
}

// seedExploration is the state ExploreSeed threads through its phases:
// the flow and window chosen, the conditions watched, and the per-condition
// summaries each explored branch adds to.
type seedExploration struct {
	seed   *Seed
	opt    SymSeedOptions
	base   netenv.Config
	flow   int
	win    symbolic.Window
	locate uint64 // events run to locate a window before the hit
	name   string
	specs  []ConditionSpec
	sums   map[string]*CondSummary
	res    *SymSeedResult
}

// chooseFlow picks the flow whose packets are explored: the option's, else
// the finding's (unless the window's own locating run is to pick it).
func (x *seedExploration) chooseFlow() error {
	opt := x.opt
	x.flow = opt.Flow
	if opt.Flow == FlowAtHit && opt.Window.Kind != "before" {
		return &UsageError{"--flow", "the flow at the hit needs the window 'last N before hit'"}
	}
	if x.flow < 0 {
		x.flow = 0
		if x.seed.Finding != nil && opt.Flow != FlowAtHit {
			x.flow = x.seed.Finding.Flow
		}
	}
	if x.flow >= len(x.base.Flows) {
		return &UsageError{"--flow", fmt.Sprintf("%d: the seed has %d flows", x.flow, len(x.base.Flows))}
	}
	return nil
}

// chooseWindow turns the window option into the symbolic window. A window
// before the hit runs the seed once to locate it; when that fails the
// returned result carries the events that run took.
func (x *seedExploration) chooseWindow(ctx context.Context) (*SymSeedResult, error) {
	opt := x.opt
	x.win = symbolic.Window{Flow: x.flow, Select: "kind", Lo: opt.Lo, Hi: opt.Hi, Res: opt.Res}
	switch opt.Window.Kind {
	case "before":
		at := opt.At
		if at <= 0 {
			if x.seed.Finding == nil {
				return nil, &UsageError{"--window", fmt.Sprintf("%q needs a seed with a finding (a hit time); give 'data A..B' or 'acks A..B'", opt.Window.Text)}
			}
			at = time.Duration(x.seed.Finding.TimeNS)
		}
		lasts, atHit, events, err := lastBefore(ctx, x.base, at, opt.Flow == FlowAtHit)
		x.locate = events
		if err != nil {
			return &SymSeedResult{LocateEvents: x.locate}, err
		}
		if opt.Flow == FlowAtHit && atHit >= 0 {
			x.flow = atHit
			x.win.Flow = x.flow
		}
		last := lasts[x.flow]
		if last+1 < int64(opt.Window.N) {
			return &SymSeedResult{LocateEvents: x.locate}, &UsageError{"--window", fmt.Sprintf("%q: no ACK of flow %d that can have reached the sender before the hit at %v reports more than %d data segments received", opt.Window.Text, x.flow, at, last+1)}
		}
		x.win.Kind, x.win.From, x.win.N = "data", int(last)+1-opt.Window.N, opt.Window.N
	case "data", "ack":
		x.win.Kind, x.win.From, x.win.N = opt.Window.Kind, opt.Window.From, opt.Window.To-opt.Window.From+1
		if x.win.Kind == "data" {
			segs := (x.base.Flows[x.flow].Bytes + tcp.DefaultMSS - 1) / tcp.DefaultMSS
			if uint64(opt.Window.To) >= segs {
				return nil, &UsageError{"--window", fmt.Sprintf("%q: flow %d has data segments 0..%d", opt.Window.Text, x.flow, segs-1)}
			}
		}
	default:
		return nil, &UsageError{"--window", "missing: give 'last N before hit', 'data A..B' or 'acks A..B'"}
	}
	return nil, nil
}

// scenario builds the symbolic scenario over the seed's configuration, with
// the conditions watched, and the empty result and summaries it fills.
func (x *seedExploration) scenario() (*symbolic.Scenario, error) {
	opt := x.opt
	x.specs = opt.Conditions
	if x.specs == nil {
		x.specs = seedConditions(x.seed)
	}
	var watch symbolic.RunWatcher = opt.Watch
	if watch == nil {
		sw, err := newSeedWatch(x.seed, x.specs)
		if err != nil {
			return nil, err
		}
		watch = sw
	}
	x.name = opt.Name
	if x.name == "" {
		x.name = "seed"
	}
	baseCopy := x.base
	sc := &symbolic.Scenario{
		Name:   x.name,
		TCP:    &symbolic.TCPSpec{Base: &baseCopy, Watch: watch},
		End:    netenv.DefaultMaxTime,
		Window: x.win,
	}
	if err := sc.Validate(); err != nil {
		return nil, &UsageError{"--window", err.Error()}
	}
	x.res = &SymSeedResult{Flow: x.flow, Kind: x.win.Kind, From: uint64(x.win.From), N: x.win.N, LocateEvents: x.locate}
	x.sums = map[string]*CondSummary{}
	for _, sp := range x.specs {
		x.sums[sp.Name] = &CondSummary{Condition: sp.Name}
	}
	return sc, nil
}

// pin is branch b's witness as the delays a pinned seed replays.
func (x *seedExploration) pin(b *symbolic.Branch) *PinnedDelays {
	return &PinnedDelays{Flow: x.flow, Kind: x.win.Kind, From: uint64(x.win.From), DelaysMS: b.Witness,
		Window: x.opt.Window.Text, Branch: b.ID, Reductions: x.opt.Reductions.String(), Constraints: b.Constraints}
}

// onBranch takes one explored branch: it hands it to the caller's hook,
// widens the delay ranges of the conditions the branch meets, and writes
// the branch's witness as a seed when it reproduces a hit.
func (x *seedExploration) onBranch(ctx context.Context, b *symbolic.Branch) error {
	if x.opt.OnBranch != nil {
		if err := x.opt.OnBranch(b, x.pin(b)); err != nil {
			return err
		}
	}
	x.widenRanges(b)
	if len(b.Conditions) == 0 || x.opt.OutDir == "" {
		return nil
	}
	if x.seedsFull(b) {
		x.count(b, func(cs *CondSummary) { cs.Unwritten++ })
		return nil
	}
	ws, hit, _, err := PinnedSeed(ctx, x.seed, x.pin(b), x.specs)
	if err != nil {
		return err
	}
	if !hit {
		x.count(b, func(cs *CondSummary) { cs.Mismatch++ })
		return nil
	}
	path := filepath.Join(x.opt.OutDir, fmt.Sprintf("%s-sym-%s%d-branch-%d.json", fileSafe(x.name), x.win.Kind, x.win.From, b.ID))
	if err := WriteArtifacts(ctx, netenv.Native{}, ws, path); err != nil {
		return err
	}
	x.res.Seeds = append(x.res.Seeds, path)
	if cs := x.sums[ws.Finding.Condition]; cs != nil {
		cs.Seeds++
	}
	return nil
}

// widenRanges counts branch b as a class of each condition it meets and
// widens that condition's per-packet delay ranges by b's.
func (x *seedExploration) widenRanges(b *symbolic.Branch) {
	x.count(b, func(cs *CondSummary) {
		cs.Classes++
		if cs.Classes == 1 {
			cs.MinMS, cs.MaxMS = make([]float64, len(b.RangesMS)), make([]float64, len(b.RangesMS))
		}
		for i, r := range b.RangesMS {
			if cs.Classes == 1 || r[0] < cs.MinMS[i] {
				cs.MinMS[i] = r[0]
			}
			if cs.Classes == 1 || r[1] > cs.MaxMS[i] {
				cs.MaxMS[i] = r[1]
			}
		}
	})
}

// seedsFull reports whether every condition branch b meets already has
// MaxSeeds seeds written or tried, so b's witness is not replayed.
func (x *seedExploration) seedsFull(b *symbolic.Branch) bool {
	if x.opt.MaxSeeds <= 0 {
		return false
	}
	for _, c := range b.Conditions {
		if cs := x.sums[c]; cs != nil && cs.Seeds+cs.Mismatch < x.opt.MaxSeeds {
			return false
		}
	}
	return true
}

// count applies add to the summary of each watched condition branch b meets.
func (x *seedExploration) count(b *symbolic.Branch, add func(*CondSummary)) {
	for _, c := range b.Conditions {
		if cs := x.sums[c]; cs != nil {
			add(cs)
		}
	}
}

// PinnedSeed is the seed s with the window pinned at a witness and, when
// one of specs holds in its replay on the default scheduler, that first hit
// as its finding (hit true): what `actfuzz replay` reproduces. events is
// the replay's simulated events.
func PinnedSeed(ctx context.Context, s *Seed, pin *PinnedDelays, specs []ConditionSpec) (ns *Seed, hit bool, events uint64, err error) {
	cp := *s
	ns = &cp
	ns.Program = ProgramVersion()
	ns.Version = SeedVersion
	ns.Finding = nil
	ns.Pinned = pin
	cfg, err := ns.Config()
	if err != nil {
		return nil, false, 0, err
	}
	w, err := NewWatcherFor(netenv.NativeCapabilities(), s.CCAI, specs)
	if err != nil {
		return nil, false, 0, err
	}
	w.Start(cfg.Schedule)
	var f *Finding
	w.OnHit = func(flow int, c *Condition, obs []float64, at time.Duration) {
		if f == nil {
			f = &Finding{Condition: c.Name, When: c.When, While: c.While, For: c.For, Kind: "condition", TimeNS: int64(at), Flow: flow, State: StateMap(w.Schemas[flow], obs)}
		}
	}
	r, err := (netenv.Native{}).Run(ctx, cfg, w)
	if err != nil {
		return nil, false, r.Events, err
	}
	if w.Err != nil {
		return nil, false, r.Events, w.Err
	}
	if f == nil {
		return ns, false, r.Events, nil
	}
	f.Detail = fmt.Sprintf("actfuzz sym --seed: window %q (%s %d..%d of flow %d), extra delays %v ms", pin.Window, pin.Kind, pin.From, pin.From+uint64(len(pin.DelaysMS))-1, pin.Flow, pin.DelaysMS)
	ns.Finding = f
	return ns, true, r.Events, nil
}

func seedKind(s *Seed) string {
	switch {
	case s.Witness != nil:
		return "a witness seed of a symbolic scenario"
	default:
		return "a " + s.Subject + " seed"
	}
}

// UsageError is bad input to a command, naming the flag.
type UsageError struct {
	Flag, Msg string
}

func (e *UsageError) Error() string { return e.Flag + ": " + e.Msg }

package act

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/coverage"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
	"github.com/actfuzz/actfuzz/netenv/symbolic"
)

// The symbolic step (issue 22 item 2): when a simulation goes where no
// earlier one went — a region at k = 16 (κ when S has no k = 16) that no
// configuration had, or, with directed ACT, a best distance to a condition
// lower than any before — the n data segments just before that moment of
// the flow whose state record it is (corpus.FlowAtHit) get symbolic extra
// delays. For new regions the moment is the
// latest first visit of one (coverage.BatchResult.LastAt): the earliest is
// mostly a run's first record in a fresh part of P, before any segment is
// acknowledged and so before any window; the latest is the deepest point
// of the run's excursion into new ground. Every equivalence class of the
// window's orders is run (corpus.ExploreSeed: "symbolic plus random", the
// packet-dynamics paper §III, every other packet keeping its seeded random
// delay). Random testing is cheap where it is typical; the rare orders of a
// few packets around a rare moment are where symbolic execution pays
// (packet-dynamics §I, and the hybrid concolic testing it cites in §V:
// switch to symbolic execution where random testing found something new).
//
// Every branch's state records go through a Runner of the campaign, as an
// ordinary simulation's do: its states feed coverage (counted under the
// step "symbolic"; a branch's visits are pooled under the trigger's
// configuration, whose environment they share, so estimation and
// concatenation treat them as that configuration's) and its conditions and
// faults become findings whose seeds pin the window's delays
// (corpus.PinnedDelays), replayed on the default scheduler before they are
// kept, so `actfuzz replay` reproduces them.
//
// Cost: a window's simulated events — the concrete run that locates the
// window, every branch's run and every witness replay — are divided by the
// mean events of the ordinary simulations merged so far and rounded up:
// that many simulation-equivalents are charged against the budget, so an
// ACT campaign with the step spends what one without it does (ACT/RAN
// comparisons stay fair). A window is capped at max_branches classes and
// at the budget left; a capped window is reported as such. There is no
// wall-time cap: it would make results depend on the machine.
//
// Not a bandit arm: the step is not chosen per configuration but triggered
// by what a configuration found, and its cost comes out of the budget the
// arms share; the trigger's own step keeps its reward.
//
// Determinism: windows run on the coordinator between the merge of a batch
// and the choice of the next one, from the merged state only, so results
// do not depend on the worker count. A window is committed (coverage,
// findings, charge) only when it completes; one interrupted is kept in the
// checkpoint as pending and run again first on resume.

// SymbolicSpec is the campaign key symbolic:.
type SymbolicSpec struct {
	// N is the number of packets in a window (key n).
	N int
	// Lo, Hi and Res are each packet's extra delay range and its
	// resolution (keys range_ms and res_ms).
	Lo, Hi, Res time.Duration
	// Every: at most one window per this many simulations (and per
	// batch: windows start between batches).
	Every int
	// MaxBranches caps the classes of one window.
	MaxBranches int
	Reductions  symbolic.Reductions
}

// Defaults of the symbolic: keys, chosen when a branch re-ran its
// configuration from time zero (branches now restore a snapshot of the
// window's start, and cost about 2.6 times less on the same campaign:
// 37 simulation-equivalents instead of 95 for 96 branches of
// examples/huge-cwnd.yaml at a budget of 800). The simulations that reach new regions run longer
// than most: measured on examples/huge-cwnd.yaml at a budget of 2,000, a
// branch cost 2 simulation-equivalents, and every: 256 with 64 branches
// spent 36% of the budget for 0.2% of the new regions at k = 16. These
// defaults keep the step to about 6% of the budget (32 branches of about
// 2 per 1,000 simulations).
const (
	DefaultSymN           = 2
	DefaultSymEvery       = 1000
	DefaultSymMaxBranches = 32
)

type symbolicFile struct {
	N           *int      `yaml:"n"`
	RangeMS     []float64 `yaml:"range_ms"`
	ResMS       *float64  `yaml:"res_ms"`
	Every       *int      `yaml:"every"`
	MaxBranches *int      `yaml:"max_branches"`
	Reductions  *string   `yaml:"reductions"`
}

// parseSymbolic validates the symbolic: keys; fail names the field.
func parseSymbolic(f *symbolicFile, fail func(field, format string, a ...any) error) (*SymbolicSpec, error) {
	sp := &SymbolicSpec{N: DefaultSymN, Lo: time.Millisecond, Hi: 200 * time.Millisecond, Res: time.Millisecond,
		Every: DefaultSymEvery, MaxBranches: DefaultSymMaxBranches, Reductions: symbolic.Reductions{S: true, Ce: true, Cc: true, Coc: true, I: true}}
	if f.N != nil {
		if *f.N < 1 || *f.N > symbolic.MaxVars {
			return nil, fail("n", "%d packets: want 1–%d", *f.N, symbolic.MaxVars)
		}
		sp.N = *f.N
	}
	if f.ResMS != nil {
		if !(*f.ResMS > 0) || *f.ResMS > 1e3 {
			return nil, fail("res_ms", "%v: want a resolution in (0, 1000] ms", *f.ResMS)
		}
		sp.Res = time.Duration(math.Round(*f.ResMS * 1e6))
		if sp.Res <= 0 {
			return nil, fail("res_ms", "%v: below a nanosecond", *f.ResMS)
		}
	}
	if f.RangeMS != nil {
		r := f.RangeMS
		if len(r) != 2 || math.IsNaN(r[0]) || math.IsNaN(r[1]) || r[0] < 0 || r[1] < r[0] || r[1] > netenv.MaxDelay {
			return nil, fail("range_ms", "%v: want [LO, HI] with 0 ≤ LO ≤ HI ≤ %g", r, netenv.MaxDelay)
		}
		sp.Lo, sp.Hi = time.Duration(math.Round(r[0]*1e6)), time.Duration(math.Round(r[1]*1e6))
	}
	if sp.Lo%sp.Res != 0 || sp.Hi%sp.Res != 0 {
		return nil, fail("range_ms", "[%v, %v] must be multiples of the resolution %v (res_ms)", sp.Lo, sp.Hi, sp.Res)
	}
	if f.Every != nil {
		if *f.Every < 1 {
			return nil, fail("every", "%d: want ≥ 1 (at most one window per that many simulations)", *f.Every)
		}
		sp.Every = *f.Every
	}
	if f.MaxBranches != nil {
		if *f.MaxBranches < 1 {
			return nil, fail("max_branches", "%d: want ≥ 1", *f.MaxBranches)
		}
		sp.MaxBranches = *f.MaxBranches
	}
	if f.Reductions != nil {
		r, err := symbolic.ParseReductions(*f.Reductions)
		if err != nil {
			return nil, fail("reductions", "%v", err)
		}
		if r.H {
			return nil, fail("reductions", "H (state hashing) needs a topology (UDP) scenario; a campaign's runs are TCP")
		}
		sp.Reductions = r
	}
	return sp, nil
}

// symTrigger is a simulation that may start a window: its configuration,
// the moment and why.
type symTrigger struct {
	Idx    int
	G      Config
	At     int64
	Closer bool   // lowered a best distance (directed ACT)
	Found  uint64 // regions at the trigger level found first
}

// better reports whether t should start a window before o.
func (t *symTrigger) better(o *symTrigger) bool {
	if t.Closer != o.Closer {
		return t.Closer
	}
	return t.Found > o.Found
}

// SymbolicStats is what the symbolic step did, for reports.
type SymbolicStats struct {
	// Triggers counts the simulations that could have started a window;
	// Windows the windows run, Unlocated the triggers whose moment came
	// before n data segments were acknowledged (no window: the next
	// trigger of the batch is tried), Errors the windows that stopped on
	// an error of the simulation (logged).
	Triggers  int `json:"triggers"`
	Windows   int `json:"windows"`
	Unlocated int `json:"unlocated"`
	Errors    int `json:"errors"`
	// Capped counts the windows stopped at max_branches, BudgetCapped
	// those cut short, or not started, for the budget left.
	Capped       int `json:"capped"`
	BudgetCapped int `json:"budget_capped"`
	Branches     int `json:"branches"`
	// EventCapped counts the branches stopped at netenv's event cap (an
	// ordinary simulation there is an "event-cap" fault; a branch is
	// counted here instead, its states and hits up to the cap kept).
	EventCapped int `json:"event_capped"`
	// Events is every simulated event of the windows; Charged the
	// simulation-equivalents charged for them against the budget.
	Events  uint64 `json:"events"`
	Charged int    `json:"charged_sims"`
	// Hits counts the branches' condition hits, Mismatch those whose
	// pinned replay on the default scheduler did not hit (no finding).
	Hits     int `json:"hits"`
	Mismatch int `json:"mismatch"`
	// Hangs counts the windows abandoned by the watchdog (symStep.
	// watchdog): after one, the step runs no more windows.
	Hangs int `json:"hangs,omitempty"`
}

// symState is the step's bookkeeping, checkpointed.
type symState struct {
	SymbolicStats
	// Next is how many simulations must be merged before the next
	// window may start.
	Next int
	// OrdEvents and OrdSims are the events and count of the ordinary
	// simulations merged: the unit of the charge.
	OrdEvents uint64
	OrdSims   int
	// Pending are the triggers of a batch still to try for its window
	// (the campaign was interrupted during one): resume tries them first.
	Pending []symTrigger
}

// meanEvents is the mean events of an ordinary simulation so far.
func (st *symState) meanEvents() float64 {
	if st.OrdSims == 0 || st.OrdEvents == 0 {
		return 1
	}
	return float64(st.OrdEvents) / float64(st.OrdSims)
}

// branchWatch is a Runner seen by the symbolic engine as a RunWatcher:
// every branch run is observed as an ordinary simulation is, into a
// fresh batch.
type branchWatch struct {
	r     *Runner
	sched netenv.Schedule // the trigger's, which p.X conditions read
	// store is only read during a window (its results are committed
	// after the last branch): a snapshot of a branch's run shares it
	// rather than copy the campaign's whole coverage.
	store *coverage.Store `snapshot:"shared"`
	out   Outcome
	batch *coverage.Batch
}

func (w *branchWatch) Reset() {
	w.out = Outcome{}
	w.batch = w.store.NewBatch()
	w.r.begin(&w.out, w.batch, w.sched)
}

func (w *branchWatch) Observe(rec *observe.Record) { w.r.watch.Observe(rec) }

func (w *branchWatch) Hits() []string {
	var names []string
	for _, h := range w.out.Hits {
		names = append(names, h.Condition)
	}
	slices.Sort(names)
	return names
}

// symFinding is a finding of a window, kept until the window commits.
type symFinding struct {
	key    string
	seed   *corpus.Seed
	branch int
}

// symWindow is a window's outcome, committed at once.
type symWindow struct {
	batches  []*coverage.Batch
	findings []symFinding
	repeats  map[string]int // hits of groups that exist already
	events   uint64
	branches int
	capped   bool
	evCapped int
	hits     int
	mismatch int
}

// symStep runs the windows of a campaign on the coordinator.
type symStep struct {
	c     *Campaign
	spec  *SymbolicSpec
	st    *symState
	store *coverage.Store
	run   *Runner
	log   *slog.Logger
	// groups are the campaign's finding groups (Run's): a hit of a group
	// that exists is counted, not replayed.
	groups map[string]*FindingGroup
	cands  []symTrigger // this batch's triggers
	// onBranch is Options.onSymBranch.
	onBranch func(*coverage.Batch)
	// noSnapshot runs every branch from time zero (Options.symNoSnapshot).
	noSnapshot bool
	// watchdog is the wall-clock time a window may go without finishing
	// a simulation (its locating run, a branch, a witness replay) before
	// it counts as hung: windows run on the coordinator, in process, so a
	// CCAI that loops for ever on one branch would otherwise stop the
	// campaign. The isolated workers' watchdog (IsolateOptions), else
	// defaultWatchdog.
	watchdog time.Duration
}

// consider records simulation idx's trigger, if it is one (merge order).
func (s *symStep) consider(idx int, g Config, events uint64, closer bool, closerAt int64, found uint64, foundAt int64, failed bool) {
	s.st.OrdEvents += events
	s.st.OrdSims++
	if failed {
		return
	}
	switch {
	case closer:
		s.cands = append(s.cands, symTrigger{Idx: idx, G: g, At: closerAt, Closer: true, Found: found})
	case found > 0 && foundAt > 0:
		s.cands = append(s.cands, symTrigger{Idx: idx, G: g, At: foundAt, Found: found})
	default:
		return
	}
	s.st.Triggers++
}

// maxTries bounds the triggers of one batch tried for a window (each
// costs a concrete run to locate its packets).
const maxTries = 3

// afterBatch runs at most one window after a batch's merge, from its best
// triggers; merged is the number of simulations merged and budget the
// campaign's.
func (s *symStep) afterBatch(ctx context.Context, rep *Report, merged, budget int, add func(w *symWindow, t *symTrigger)) error {
	cands := s.cands
	s.cands = s.cands[:0]
	if merged < s.st.Next || len(cands) == 0 {
		return nil
	}
	if budget-merged-s.st.Charged < 2 {
		// Not even the locating run and one branch fit.
		s.st.BudgetCapped++
		s.st.Next = budget
		return nil
	}
	slices.SortStableFunc(cands, func(a, b symTrigger) int {
		switch {
		case a.better(&b):
			return -1
		case b.better(&a):
			return 1
		}
		return 0
	})
	s.st.Pending = slices.Clone(cands[:min(len(cands), maxTries)])
	return s.runPending(ctx, rep, merged, budget, add)
}

// runPending tries the pending triggers in order until one's window runs;
// a cancelled context leaves the rest pending (checkpointed), and a
// resumed campaign calls it again before anything else.
func (s *symStep) runPending(ctx context.Context, rep *Report, merged, budget int, add func(w *symWindow, t *symTrigger)) error {
	for len(s.st.Pending) > 0 {
		ran, err := s.window(ctx, rep, &s.st.Pending[0], budget, merged, add)
		if err != nil {
			return err
		}
		if ran {
			// max: a hung window stopped the step (hung).
			s.st.Next = max(s.st.Next, merged+s.spec.Every)
			s.st.Pending = nil
			return nil
		}
		s.st.Pending = s.st.Pending[1:]
	}
	s.st.Pending = nil
	return nil
}

// window runs trigger t's window and commits it; ran is false when it
// could not be located (too early in the transfer). A cancelled context
// leaves nothing committed.
func (s *symStep) window(ctx context.Context, rep *Report, t *symTrigger, budget, merged int, add func(w *symWindow, t *symTrigger)) (ran bool, err error) {
	// The locating run and the branches fit in the budget left: each
	// branch costs about one simulation (until branches restore from a
	// snapshot of the window's start, issue 22 item 3).
	maxB := max(1, min(s.spec.MaxBranches, budget-merged-s.st.Charged-1))
	if s.run == nil {
		r, err := NewRunner(s.c, netenv.Native{}, s.store.Space())
		if err != nil {
			return false, err
		}
		s.run = r
	}
	base := rep.seedOf(s.c, t.G)
	base.Subject = "native"
	bw := &branchWatch{r: s.run, sched: t.G.Schedule, store: s.store}
	w := &symWindow{repeats: map[string]int{}}
	seen := map[string]bool{}
	live := newWindowLiveness()
	opt := corpus.SymSeedOptions{
		Window: corpus.WindowSpec{Text: fmt.Sprintf("last %d before hit", s.spec.N), Kind: "before", N: s.spec.N},
		Flow:   corpus.FlowAtHit, Lo: s.spec.Lo, Hi: s.spec.Hi, Res: s.spec.Res, Reductions: s.spec.Reductions,
		MaxBranches: maxB, At: time.Duration(t.At), Conditions: s.c.Checks(), Watch: bw,
		NoSnapshot: s.noSnapshot,
		OnBranch: func(b *symbolic.Branch, pin *corpus.PinnedDelays) error {
			bw.r.finish()
			// A copy: when branches restore a snapshot of the window's
			// start, the runner (reached through the sender's observer)
			// is restored too, and every branch writes into the one
			// batch the snapshot holds, prefix states included, as a
			// branch from time zero would.
			batch := s.store.NewBatch()
			if err := copyBatch(batch, bw.batch); err != nil {
				return err
			}
			w.batches = append(w.batches, batch)
			if b.Events >= netenv.DefaultMaxEvents {
				w.evCapped++
			}
			if err := live.guard(func() {
				if s.onBranch != nil {
					s.onBranch(batch)
				}
			}); err != nil {
				return err
			}
			return s.branchFindings(ctx, live, bw.r.Subject().Name(), base, pin, &bw.out, w, seen)
		},
	}
	res, hung, err := exploreWatched(ctx, live, s.watchdog, base, opt)
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	if hung {
		s.hung(t, base, &opt, add)
		return true, nil
	}
	if res != nil {
		w.events += res.LocateEvents
		if res.Report != nil {
			// What was simulated: with a snapshot of the window's
			// start, the prefix once, then each branch from there.
			w.events += res.Report.EventsSimulated
			w.branches = res.Report.Branches
			w.capped = !res.Report.Complete && res.Report.Branches >= maxB
		}
	}
	var ue *corpus.UsageError
	switch {
	case errors.As(err, &ue):
		// The moment came before n segments were acknowledged.
		s.st.Unlocated++
		s.charge(w.events)
		return false, nil
	case err != nil:
		s.st.Errors++
		s.log.Warn("symbolic window stopped", "sim", t.Idx, "err", err)
	}
	s.st.Windows++
	s.st.Branches += w.branches
	s.st.EventCapped += w.evCapped
	s.st.Hits += w.hits
	s.st.Mismatch += w.mismatch
	if w.capped {
		if maxB < s.spec.MaxBranches {
			s.st.BudgetCapped++
		} else {
			s.st.Capped++
		}
	}
	s.charge(w.events)
	add(w, t)
	return true, nil
}

// windowLiveness is how a window's goroutine shows progress to the
// watchdog, and how it is cut off from the campaign once abandoned. What
// the goroutine touches of the campaign (its finding groups, which Run's
// goroutine adds to; the test hooks) it touches inside guard; abandon
// waits for a guarded function to end, and none runs after it. A guarded
// function never simulates, so abandon never waits for a simulation.
type windowLiveness struct {
	beat      chan struct{}
	mu        sync.Mutex
	abandoned bool
}

func newWindowLiveness() *windowLiveness {
	return &windowLiveness{beat: make(chan struct{}, 1)}
}

var errWindowAbandoned = errors.New("symbolic window abandoned by the watchdog")

// guard runs f unless the window was abandoned, and counts as progress.
func (l *windowLiveness) guard(f func()) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.abandoned {
		return errWindowAbandoned
	}
	select {
	case l.beat <- struct{}{}:
	default:
	}
	f()
	return nil
}

func (l *windowLiveness) abandon() {
	l.mu.Lock()
	l.abandoned = true
	l.mu.Unlock()
}

// exploreWatched runs corpus.ExploreSeed on a goroutine of its own and
// waits for it while it makes progress (opt.OnBranch shows it through
// live.guard): hung is true when no simulation of the window finished
// within the watchdog. Go cannot stop a goroutine that spins inside a
// CCAI, so a hung window's goroutine is abandoned (its context cancelled,
// in case it ever checks) and keeps running.
func exploreWatched(ctx context.Context, live *windowLiveness, watchdog time.Duration, base *corpus.Seed, opt corpus.SymSeedOptions) (res *corpus.SymSeedResult, hung bool, err error) {
	type outcome struct {
		res *corpus.SymSeedResult
		err error
	}
	// The exploration gets a seed of its own: its snapshot restores
	// write into the slices of the configuration it holds, and an
	// abandoned one goes on doing so while the caller (a campaign, a
	// later replay) reads the seed it passed.
	own, err := base.Clone()
	if err != nil {
		return nil, false, err
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan outcome, 1)
	go func() {
		r, err := corpus.ExploreSeed(wctx, own, opt)
		done <- outcome{r, err}
	}()
	timer := time.NewTimer(watchdog)
	defer timer.Stop()
	for {
		select {
		case o := <-done:
			return o.res, false, o.err
		case <-live.beat:
			timer.Reset(watchdog)
		case <-timer.C:
			live.abandon()
			return nil, true, nil
		case <-ctx.Done():
			live.abandon()
			return nil, false, ctx.Err()
		}
	}
}

// hung records a window abandoned by the watchdog: a hang fault of the
// trigger's configuration whose seed carries the window (corpus.SymWindow:
// n, the moment, the flow at the hit, range, resolution, reductions, the
// branch cap and the watchdog), since an ordinary run of the
// configuration does not hang, one of the window's branches did: `actfuzz
// replay` of the seed explores the same window again under the watchdog
// (ReplaySymbolicWindow). The runner stays with the abandoned goroutine,
// and the step runs no more windows: that goroutine keeps a core busy for
// the rest of the campaign.
func (s *symStep) hung(t *symTrigger, base *corpus.Seed, opt *corpus.SymSeedOptions, add func(w *symWindow, t *symTrigger)) {
	s.run = nil
	s.st.Hangs++
	s.st.Next = math.MaxInt
	s.log.Warn("symbolic window hung: abandoned, and the symbolic step stops", "sim", t.Idx, "at", time.Duration(t.At), "watchdog", s.watchdog)
	ns := *base
	ns.Version = corpus.SeedVersion
	ns.SymWindow = corpus.NewSymWindow(opt, s.watchdog)
	ns.Finding = &corpus.Finding{Kind: corpus.FaultHang, TimeNS: t.At, Detail: fmt.Sprintf("symbolic window 'last %d before hit' at %v: no simulation of the window finished within the watchdog of %v (wall clock); which branch hung is not known, and an ordinary run of this configuration does not hang: actfuzz replay explores the window (symbolic_window) again under the watchdog", s.spec.N, time.Duration(t.At), s.watchdog)}
	add(&symWindow{repeats: map[string]int{}, findings: []symFinding{{key: symHangKey, seed: &ns}}}, t)
}

// charge counts events against the budget in simulation-equivalents:
// events ÷ the mean events of the ordinary simulations merged so far,
// rounded up.
func (s *symStep) charge(events uint64) {
	s.st.Events += events
	if events > 0 {
		s.st.Charged += int(math.Ceil(float64(events) / s.st.meanEvents()))
	}
}

// branchFindings turns a branch's hits and fault into findings: a hit of a
// new group is replayed with the window pinned, and kept when the replay
// hits too. subject is the window's runner's: an abandoned window's
// goroutine runs on after hung has dropped s.run, so it must not read it.
func (s *symStep) branchFindings(ctx context.Context, live *windowLiveness, subject string, base *corpus.Seed, pin *corpus.PinnedDelays, out *Outcome, w *symWindow, seen map[string]bool) error {
	// The campaign's groups grow on Run's goroutine: read them under the
	// window's guard (an abandoned window reads nothing more).
	known := func(key string) (bool, error) {
		var in bool
		err := live.guard(func() { in = seen[key] || s.groups[key] != nil })
		return in, err
	}
	for _, h := range out.Hits {
		w.hits++
		key := hitKey(s.c, subject, h)
		if in, err := known(key); err != nil {
			return err
		} else if in {
			w.repeats[key]++
			continue
		}
		var spec []corpus.ConditionSpec
		for _, cs := range s.c.Checks() {
			if cs.Name == h.Condition {
				spec = append(spec, cs)
			}
		}
		ws, hit, events, err := corpus.PinnedSeed(ctx, base, pin, spec)
		w.events += events
		if err != nil {
			return err
		}
		if !hit {
			w.mismatch++
			continue
		}
		// The replay's hit is the seed's finding: group by its state.
		key = groupKey(ws)
		if in, err := known(key); err != nil {
			return err
		} else if in {
			w.repeats[key]++
			continue
		}
		seen[key] = true
		w.findings = append(w.findings, symFinding{key: key, seed: ws, branch: pin.Branch})
	}
	if f := out.Fault; f != nil {
		key := faultKey(s.c, subject, f)
		if in, err := known(key); err != nil {
			return err
		} else if in {
			w.repeats[key]++
			return nil
		}
		seen[key] = true
		ns := *base
		ns.Pinned, ns.Finding = pin, f
		w.findings = append(w.findings, symFinding{key: key, seed: &ns, branch: pin.Branch})
	}
	return nil
}

// String summarizes the step for the run's report.
func (st *SymbolicStats) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d windows, %d branches, %d sim-equivalents (%d events) of %d triggers", st.Windows, st.Branches, st.Charged, st.Events, st.Triggers)
	if st.Capped > 0 {
		fmt.Fprintf(&b, "; %d capped at max_branches", st.Capped)
	}
	if st.BudgetCapped > 0 {
		fmt.Fprintf(&b, "; %d capped by the budget left", st.BudgetCapped)
	}
	if st.EventCapped > 0 {
		fmt.Fprintf(&b, "; %d branches stopped at the event cap", st.EventCapped)
	}
	if st.Unlocated > 0 {
		fmt.Fprintf(&b, "; %d triggers too early for a window", st.Unlocated)
	}
	if st.Errors > 0 {
		fmt.Fprintf(&b, "; %d stopped on an error", st.Errors)
	}
	if st.Hangs > 0 {
		fmt.Fprintf(&b, "; %d abandoned by the watchdog (the step stopped there)", st.Hangs)
	}
	fmt.Fprintf(&b, "; %d branch hits", st.Hits)
	if st.Mismatch > 0 {
		fmt.Fprintf(&b, " (%d did not replay)", st.Mismatch)
	}
	return b.String()
}

// copyBatch makes dst a copy of src.
func copyBatch(dst, src *coverage.Batch) error {
	b, err := src.MarshalBinary()
	if err != nil {
		return err
	}
	return dst.UnmarshalBinary(b)
}

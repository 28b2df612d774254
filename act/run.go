package act

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"time"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/coverage"
	"github.com/actfuzz/actfuzz/netenv"
)

// batchSize is fixed so that results do not depend on the worker count.
const batchSize = 64

// Shares of Options.Memory, in tenths: the store's budget and the
// runtime's soft memory limit.
const (
	StoreShare   = 6
	RuntimeShare = 9
)

// maxReusedBatch bounds the batches kept for reuse (one simulation's
// distinct states; most need a few hundred kilobytes).
const maxReusedBatch = 4 << 20

type job struct {
	idx int
	g   Config
}

type result struct {
	idx    int
	batch  *coverage.Batch
	mean   []float64
	best   []float64
	bestAt []int64
	hits   []Hit
	fault  *corpus.Finding
	capped bool
	events uint64 // simulated events (the symbolic step's cost unit)
	// dropped is Result.StatesDropped: the states were not sent.
	dropped int
	// shares is Result.Shares: the states went to the store parts.
	shares [][]byte
	// encoded is the states as the worker process encoded them, kept
	// by a WorkerPool's executor, which passes them on instead of
	// encoding batch again (nil: encode batch).
	encoded []byte
}

// campaignRun is one call of Run: the campaign's state between its set
// up and its end. Its methods are the campaign's phases (set up, resume,
// prepare, start the executor, the loop in runloop.go, finish); the store
// it merges into is a runStore (runstore.go), whole or split into parts.
type campaignRun struct {
	ctx context.Context
	// boundCtx ends one watchdog after Options.Duration: a symbolic
	// window still running then is cancelled, and stays pending for a
	// resume; so is the check of a batch's findings by replay
	// (verify.go), and the batch stays unmerged.
	boundCtx context.Context
	c        *Campaign
	opt      Options
	log      *slog.Logger

	store  *coverage.Store // with store parts, their index
	target runStore        // where simulations merge
	sel    *selector
	rep    *Report
	groups map[string]*FindingGroup
	rs     *runState
	sym    *symStep // nil: no symbolic step
	ex     executor
	vf     *verifier // nil: results are not checked by replay

	logPath  string // the configuration log ("": none)
	keep     int    // the configurations a resumed log keeps
	indexCap int64  // with store parts, the index's cap (0: none)
	oorLimit int    // distinct states outside S kept
	// partSources are the store parts' encodings of a resumed campaign
	// with store parts (store is then their index), to load into the
	// Executor; they read the checkpoint file until closeParts.
	partSources []coverage.PartSource
	closeParts  func()

	// Every configuration chosen, on disk; the ones chosen but not yet
	// merged also in pending (configuration rep.Sims+i is pending[i]).
	cl              *configLog
	pending, chosen []Config
	dispatched      int
	// arrived holds the results that ended and wait for their batch's merge.
	arrived map[int]result

	start                                    time.Time
	prior                                    time.Duration // the wall time of the runs resumed
	lastCheckpoint, lastStatus, lastProgress time.Time
	// stop closes at the end of Duration (over every resume): the wait
	// for results then drains the executor, and the prefix of the batch
	// that arrived is merged (wait.go).
	stop        chan struct{}
	stopTimer   *time.Timer
	cancelBound context.CancelFunc

	window  int   // the saturation window (ACT §3)
	ks      []int // the state space's k
	rewardK int   // the index in ks the adaptive schedule rewards (-1: none)

	symErr      error // a merge of the symbolic step's that failed
	interrupted bool  // the campaign ended before its budget
}

// Run runs a campaign with one method.
func Run(ctx context.Context, c *Campaign, opt Options) (*Report, error) {
	opt, err := runOptions(c, opt)
	if err != nil {
		return nil, err
	}
	r := &campaignRun{ctx: ctx, boundCtx: ctx, c: c, opt: opt, closeParts: func() {},
		groups: map[string]*FindingGroup{}, rs: &runState{}, arrived: map[int]result{}}
	defer r.close()
	if err := r.setup(); err != nil {
		return nil, err
	}
	if err := r.resume(); err != nil {
		return nil, err
	}
	if err := r.prepare(); err != nil {
		return nil, err
	}
	if err := r.startExecutor(); err != nil {
		return r.rep, err
	}
	if err := r.loop(); err != nil {
		return r.rep, err
	}
	return r.rep, r.finish()
}

// runOptions checks opt and fills in its defaults.
func runOptions(c *Campaign, opt Options) (Options, error) {
	if opt.Method == "" {
		opt.Method = "act"
	}
	switch opt.Method {
	case "act", "ran", "man":
	default:
		return opt, fmt.Errorf("method %q: want act, ran or man", opt.Method)
	}
	if opt.Subject == nil {
		opt.Subject = netenv.Native{}
	}
	// A campaign parsed for one subject may be run on another: what it
	// needs is checked here, before anything runs or is written.
	if err := c.CheckSubject(opt.Subject.Capabilities()); err != nil {
		return opt, err
	}
	opt.IsolateOptions = opt.IsolateOptions.ForSubject(opt.Subject.Capabilities())
	if opt.Budget <= 0 {
		opt.Budget = c.Budget
	}
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	return opt, nil
}

// close releases what the run holds, in the reverse order of its taking.
func (r *campaignRun) close() {
	if r.ex != nil {
		r.ex.close()
	}
	if r.cancelBound != nil {
		r.cancelBound()
	}
	if r.stopTimer != nil {
		r.stopTimer.Stop()
	}
	if r.cl != nil {
		r.cl.close()
	}
	r.closeParts()
}

// setup makes the store, the output directory, the selector and the report.
func (r *campaignRun) setup() error {
	c, opt := r.c, &r.opt
	r.log = opt.Logger
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	mem := opt.Memory
	if mem == 0 {
		mem = c.Memory
	}
	// The store keeps to StoreShare of the process budget: the rest is
	// the garbage collector's headroom above the live heap (the command
	// sets the runtime's soft memory limit to RuntimeShare of it), the
	// batches in flight and, with in-process workers, the simulations.
	storeMem := max(mem, 0) / 10 * StoreShare
	// A store split into parts cannot coarsen (coverage/parts.go): a
	// budget given (--memory, memory:) caps its index at the store's share
	// instead, and a merge that takes it over is the campaign's last
	// (ErrIndexCapped); each part has a cap of its own (ErrStoreCapped).
	// The default budget, made for a whole store that coarsens, would end
	// a cluster's campaign at about 125 million states (bench/results/older-stretch-20261124.md:
	// 939 MB of index at 91 million).
	if opt.StoreParts > 0 {
		if given := c.GivenMemory(opt.Memory); given > 0 {
			r.indexCap = given / 10 * StoreShare
		} else {
			r.log.Info("store parts: no memory budget given, so the coordinator's index is not capped (a split store cannot coarsen)")
		}
		storeMem = 0
	}
	store, err := coverage.NewStore(c.Space, coverage.Options{Seed: c.Seed, Memory: storeMem})
	if err != nil {
		return fmt.Errorf("state space: %w", err)
	}
	r.store = store
	if opt.Out != "" {
		if err := os.MkdirAll(filepath.Join(opt.Out, "findings"), 0o755); err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(opt.Out, "coverage"), 0o755); err != nil {
			return err
		}
		r.logPath = filepath.Join(opt.Out, "coverage", "configs-"+opt.Method+".log")
		if err := corpus.WriteFileAtomic(filepath.Join(opt.Out, "campaign.yaml"), c.Source); err != nil {
			return err
		}
	}
	src := newSource(c.Seed, opt.Method)
	sel := &selector{c: c, method: opt.Method, src: src, rng: rand.New(src), store: store,
		prof: newProfile(c.dimP(), len(c.Space.Vars)), man: manEnvs(), step: StepRandom,
		pc: make([]float64, c.dimP())}
	if opt.Method == "act" && c.DirectedOn() {
		sel.dir = newDirectedState(len(c.Conditions))
	}
	if opt.Method == "act" && c.Schedule != SchedulePaper {
		arms := []Step{StepRandom, StepEstimation, StepConcatenation}
		if sel.dir != nil {
			arms = append(arms, StepDirected)
		}
		sel.bandit = newStepBandit(arms...)
		sel.warm = warmup(opt.Budget)
	}
	r.sel = sel
	r.rep = &Report{Method: opt.Method, Store: store, subject: opt.Subject, Series: coverage.NewSeries(opt.Method, c.Space),
		StepSims: map[Step]int{}, StepRegions: map[Step][]uint64{}}
	return nil
}

// resume loads the checkpoint of Options.Out when Options.Resume asks.
func (r *campaignRun) resume() error {
	if !r.opt.Resume || r.opt.Out == "" {
		return nil
	}
	ok, sources, closeParts, err := loadCheckpoint(r.opt.Out, r.c, r.opt.Method, r.sel, r.rep, r.groups, r.rs, r.opt.StoreParts)
	if err != nil {
		return err
	}
	r.partSources = sources
	if closeParts != nil {
		r.closeParts = closeParts
	}
	if ok {
		r.log.Info("resuming", "sims", r.rep.Sims)
		r.keep = r.rs.Configs
		// What the load leaves is garbage now (its decoders'
		// buffers, the parts it split again; before da6d563, a
		// split checkpoint's part keys, which weighed more than
		// the index). Collected here, it does not set the heap's
		// next goal: twice what was live at the load's last
		// collection made an aged campaign's coordinator peak at
		// 3.3 GB with 0.94 GB live (bench/results/keys-in-chunks-20261125.md).
		debug.FreeOSMemory()
	}
	return nil
}

// prepare sets up what the loop needs: the symbolic step, the
// configuration log and what a resumed campaign left chosen, the clocks.
func (r *campaignRun) prepare() error {
	c, opt, rs := r.c, &r.opt, r.rs
	if opt.Method == "act" && c.Symbolic != nil {
		if rs.Sym == nil {
			rs.Sym = &symState{}
		}
		r.sym = &symStep{c: c, spec: c.Symbolic, st: rs.Sym, store: r.store, log: r.log, groups: r.groups, onBranch: opt.onSymBranch, noSnapshot: opt.symNoSnapshot,
			watchdog: opt.IsolateOptions.FirstWatchdog()}
		r.rep.Symbolic = &rs.Sym.SymbolicStats
	}
	// Wall time and Duration count over every resume.
	r.prior = rs.Wall
	rs.Budget, rs.Duration, rs.Workers = opt.Budget, opt.Duration, opt.Workers
	switch {
	case opt.Lag > 0:
	case rs.Lag > 0:
		opt.Lag = rs.Lag
	default:
		opt.Lag = DefaultLag
	}
	rs.Lag = opt.Lag
	cl, err := openConfigLog(r.logPath, r.keep)
	if err != nil {
		return err
	}
	r.cl = cl
	r.sel.log = cl
	for i := r.rep.Sims; i < cl.len(); i++ {
		g, err := cl.get(i)
		if err != nil {
			return err
		}
		r.pending = append(r.pending, g)
	}
	if opt.CheckpointEvery <= 0 {
		opt.CheckpointEvery = 30 * time.Second
	}
	switch {
	case opt.MaxOutOfRange == 0:
		r.oorLimit = 1_000_000
	case opt.MaxOutOfRange > 0:
		r.oorLimit = opt.MaxOutOfRange
	}
	r.store.LimitOutOfRange(r.oorLimit)
	r.lastCheckpoint = time.Now()
	r.start = time.Now()
	r.stop = make(chan struct{})
	if opt.Duration > 0 {
		stopAt := r.start.Add(opt.Duration - r.prior)
		r.stopTimer = time.AfterFunc(time.Until(stopAt), func() { close(r.stop) })
		r.boundCtx, r.cancelBound = context.WithDeadline(r.ctx, stopAt.Add(opt.IsolateOptions.FirstWatchdog()))
	}
	r.rep.elapsed, r.rep.program, r.rep.onCheckpoint = r.elapsed, cmp.Or(opt.Program, "actfuzz"), opt.OnCheckpoint
	return nil
}

// startExecutor starts the executor and gives the store parts, if any,
// their contents. Pipeline: while batch k is merged, batch k+1
// simulates. Batch k+Lag is chosen from the store as it stands after
// batch k, whatever the worker count, so results stay independent of it.
// Configurations chosen but not yet merged stay in the log, so a
// checkpoint can resume them exactly.
func (r *campaignRun) startExecutor() error {
	c, opt := r.c, &r.opt
	ex, err := newExecutor(r.ctx, c, r.store.Space(), *opt)
	if err != nil {
		return err
	}
	r.ex = ex
	if r.target, err = r.openStore(); err != nil {
		return err
	}
	// Results from elsewhere open finding groups only once they replay
	// here (verify.go).
	if r.vf, err = newVerifier(c, r.rep, *opt, r.store.Space(), r.log); err != nil {
		return err
	}
	r.dispatched = r.rep.Sims
	r.window = min(c.Window, max(opt.Budget/10, batchSize))
	r.ks = c.Space.Ks()
	// The adaptive schedule rewards a simulation that found a region at
	// k = 16 (the paper's headline k), else at κ.
	r.rewardK = slices.Index(r.ks, 16)
	if r.rewardK < 0 {
		r.rewardK = slices.Index(r.ks, c.Kappa)
	}
	return nil
}

// charged is the budget the symbolic step has spent, in
// simulation-equivalents (symstep.go).
func (r *campaignRun) charged() int {
	if r.sym == nil {
		return 0
	}
	return r.sym.st.Charged
}

// elapsed is the campaign's wall time, over every resume.
func (r *campaignRun) elapsed() time.Duration { return r.prior + time.Since(r.start) }

// save writes the checkpoint of the merged state.
func (r *campaignRun) save() error {
	return r.target.save(r.ctx, func() error {
		return saveCheckpoint(r.opt.Out, r.c, r.opt.Method, r.sel, r.rep, r.rs)
	})
}

// finish writes the last checkpoint and the outputs, however the
// campaign ended, and returns why it ended early, if it did.
func (r *campaignRun) finish() error {
	r.rep.live.Unmerged = 0 // what did not merge is recomputed on resume
	r.rep.Wall = r.elapsed()
	r.rs.Wall = r.rep.Wall
	if r.opt.Out != "" {
		if err := r.save(); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
		if err := r.rep.writeOutputs(r.opt.Out, !r.interrupted && r.rep.Sims >= r.opt.Budget); err != nil {
			return err
		}
	}
	if capped := r.target.capped(); capped != nil {
		return fmt.Errorf("store parts: after %d simulations: %w", r.rep.Sims, capped)
	}
	if err := r.ctx.Err(); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

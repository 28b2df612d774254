package act

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
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

// Run runs a campaign with one method.
func Run(ctx context.Context, c *Campaign, opt Options) (*Report, error) {
	if opt.Method == "" {
		opt.Method = "act"
	}
	switch opt.Method {
	case "act", "ran", "man":
	default:
		return nil, fmt.Errorf("method %q: want act, ran or man", opt.Method)
	}
	if opt.Subject == nil {
		opt.Subject = netenv.Native{}
	}
	// A campaign parsed for one subject may be run on another: what it
	// needs is checked here, before anything runs or is written.
	if err := c.CheckSubject(opt.Subject.Capabilities()); err != nil {
		return nil, err
	}
	opt.IsolateOptions = opt.IsolateOptions.ForSubject(opt.Subject.Capabilities())
	if opt.Budget <= 0 {
		opt.Budget = c.Budget
	}
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
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
	var indexCap int64
	if opt.StoreParts > 0 {
		if given := c.GivenMemory(opt.Memory); given > 0 {
			indexCap = given / 10 * StoreShare
		} else {
			log.Info("store parts: no memory budget given, so the coordinator's index is not capped (a split store cannot coarsen)")
		}
		storeMem = 0
	}
	store, err := coverage.NewStore(c.Space, coverage.Options{Seed: c.Seed, Memory: storeMem})
	if err != nil {
		return nil, fmt.Errorf("state space: %w", err)
	}
	logPath := ""
	if opt.Out != "" {
		if err := os.MkdirAll(filepath.Join(opt.Out, "findings"), 0o755); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(filepath.Join(opt.Out, "coverage"), 0o755); err != nil {
			return nil, err
		}
		logPath = filepath.Join(opt.Out, "coverage", "configs-"+opt.Method+".log")
		if err := corpus.WriteFileAtomic(filepath.Join(opt.Out, "campaign.yaml"), c.Source); err != nil {
			return nil, err
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
	if opt.Subject == nil {
		opt.Subject = netenv.Native{}
	}
	rep := &Report{Method: opt.Method, Store: store, subject: opt.Subject, Series: coverage.NewSeries(opt.Method, c.Space),
		StepSims: map[Step]int{}, StepRegions: map[Step][]uint64{}}
	groups := map[string]*FindingGroup{}
	rs := &runState{}
	keep := 0
	// partSources are the store parts' encodings of a resumed campaign
	// with store parts (store is then their index), to load into the
	// Executor; they read the checkpoint file until closeParts.
	var partSources []coverage.PartSource
	closeParts := func() {}
	if opt.Resume && opt.Out != "" {
		var ok bool
		ok, partSources, closeParts, err = loadCheckpoint(opt.Out, c, opt.Method, sel, rep, groups, rs, opt.StoreParts)
		if err != nil {
			return nil, err
		}
		defer func() { closeParts() }()
		if ok {
			log.Info("resuming", "sims", rep.Sims)
			keep = rs.Configs
			// What the load leaves is garbage now (its decoders'
			// buffers, the parts it split again; before da6d563, a
			// split checkpoint's part keys, which weighed more than
			// the index). Collected here, it does not set the heap's
			// next goal: twice what was live at the load's last
			// collection made an aged campaign's coordinator peak at
			// 3.3 GB with 0.94 GB live (bench/results/keys-in-chunks-20261125.md).
			debug.FreeOSMemory()
		}
	}
	var sym *symStep
	if opt.Method == "act" && c.Symbolic != nil {
		if rs.Sym == nil {
			rs.Sym = &symState{}
		}
		sym = &symStep{c: c, spec: c.Symbolic, st: rs.Sym, store: store, log: log, groups: groups, onBranch: opt.onSymBranch, noSnapshot: opt.symNoSnapshot,
			watchdog: opt.IsolateOptions.FirstWatchdog()}
		rep.Symbolic = &rs.Sym.SymbolicStats
	}
	// charged is the budget the symbolic step has spent, in
	// simulation-equivalents (symstep.go).
	charged := func() int {
		if sym == nil {
			return 0
		}
		return sym.st.Charged
	}
	// Wall time and Duration count over every resume.
	prior := rs.Wall
	rs.Budget, rs.Duration, rs.Workers = opt.Budget, opt.Duration, opt.Workers
	switch {
	case opt.Lag > 0:
	case rs.Lag > 0:
		opt.Lag = rs.Lag
	default:
		opt.Lag = DefaultLag
	}
	rs.Lag = opt.Lag
	// Every configuration chosen, on disk; the ones chosen but not yet
	// merged also in pending (configuration rep.Sims+i is pending[i]).
	cl, err := openConfigLog(logPath, keep)
	if err != nil {
		return nil, err
	}
	defer cl.close()
	sel.log = cl
	var pending, chosen []Config
	for i := rep.Sims; i < cl.len(); i++ {
		g, err := cl.get(i)
		if err != nil {
			return nil, err
		}
		pending = append(pending, g)
	}
	if opt.CheckpointEvery <= 0 {
		opt.CheckpointEvery = 30 * time.Second
	}
	oorLimit := 0
	switch {
	case opt.MaxOutOfRange == 0:
		oorLimit = 1_000_000
	case opt.MaxOutOfRange > 0:
		oorLimit = opt.MaxOutOfRange
	}
	store.LimitOutOfRange(oorLimit)
	// checkpoint saves the merged state when CheckpointEvery has passed
	// since the last one; it is called after every merge and by the wait
	// for results (wait.go), so the period holds however slow a batch is.
	lastCheckpoint := time.Now()
	lastStatus, lastProgress := time.Time{}, time.Time{}
	// arrived holds the results that ended and wait for their batch's merge.
	arrived := map[int]result{}
	start := time.Now()
	elapsed := func() time.Duration { return prior + time.Since(start) }
	// The end of Duration (over every resume) closes stop: the wait for
	// results then drains the executor, and the prefix of the batch that
	// arrived is merged (wait.go). boundCtx ends one watchdog after it:
	// a symbolic window still running then is cancelled, and stays
	// pending for a resume; so is the check of a batch's findings by
	// replay (verify.go), and the batch stays unmerged.
	stop := make(chan struct{})
	boundCtx := ctx
	if opt.Duration > 0 {
		stopAt := start.Add(opt.Duration - prior)
		t := time.AfterFunc(time.Until(stopAt), func() { close(stop) })
		defer t.Stop()
		var cancel context.CancelFunc
		boundCtx, cancel = context.WithDeadline(ctx, stopAt.Add(opt.IsolateOptions.FirstWatchdog()))
		defer cancel()
	}
	rep.elapsed, rep.program, rep.onCheckpoint = elapsed, cmp.Or(opt.Program, "actfuzz"), opt.OnCheckpoint
	// With store parts, store is their index: a checkpoint writes it with
	// the parts' snapshots, which read as the whole store of the merged
	// prefix.
	var parted StoreParts
	save := func() error {
		if parted == nil {
			return saveCheckpoint(opt.Out, c, opt.Method, sel, rep, rs)
		}
		// The last checkpoint is written however the campaign ended.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Minute)
		defer cancel()
		parts, err := parted.SnapshotParts(sctx)
		if err != nil {
			return fmt.Errorf("store parts: %w", err)
		}
		// The checkpoint holds the parts as they come, copied into it:
		// the coordinator decodes none, and holds none. The report is the
		// index's, which answers every count; LoadReport reads the whole
		// store.
		rep.writeStore = func(w io.Writer) (int64, error) { return coverage.WriteSplitFrom(w, store, parts) }
		defer func() { rep.writeStore = nil }()
		return saveCheckpoint(opt.Out, c, opt.Method, sel, rep, rs)
	}
	// With store parts a checkpoint moves every part through the object
	// store, which takes longer as the store grows: pace spaces them
	// (pace.go).
	pace := newCheckpointPace(opt.CheckpointEvery)
	checkpoint := func() error {
		if opt.Out == "" || time.Since(lastCheckpoint) < pace.period {
			return nil
		}
		rs.Wall = elapsed()
		t0 := time.Now()
		err := save()
		if err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
		if parted != nil {
			took := time.Since(t0)
			log.Debug("store parts: checkpoint", "took", took, "next_after", pace.record(took))
		}
		if err := rep.writeStatus(opt.Out, elapsed(), false); err != nil {
			return fmt.Errorf("status: %w", err)
		}
		lastCheckpoint, lastStatus = time.Now(), time.Now()
		return nil
	}
	// live reports progress (the status line, status.json) at its own
	// periods, also while a batch simulates: from the first results on,
	// not once a batch (issue 51); always at once when force.
	live := func(force bool) error {
		rep.live = liveCounts{Unmerged: len(arrived), Budget: opt.Budget - charged(), Duration: opt.Duration}
		if opt.Out != "" && (force || time.Since(lastStatus) >= StatusEvery) {
			if err := rep.writeStatus(opt.Out, elapsed(), false); err != nil {
				return fmt.Errorf("status: %w", err)
			}
			lastStatus = time.Now()
		}
		if opt.Progress != nil && (force || time.Since(lastProgress) >= progressEvery) {
			opt.Progress(rep.liveStatusOf(sel.step, elapsed()))
			lastProgress = time.Now()
		}
		return nil
	}
	// The wait for results calls tick every checkpointTick.
	tick := func() error {
		if err := checkpoint(); err != nil {
			return err
		}
		return live(false)
	}

	// Pipeline: while batch k is merged, batch k+1 simulates. Batch k+Lag
	// is chosen from the store as it stands after batch k, whatever the
	// worker count, so results stay independent of it. Configurations
	// chosen but not yet merged stay in the log, so a checkpoint can
	// resume them exactly.
	ex, err := newExecutor(ctx, c, store.Space(), opt)
	if err != nil {
		return rep, err
	}
	defer ex.close()
	if opt.StoreParts > 0 {
		var ok bool
		if x, isExt := ex.(*external); isExt {
			parted, ok = x.x.(StoreParts)
		}
		if !ok || parted.StoreParts() != opt.StoreParts {
			return rep, fmt.Errorf("%d store parts: the executor does not keep them", opt.StoreParts)
		}
		index := store // a resumed campaign's, with partSources
		if partSources == nil {
			var blobs [][]byte
			if index, blobs, err = coverage.SplitEncoded(store, opt.StoreParts); err != nil {
				return rep, err
			}
			partSources = coverage.BytesSources(blobs)
		}
		if err := parted.LoadParts(ctx, partSources, oorLimit); err != nil {
			return rep, fmt.Errorf("store parts: %w", err)
		}
		partSources = nil
		closeParts()
		closeParts = func() {}
		index.SetPoolSource(parted)
		*store = *index // the selector, the symbolic step and the report hold store
	}
	// Results from elsewhere open finding groups only once they replay
	// here (verify.go).
	vf, err := newVerifier(c, rep, opt, store.Space(), log)
	if err != nil {
		return rep, err
	}
	var storeCapped error // a store part at its cap: the campaign ends after the batch
	// merge merges simulations into the store in order: a result's states
	// (bs[i]) or, with store parts, its shares (shares[i]).
	merge := func(bs []*coverage.Batch, shares [][][]byte, ids []uint64) ([]coverage.BatchResult, error) {
		if parted == nil {
			return store.AddBatches(bs, ids), nil
		}
		items := make([]PartItem, len(ids))
		for i := range ids {
			items[i] = PartItem{Config: ids[i], Index: int(ids[i])}
			if shares != nil && shares[i] != nil {
				items[i].Shares = shares[i]
			} else {
				items[i].Local = bs[i]
			}
		}
		news, err := parted.MergeParts(ctx, items)
		if errors.Is(err, ErrStoreCapped) && news != nil {
			// Merged: the campaign ends after this batch.
			storeCapped, err = err, nil
		}
		if err == nil {
			var res []coverage.BatchResult
			if res, err = store.AddNews(news, ids); err == nil {
				if b := int64(store.Bytes()); indexCap > 0 && b > indexCap && storeCapped == nil {
					storeCapped = fmt.Errorf("%w (%d MB, the share %d MB): continue with a larger memory budget", ErrIndexCapped, b>>20, indexCap>>20)
				}
				return res, nil
			}
		}
		return nil, fmt.Errorf("store parts: %w", err)
	}
	var symErr error // a merge of the symbolic step's that failed
	dispatched := rep.Sims

	window := min(c.Window, max(opt.Budget/10, batchSize))
	interrupted := false
	ks := c.Space.Ks()
	// The adaptive schedule rewards a simulation that found a region at
	// k = 16 (the paper's headline k), else at κ.
	rewardK := slices.Index(ks, 16)
	if rewardK < 0 {
		rewardK = slices.Index(ks, c.Kappa)
	}
	// A window's results go into the campaign at once, in merge order.
	commitSym := func(w *symWindow, t *symTrigger) {
		if opt.onSymWindow != nil {
			opt.onSymWindow(w.batches)
		}
		if len(w.batches) > 0 {
			ids := make([]uint64, len(w.batches))
			for i := range ids {
				ids[i] = uint64(t.Idx)
			}
			found := rep.stepFound(StepSymbolic, len(ks))
			merged, err := merge(w.batches, nil, ids)
			if err != nil {
				symErr = cmp.Or(symErr, err)
				return
			}
			for _, m := range merged {
				for l := range ks {
					found[l] += m.Found[l]
				}
			}
		}
		for _, f := range w.findings {
			// Each branch is a simulation of its own (its pinned delays).
			grp := rep.newGroup(groups, f.key, f.seed, t.Idx, StepSymbolic)
			if err := rep.writeFindings(opt, []*FindingGroup{grp}, t.Idx, fmt.Sprintf("-sym-b%d", f.branch), log); err != nil {
				symErr = cmp.Or(symErr, err)
				return
			}
		}
		for key, n := range w.repeats {
			if g := groups[key]; g != nil {
				g.Count += n
			}
		}
		rep.StepSims[StepSymbolic] = sym.st.Charged
	}
	if sym != nil {
		// A window an interrupted campaign left pending runs first, as
		// it would have before the next batch was chosen.
		if err := sym.runPending(boundCtx, rep, rep.Sims, opt.Budget, commitSym); err != nil {
			if boundCtx.Err() == nil {
				return rep, err
			}
			interrupted = true
		}
		if symErr != nil {
			return rep, symErr
		}
	}
	// A status line and status.json at once, before the first results.
	if err := live(true); err != nil {
		return rep, err
	}
	for !interrupted {
		if storeCapped != nil {
			// The merge that took a part over its cap (a batch's, or
			// the symbolic step's) was its last.
			interrupted = true
			break
		}
		// Keep Lag batches ahead of the merged prefix. The selection
		// between two merges is one: its draws from pools are read at
		// once (selector.nextBatch), which with store parts is one
		// request a part.
		// From the start of the batch: a run stopped by Duration may
		// have merged part of one (its prefix), and batch k+Lag is
		// still chosen after batch k.
		if n := min(opt.Budget-charged(), rep.Sims-rep.Sims%batchSize+opt.Lag*batchSize) - cl.len(); n > 0 {
			chosen = sel.nextBatch(chosen[:0], n)
			rep.PhasesCapped = sel.phasesCapped
			if sel.err != nil {
				return rep, fmt.Errorf("selector: %w", sel.err)
			}
			if err := store.PoolErr(); err != nil {
				return rep, fmt.Errorf("selector: store parts: %w", err)
			}
			for _, g := range chosen {
				if err := cl.append(g); err != nil {
					return rep, err
				}
				pending = append(pending, g)
			}
		}
		for dispatched < cl.len() {
			n := min(batchSize, cl.len()-dispatched)
			off := dispatched - rep.Sims
			// A copy: pending grows while the executor reads.
			ex.dispatch(dispatched, slices.Clone(pending[off:off+n]))
			dispatched += n
		}
		if rep.Sims+charged() >= opt.Budget {
			break
		}
		if ctx.Err() != nil || (opt.Duration > 0 && elapsed() > opt.Duration) {
			interrupted = true
			break
		}
		base, n := rep.Sims, min(batchSize-rep.Sims%batchSize, opt.Budget-charged()-rep.Sims)
		drained, err := wait(ctx, ex, arrived, base, n, tick, stop, opt.stopAfter)
		if err != nil {
			return rep, err
		}
		if ctx.Err() != nil {
			// The batch may have been cut short: leave it unmerged, so
			// that a resume recomputes it exactly.
			interrupted = true
			break
		}
		// whole: the batch is complete. Stopped by Duration, the run
		// merges the prefix of it that arrived, in order, as far as the
		// first configuration without a result, and ends there: the
		// merge is the one that simulation after simulation gives, and a
		// resume merges the rest before what follows the batch (the
		// symbolic step, the saturation window, the next selection).
		whole := true
		if drained {
			interrupted = true
			m := 0
			for m < n {
				if _, ok := arrived[base+m]; !ok {
					break
				}
				m++
			}
			if m == 0 {
				break
			}
			whole, n = m == n, m
		}
		if vf != nil {
			if err := vf.batch(boundCtx, arrived, base, n, pending, groups); err != nil {
				if boundCtx.Err() != nil {
					interrupted = true
					break
				}
				return rep, err
			}
		}
		// Merge in configuration order: the store merges the whole batch
		// on all cores with the outcome of merging one simulation after
		// the other.
		bs, ids := make([]*coverage.Batch, n), make([]uint64, n)
		var shares [][][]byte
		for i := range n {
			r := arrived[base+i]
			bs[i], ids[i] = r.batch, uint64(base+i)
			if r.shares != nil {
				if shares == nil {
					shares = make([][][]byte, n)
				}
				shares[i] = r.shares
			}
		}
		coarsened := store.Coarsenings()
		merged, err := merge(bs, shares, ids)
		if err != nil {
			return rep, err
		}
		if store.Coarsenings() != coarsened {
			log.Warn("coverage store at its memory budget: coarsened", "sims", rep.Sims+n, "bytes", store.Bytes(),
				"budget", store.Options().Memory, "exact_from_k", store.FloorK(), "pools_at_k", store.PoolK(), "over_budget", store.OverBudget())
		}
		for i := base; i < base+n; i++ {
			r := arrived[i]
			delete(arrived, i)
			g := pending[i-base]
			// Reuse only batches of ordinary size: a batch keeps the
			// memory of the largest simulation it ever held.
			if r.batch.Bytes() <= maxReusedBatch {
				r.batch.Reset()
				ex.recycle(r.batch)
			}
			found := rep.stepFound(g.Step, len(ks))
			for l := range ks {
				found[l] += merged[i-base].Found[l]
			}
			rep.StepSims[g.Step]++
			// A step is rewarded for a lower best distance to a
			// condition (directed ACT), else for the new regions it
			// found (bandit.go).
			var closer bool
			var closerAt int64
			if sel.dir != nil && r.best != nil {
				closer, closerAt = sel.dir.add(c, i, g, r.best, r.bestAt)
			}
			if sym != nil && rewardK >= 0 {
				m := &merged[i-base]
				sym.consider(i, g, r.events, closer, closerAt, m.Found[rewardK], m.LastAt[rewardK], r.fault != nil)
			}
			if sel.bandit != nil && rewardK >= 0 {
				score := sel.bandit.yieldScore(merged[i-base].Found[0], merged[i-base].Found[rewardK])
				if closer {
					score = 1
				}
				sel.bandit.reward(g.Step, score)
			}
			if sel.bandit != nil && rep.Sims+1 == sel.warm {
				rep.Series.Mark(int64(sel.warm), "adaptive")
			}
			if g.Step == StepRandom && r.mean != nil {
				p := make([]float64, c.dimP())
				env := g.Schedule[0].Env
				c.normalize(&env, p)
				sel.prof.add(p, r.mean)
			}
			if r.capped {
				rep.Capped++
			}
			if r.dropped > 0 {
				rep.StatesDropped++
			}
			var opened []*FindingGroup // the groups this simulation opens
			for _, h := range r.hits {
				if grp := rep.addFinding(c, groups, r.idx, g, h); grp != nil {
					opened = append(opened, grp)
				}
			}
			if r.fault != nil {
				if grp := rep.addFault(c, groups, r.idx, g, r.fault); grp != nil {
					opened = append(opened, grp)
				}
			}
			if err := rep.writeFindings(opt, opened, r.idx, "", log); err != nil {
				return rep, err
			}
			rep.Sims++
			// Writing a batch's findings can take a minute: the status
			// goes on meanwhile.
			if err := live(false); err != nil {
				return rep, err
			}
		}
		pending = append(pending[:0], pending[n:]...)
		if m, ok := ex.(interface{ merged(int) }); ok {
			m.merged(rep.Sims)
		}
		if !whole {
			break
		}
		if sym != nil {
			if err := sym.afterBatch(boundCtx, rep, rep.Sims, opt.Budget, commitSym); err != nil {
				if boundCtx.Err() != nil {
					interrupted = true
					break
				}
				return rep, err
			}
			if symErr != nil {
				return rep, symErr
			}
			if sym.st.Charged > 0 {
				rep.StepSims[StepSymbolic] = sym.st.Charged
			}
		}
		// The x of the series is the budget spent: simulations and the
		// symbolic step's simulation-equivalents.
		rep.Series.Record(int64(rep.Sims+charged()), store)
		// Saturation of coverage(S, κ) per window (ACT §3).
		if opt.Method == "act" && sel.bandit == nil && rep.Sims-rs.LastWindowSims >= window {
			now := store.VisitedRegions(c.Kappa)
			growth := float64(now-rs.LastWindowRegions) / math.Max(float64(rs.LastWindowRegions), 1)
			stepShare := float64(rep.Sims-rs.StepStart) / float64(opt.Budget)
			saturated := growth < c.Delta
			// Leave room for the later steps on small budgets.
			if sel.step == StepRandom && (saturated || stepShare >= 0.3) {
				sel.step, rs.StepStart = StepEstimation, rep.Sims
				rep.Series.Mark(int64(rep.Sims), "estimation")
				log.Info("act: step 2 (estimation)", "sims", rep.Sims, "growth", growth)
			} else if sel.step == StepEstimation && (saturated || stepShare >= 0.35) {
				sel.step, rs.StepStart = StepConcatenation, rep.Sims
				rep.Series.Mark(int64(rep.Sims), "concatenation")
				log.Info("act: step 3 (concatenation)", "sims", rep.Sims, "growth", growth)
			}
			rs.LastWindowSims, rs.LastWindowRegions = rep.Sims, now
		}
		if err := checkpoint(); err != nil {
			return rep, err
		}
		if opt.Progress != nil {
			lastProgress = time.Time{} // a status line after every merge
		}
		if err := live(false); err != nil {
			return rep, err
		}
	}
	rep.live.Unmerged = 0 // what did not merge is recomputed on resume
	rep.Wall = elapsed()
	rs.Wall = rep.Wall
	if opt.Out != "" {
		if err := save(); err != nil {
			return rep, fmt.Errorf("checkpoint: %w", err)
		}
		if err := rep.writeOutputs(opt.Out, !interrupted && rep.Sims >= opt.Budget); err != nil {
			return rep, err
		}
	}
	if storeCapped != nil {
		return rep, fmt.Errorf("store parts: after %d simulations: %w", rep.Sims, storeCapped)
	}
	if err := ctx.Err(); err != nil && !errors.Is(err, context.Canceled) {
		return rep, err
	}
	return rep, nil
}

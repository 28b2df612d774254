package act

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/actfuzz/actfuzz/coverage"
)

// loop runs the campaign's batches until the budget, the duration, the
// context or a store's cap ends it.
func (r *campaignRun) loop() error {
	if r.sym != nil {
		// A window an interrupted campaign left pending runs first, as
		// it would have before the next batch was chosen.
		if err := r.sym.runPending(r.boundCtx, r.rep, r.rep.Sims, r.opt.Budget, r.commitSym); err != nil {
			if r.boundCtx.Err() == nil {
				return err
			}
			r.interrupted = true
		}
		if r.symErr != nil {
			return r.symErr
		}
	}
	// A status line and status.json at once, before the first results.
	if err := r.live(true); err != nil {
		return err
	}
	for !r.interrupted {
		done, err := r.step()
		if err != nil {
			return err
		}
		if done {
			break
		}
	}
	return nil
}

// step chooses and dispatches what the lag asks for, then waits for the
// next batch and merges it; done: the campaign ends.
func (r *campaignRun) step() (done bool, err error) {
	if r.target.capped() != nil {
		// The merge that took a part over its cap (a batch's, or the
		// symbolic step's) was its last.
		r.interrupted = true
		return true, nil
	}
	if err := r.chooseAhead(); err != nil {
		return false, err
	}
	r.dispatch()
	if r.rep.Sims+r.charged() >= r.opt.Budget {
		return true, nil
	}
	if r.ctx.Err() != nil || (r.opt.Duration > 0 && r.elapsed() > r.opt.Duration) {
		r.interrupted = true
		return true, nil
	}
	n, whole, done, err := r.awaitBatch()
	if err != nil || done {
		return done, err
	}
	if err := r.mergeBatch(n); err != nil {
		return false, err
	}
	if !whole {
		return true, nil
	}
	return r.afterBatch()
}

// chooseAhead keeps Lag batches ahead of the merged prefix. The selection
// between two merges is one: its draws from pools are read at once
// (selector.nextBatch), which with store parts is one request a part.
// From the start of the batch: a run stopped by Duration may have merged
// part of one (its prefix), and batch k+Lag is still chosen after batch k.
func (r *campaignRun) chooseAhead() error {
	rep := r.rep
	n := min(r.opt.Budget-r.charged(), rep.Sims-rep.Sims%batchSize+r.opt.Lag*batchSize) - r.cl.len()
	if n <= 0 {
		return nil
	}
	r.chosen = r.sel.nextBatch(r.chosen[:0], n)
	rep.PhasesCapped = r.sel.phasesCapped
	if r.sel.err != nil {
		return fmt.Errorf("selector: %w", r.sel.err)
	}
	if err := r.store.PoolErr(); err != nil {
		return fmt.Errorf("selector: store parts: %w", err)
	}
	for _, g := range r.chosen {
		if err := r.cl.append(g); err != nil {
			return err
		}
		r.pending = append(r.pending, g)
	}
	return nil
}

// dispatch hands the executor every logged configuration not yet
// dispatched, in batches.
func (r *campaignRun) dispatch() {
	for r.dispatched < r.cl.len() {
		n := min(batchSize, r.cl.len()-r.dispatched)
		off := r.dispatched - r.rep.Sims
		// A copy: pending grows while the executor reads.
		r.ex.dispatch(r.dispatched, slices.Clone(r.pending[off:off+n]))
		r.dispatched += n
	}
}

// awaitBatch waits for the results of the next batch (from rep.Sims on)
// and checks its findings by replay; it returns how many of them to
// merge, whole if that is the whole batch; done: the campaign ends
// without merging.
func (r *campaignRun) awaitBatch() (n int, whole, done bool, err error) {
	base := r.rep.Sims
	n = min(batchSize-base%batchSize, r.opt.Budget-r.charged()-base)
	drained, err := wait(r.ctx, r.ex, r.arrived, base, n, r.tick, r.stop, r.opt.stopAfter)
	if err != nil {
		return 0, false, false, err
	}
	if r.ctx.Err() != nil {
		// The batch may have been cut short: leave it unmerged, so
		// that a resume recomputes it exactly.
		r.interrupted = true
		return 0, false, true, nil
	}
	// whole: the batch is complete. Stopped by Duration, the run merges
	// the prefix of it that arrived, in order, as far as the first
	// configuration without a result, and ends there: the merge is the
	// one that simulation after simulation gives, and a resume merges the
	// rest before what follows the batch (the symbolic step, the
	// saturation window, the next selection).
	whole = true
	if drained {
		r.interrupted = true
		m := 0
		for m < n {
			if _, ok := r.arrived[base+m]; !ok {
				break
			}
			m++
		}
		if m == 0 {
			return 0, false, true, nil
		}
		whole, n = m == n, m
	}
	if r.vf != nil {
		if err := r.vf.batch(r.boundCtx, r.arrived, base, n, r.pending, r.groups); err != nil {
			if r.boundCtx.Err() != nil {
				r.interrupted = true
				return 0, false, true, nil
			}
			return 0, false, false, err
		}
	}
	return n, whole, false, nil
}

// mergeBatch merges the n results from rep.Sims on in configuration
// order: the store merges the whole batch on all cores with the outcome
// of merging one simulation after the other.
func (r *campaignRun) mergeBatch(n int) error {
	base := r.rep.Sims
	bs, ids := make([]*coverage.Batch, n), make([]uint64, n)
	var shares [][][]byte
	for i := range n {
		res := r.arrived[base+i]
		bs[i], ids[i] = res.batch, uint64(base+i)
		if res.shares != nil {
			if shares == nil {
				shares = make([][][]byte, n)
			}
			shares[i] = res.shares
		}
	}
	store := r.store
	coarsened := store.Coarsenings()
	merged, err := r.target.merge(r.ctx, bs, shares, ids)
	if err != nil {
		return err
	}
	if store.Coarsenings() != coarsened {
		r.log.Warn("coverage store at its memory budget: coarsened", "sims", base+n, "bytes", store.Bytes(),
			"budget", store.Options().Memory, "exact_from_k", store.FloorK(), "pools_at_k", store.PoolK(), "over_budget", store.OverBudget())
	}
	for i := base; i < base+n; i++ {
		if err := r.account(i, r.pending[i-base], &merged[i-base]); err != nil {
			return err
		}
	}
	r.pending = append(r.pending[:0], r.pending[n:]...)
	if m, ok := r.ex.(interface{ merged(int) }); ok {
		m.merged(r.rep.Sims)
	}
	return nil
}

// account takes simulation i (configuration g, merged as m) into the
// campaign: its step's counts and rewards, its findings.
func (r *campaignRun) account(i int, g Config, m *coverage.BatchResult) error {
	c, rep, sel := r.c, r.rep, r.sel
	res := r.arrived[i]
	delete(r.arrived, i)
	// Reuse only batches of ordinary size: a batch keeps the memory of
	// the largest simulation it ever held.
	if res.batch.Bytes() <= maxReusedBatch {
		res.batch.Reset()
		r.ex.recycle(res.batch)
	}
	found := rep.stepFound(g.Step, len(r.ks))
	for l := range r.ks {
		found[l] += m.Found[l]
	}
	rep.StepSims[g.Step]++
	// A step is rewarded for a lower best distance to a condition
	// (directed ACT), else for the new regions it found (bandit.go).
	var closer bool
	var closerAt int64
	if sel.dir != nil && res.best != nil {
		closer, closerAt = sel.dir.add(c, i, g, res.best, res.bestAt)
	}
	if r.sym != nil && r.rewardK >= 0 {
		r.sym.consider(i, g, res.events, closer, closerAt, m.Found[r.rewardK], m.LastAt[r.rewardK], res.fault != nil)
	}
	if sel.bandit != nil && r.rewardK >= 0 {
		score := sel.bandit.yieldScore(m.Found[0], m.Found[r.rewardK])
		if closer {
			score = 1
		}
		sel.bandit.reward(g.Step, score)
	}
	if sel.bandit != nil && rep.Sims+1 == sel.warm {
		rep.Series.Mark(int64(sel.warm), "adaptive")
	}
	if g.Step == StepRandom && res.mean != nil {
		p := make([]float64, c.dimP())
		env := g.Schedule[0].Env
		c.normalize(&env, p)
		sel.prof.add(p, res.mean)
	}
	if res.capped {
		rep.Capped++
	}
	if res.dropped > 0 {
		rep.StatesDropped++
	}
	var opened []*FindingGroup // the groups this simulation opens
	for _, h := range res.hits {
		if grp := rep.addFinding(c, r.groups, res.idx, g, h); grp != nil {
			opened = append(opened, grp)
		}
	}
	if res.fault != nil {
		if grp := rep.addFault(c, r.groups, res.idx, g, res.fault); grp != nil {
			opened = append(opened, grp)
		}
	}
	if err := rep.writeFindings(r.opt, opened, res.idx, "", r.log); err != nil {
		return err
	}
	rep.Sims++
	// Writing a batch's findings can take a minute: the status goes on
	// meanwhile.
	return r.live(false)
}

// afterBatch runs what follows a whole batch's merge: the symbolic step,
// the series, the saturation window, the checkpoint and the status.
func (r *campaignRun) afterBatch() (done bool, err error) {
	rep := r.rep
	if r.sym != nil {
		if err := r.sym.afterBatch(r.boundCtx, rep, rep.Sims, r.opt.Budget, r.commitSym); err != nil {
			if r.boundCtx.Err() != nil {
				r.interrupted = true
				return true, nil
			}
			return false, err
		}
		if r.symErr != nil {
			return false, r.symErr
		}
		if r.sym.st.Charged > 0 {
			rep.StepSims[StepSymbolic] = r.sym.st.Charged
		}
	}
	// The x of the series is the budget spent: simulations and the
	// symbolic step's simulation-equivalents.
	rep.Series.Record(int64(rep.Sims+r.charged()), r.store)
	if r.opt.Method == "act" && r.sel.bandit == nil && rep.Sims-r.rs.LastWindowSims >= r.window {
		r.saturationWindow()
	}
	if err := r.checkpoint(); err != nil {
		return false, err
	}
	if r.opt.Progress != nil {
		r.lastProgress = time.Time{} // a status line after every merge
	}
	return false, r.live(false)
}

// saturationWindow moves the paper's schedule to its next step when
// coverage(S, κ) saturates over a window (ACT §3).
func (r *campaignRun) saturationWindow() {
	rep, rs, sel := r.rep, r.rs, r.sel
	now := r.store.VisitedRegions(r.c.Kappa)
	growth := float64(now-rs.LastWindowRegions) / math.Max(float64(rs.LastWindowRegions), 1)
	stepShare := float64(rep.Sims-rs.StepStart) / float64(r.opt.Budget)
	saturated := growth < r.c.Delta
	// Leave room for the later steps on small budgets.
	if sel.step == StepRandom && (saturated || stepShare >= 0.3) {
		sel.step, rs.StepStart = StepEstimation, rep.Sims
		rep.Series.Mark(int64(rep.Sims), "estimation")
		r.log.Info("act: step 2 (estimation)", "sims", rep.Sims, "growth", growth)
	} else if sel.step == StepEstimation && (saturated || stepShare >= 0.35) {
		sel.step, rs.StepStart = StepConcatenation, rep.Sims
		rep.Series.Mark(int64(rep.Sims), "concatenation")
		r.log.Info("act: step 3 (concatenation)", "sims", rep.Sims, "growth", growth)
	}
	rs.LastWindowSims, rs.LastWindowRegions = rep.Sims, now
}

// commitSym takes a symbolic window's results into the campaign at once,
// in merge order.
func (r *campaignRun) commitSym(w *symWindow, t *symTrigger) {
	rep := r.rep
	if r.opt.onSymWindow != nil {
		r.opt.onSymWindow(w.batches)
	}
	if len(w.batches) > 0 {
		ids := make([]uint64, len(w.batches))
		for i := range ids {
			ids[i] = uint64(t.Idx)
		}
		found := rep.stepFound(StepSymbolic, len(r.ks))
		merged, err := r.target.merge(r.ctx, w.batches, nil, ids)
		if err != nil {
			r.symErr = cmp.Or(r.symErr, err)
			return
		}
		for _, m := range merged {
			for l := range r.ks {
				found[l] += m.Found[l]
			}
		}
	}
	for _, f := range w.findings {
		// Each branch is a simulation of its own (its pinned delays).
		grp := rep.newGroup(r.groups, f.key, f.seed, t.Idx, StepSymbolic)
		if err := rep.writeFindings(r.opt, []*FindingGroup{grp}, t.Idx, fmt.Sprintf("-sym-b%d", f.branch), r.log); err != nil {
			r.symErr = cmp.Or(r.symErr, err)
			return
		}
	}
	for key, n := range w.repeats {
		if g := r.groups[key]; g != nil {
			g.Count += n
		}
	}
	rep.StepSims[StepSymbolic] = r.sym.st.Charged
}

// checkpoint saves the merged state when the checkpoint period has
// passed since the last one; it is called after every merge and by the
// wait for results (wait.go), so the period holds however slow a batch is.
func (r *campaignRun) checkpoint() error {
	if r.opt.Out == "" || time.Since(r.lastCheckpoint) < r.target.checkpointPeriod() {
		return nil
	}
	r.rs.Wall = r.elapsed()
	t0 := time.Now()
	if err := r.save(); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	r.target.checkpointed(time.Since(t0))
	if err := r.rep.writeStatus(r.opt.Out, r.elapsed(), false); err != nil {
		return fmt.Errorf("status: %w", err)
	}
	r.lastCheckpoint, r.lastStatus = time.Now(), time.Now()
	return nil
}

// live reports progress (the status line, status.json) at its own
// periods, also while a batch simulates: from the first results on, not
// once a batch (issue 51); always at once when force.
func (r *campaignRun) live(force bool) error {
	opt := &r.opt
	r.rep.live = liveCounts{Unmerged: len(r.arrived), Budget: opt.Budget - r.charged(), Duration: opt.Duration}
	if opt.Out != "" && (force || time.Since(r.lastStatus) >= StatusEvery) {
		if err := r.rep.writeStatus(opt.Out, r.elapsed(), false); err != nil {
			return fmt.Errorf("status: %w", err)
		}
		r.lastStatus = time.Now()
	}
	if opt.Progress != nil && (force || time.Since(r.lastProgress) >= progressEvery) {
		opt.Progress(r.rep.liveStatusOf(r.sel.step, r.elapsed()))
		r.lastProgress = time.Now()
	}
	return nil
}

// tick is what the wait for results calls every checkpointTick.
func (r *campaignRun) tick() error {
	if err := r.checkpoint(); err != nil {
		return err
	}
	return r.live(false)
}

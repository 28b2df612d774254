package act

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/coverage"
	"github.com/actfuzz/actfuzz/netenv"
)

// Options control one campaign run.
type Options struct {
	Method   string        // "act" (default), "ran" or "man"
	Budget   int           // simulations; 0: the campaign's budget
	Duration time.Duration // wall-clock limit; 0: none
	Workers  int           // 0: GOMAXPROCS
	Out      string        // output directory; "" writes nothing
	// Resume continues the campaign checkpointed in Out, if any.
	Resume bool
	// CheckpointEvery bounds the time between checkpoints (default 30 s).
	CheckpointEvery time.Duration
	// MaxOutOfRange bounds the distinct states outside S that the store
	// keeps (default 1,000,000; negative: keep all). They never count as
	// regions, and in a wide P there are as many of them as inside S.
	MaxOutOfRange int
	Logger        *slog.Logger
	// Subject runs the simulations; nil means the native simulator.
	Subject netenv.Subject
	// Progress, if set, is called after every batch.
	Progress func(Status)
	// Isolate runs simulations in supervised worker processes (see
	// isolate.go); false runs them on goroutines of this process. The
	// workers are this executable run as "worker" (WorkerCommand): a
	// program of its own (a custom CCAI's) must then serve that argument
	// with WorkerMain.
	Isolate bool
	IsolateOptions
}

// Status is a campaign's progress.
type Status struct {
	Method   string         `json:"method"`
	Sims     int            `json:"sims"`
	Step     string         `json:"step"`
	SimsPerS float64        `json:"sims_per_s"`
	Regions  map[int]uint64 `json:"-"`
	Findings int            `json:"findings"`
	Faults   int            `json:"faults"`
}

// FindingGroup is a set of near-duplicate hits: same condition, same region
// of S at k = 128. The first hit is kept as the seed.
type FindingGroup struct {
	Seed  *corpus.Seed
	Count int
	Path  string
	key   string
}

// Report is the outcome of a campaign run.
type Report struct {
	Method   string
	Sims     int
	Wall     time.Duration
	Store    *coverage.Store
	Series   *coverage.Series
	Findings []*FindingGroup
	// StepSims counts simulations per step; StepRegions[step][l] counts
	// the regions at k = 2^l first reached by a simulation of that step
	// (ACT §4.2, Fig. 10: which step found what).
	StepSims    map[Step]int
	StepRegions map[Step][]uint64
	Capped      int // runs stopped by the simulated-time cap
	subject     netenv.Subject
}

// Regions returns the visited regions at every k.
func (r *Report) Regions() map[int]uint64 {
	m := map[int]uint64{}
	for _, k := range r.Store.Space().Ks() {
		m[k] = r.Store.VisitedRegions(k)
	}
	return m
}

// batchSize is fixed so that results do not depend on the worker count.
const batchSize = 64

type job struct {
	idx int
	g   Config
}

type hit struct {
	cond  string
	when  string
	flow  int
	at    time.Duration
	state map[string]any
	obs   []float64
}

type result struct {
	idx    int
	batch  *coverage.Batch
	mean   []float64
	hits   []hit
	fault  *corpus.Finding
	capped bool
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
	store, err := coverage.NewStore(c.Space, coverage.Options{Seed: c.Seed})
	if err != nil {
		return nil, fmt.Errorf("state space: %w", err)
	}
	if opt.Out != "" {
		if err := os.MkdirAll(filepath.Join(opt.Out, "findings"), 0o755); err != nil {
			return nil, err
		}
		if err := corpus.WriteFileAtomic(filepath.Join(opt.Out, "campaign.yaml"), c.Source); err != nil {
			return nil, err
		}
	}
	var configs []Config
	src := newSource(c.Seed, opt.Method)
	sel := &selector{c: c, method: opt.Method, src: src, rng: rand.New(src), store: store, configs: &configs,
		prof: &profile{dimP: len(c.Params), dimS: len(c.Space.Vars)}, man: manEnvs(), step: StepRandom,
		pc: make([]float64, len(c.Params))}
	if opt.Subject == nil {
		opt.Subject = netenv.Native{}
	}
	rep := &Report{Method: opt.Method, Store: store, subject: opt.Subject, Series: coverage.NewSeries(opt.Method, c.Space),
		StepSims: map[Step]int{}, StepRegions: map[Step][]uint64{}}
	groups := map[string]*FindingGroup{}
	rs := &runState{}
	if opt.Resume && opt.Out != "" {
		ok, err := loadCheckpoint(opt.Out, c, opt.Method, sel, rep, groups, rs)
		if err != nil {
			return nil, err
		}
		if ok {
			log.Info("resuming", "sims", rep.Sims)
		}
	}
	if opt.CheckpointEvery <= 0 {
		opt.CheckpointEvery = 30 * time.Second
	}
	switch {
	case opt.MaxOutOfRange == 0:
		store.LimitOutOfRange(1_000_000)
	case opt.MaxOutOfRange > 0:
		store.LimitOutOfRange(opt.MaxOutOfRange)
	}
	// checkpoint saves the merged state when CheckpointEvery has passed
	// since the last one; it is called after every merge and by the wait
	// for results (wait.go), so the period holds however slow a batch is.
	lastCheckpoint := time.Now()
	checkpoint := func() error {
		if opt.Out == "" || time.Since(lastCheckpoint) < opt.CheckpointEvery {
			return nil
		}
		if err := saveCheckpoint(opt.Out, c, opt.Method, sel, rep, rs); err != nil {
			return fmt.Errorf("checkpoint: %w", err)
		}
		lastCheckpoint = time.Now()
		return nil
	}

	// Pipeline: while batch k is merged, batch k+1 simulates. Batch k+2 is
	// chosen from the store as it stands after batch k, whatever the
	// worker count, so results stay independent of it. Configurations
	// chosen but not yet merged stay in the log, so a checkpoint can
	// resume them exactly.
	ex := newExecutor(ctx, c, store.Space(), opt)
	defer ex.close()
	dispatched := rep.Sims
	arrived := map[int]result{}

	start := time.Now()
	window := min(c.Window, max(opt.Budget/10, batchSize))
	interrupted := false
	ks := c.Space.Ks()
	before := make([]uint64, len(ks))
	for {
		// Keep two batches ahead of the merged prefix.
		for len(configs) < min(opt.Budget, rep.Sims+2*batchSize) {
			n := min(batchSize, opt.Budget-len(configs))
			for i := 0; i < n; i++ {
				configs = append(configs, sel.next())
			}
		}
		for dispatched < len(configs) {
			n := min(batchSize, len(configs)-dispatched)
			// A copy: the log grows while the executor reads.
			ex.dispatch(dispatched, slices.Clone(configs[dispatched:dispatched+n]))
			dispatched += n
		}
		if rep.Sims >= opt.Budget {
			break
		}
		if ctx.Err() != nil || (opt.Duration > 0 && time.Since(start) > opt.Duration) {
			interrupted = true
			break
		}
		base, n := rep.Sims, min(batchSize, opt.Budget-rep.Sims)
		if err := wait(ctx, ex, arrived, base, n, checkpoint); err != nil {
			return rep, err
		}
		if ctx.Err() != nil {
			// The batch may have been cut short: leave it unmerged, so
			// that a resume recomputes it exactly.
			interrupted = true
			break
		}
		// Merge in configuration order.
		for i := base; i < base+n; i++ {
			r := arrived[i]
			delete(arrived, i)
			g := configs[r.idx]
			for l, k := range ks {
				before[l] = store.VisitedRegions(k)
			}
			store.AddBatch(r.batch, uint64(r.idx))
			r.batch.Reset()
			ex.recycle(r.batch)
			found := rep.StepRegions[g.Step]
			if found == nil {
				found = make([]uint64, len(ks))
				rep.StepRegions[g.Step] = found
			}
			for l, k := range ks {
				found[l] += store.VisitedRegions(k) - before[l]
			}
			rep.StepSims[g.Step]++
			if g.Step == StepRandom && r.mean != nil {
				p := make([]float64, len(c.Params))
				env := g.Schedule[0].Env
				c.normalize(&env, p)
				sel.prof.add(p, r.mean)
			}
			if r.capped {
				rep.Capped++
			}
			for _, h := range r.hits {
				rep.addFinding(c, opt, groups, r.idx, g, h, log)
			}
			if r.fault != nil {
				rep.addFault(c, opt, groups, r.idx, g, r.fault, log)
			}
			rep.Sims++
		}
		rep.Series.Record(int64(rep.Sims), store)
		// Saturation of coverage(S, κ) per window (ACT §3).
		if opt.Method == "act" && rep.Sims-rs.LastWindowSims >= window {
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
			st := rep.status(sel.step, time.Since(start))
			opt.Progress(st)
		}
	}
	rep.Wall = time.Since(start)
	if opt.Out != "" {
		if err := saveCheckpoint(opt.Out, c, opt.Method, sel, rep, rs); err != nil {
			return rep, fmt.Errorf("checkpoint: %w", err)
		}
		if err := rep.writeOutputs(opt.Out, !interrupted && rep.Sims >= opt.Budget); err != nil {
			return rep, err
		}
	}
	if err := ctx.Err(); err != nil && !errors.Is(err, context.Canceled) {
		return rep, err
	}
	return rep, nil
}

func (r *Report) status(step Step, elapsed time.Duration) Status {
	st := Status{Method: r.Method, Sims: r.Sims, SimsPerS: float64(r.Sims) / elapsed.Seconds(), Regions: r.Regions()}
	if r.Method == "act" {
		st.Step = step.String()
	} else {
		st.Step = r.Method
	}
	for _, g := range r.Findings {
		if g.Seed.Finding.Kind == "condition" {
			st.Findings++
		} else {
			st.Faults++
		}
	}
	return st
}

func (r *Report) seedOf(c *Campaign, g Config) *corpus.Seed {
	return &corpus.Seed{Version: corpus.SeedVersion, Program: corpus.ProgramVersion(), Subject: r.subject.Name(), CCAI: c.CCAI,
		Profile: c.Profile.String(), Topology: c.Topology, Bytes: c.Bytes, SACK: c.SACK, Handshake: c.Handshake, Seed: g.Seed, Schedule: g.Schedule}
}

func (r *Report) addFinding(c *Campaign, opt Options, groups map[string]*FindingGroup, idx int, g Config, h hit, log *slog.Logger) {
	key := h.cond + "|" + regionKey(c.Space, h.state)
	if grp, ok := groups[key]; ok {
		grp.Count++
		return
	}
	s := r.seedOf(c, g)
	s.Finding = &corpus.Finding{Condition: h.cond, When: h.when, Kind: "condition", TimeNS: int64(h.at), Flow: h.flow, State: h.state}
	grp := &FindingGroup{Seed: s, Count: 1, key: key}
	groups[key] = grp
	r.Findings = append(r.Findings, grp)
	r.writeFinding(opt, grp, idx, log)
}

func (r *Report) addFault(c *Campaign, opt Options, groups map[string]*FindingGroup, idx int, g Config, f *corpus.Finding, log *slog.Logger) {
	key := "fault|" + f.Kind
	if grp, ok := groups[key]; ok {
		grp.Count++
		return
	}
	s := r.seedOf(c, g)
	s.Finding = f
	grp := &FindingGroup{Seed: s, Count: 1, key: key}
	groups[key] = grp
	r.Findings = append(r.Findings, grp)
	r.writeFinding(opt, grp, idx, log)
}

// writeFinding writes the seed as soon as it is found, with its CSV trace
// and plot. The file name is the configuration index, so a resumed
// campaign that finds it again writes the same file.
func (r *Report) writeFinding(opt Options, grp *FindingGroup, idx int, log *slog.Logger) {
	if opt.Out == "" {
		return
	}
	name := sanitize(grp.Seed.Finding.Condition)
	if grp.Seed.Finding.Kind != "condition" {
		name = "fault-" + sanitize(grp.Seed.Finding.Kind)
	}
	grp.Path = filepath.Join(opt.Out, "findings", name, fmt.Sprintf("%s-%07d.json", r.Method, idx))
	if err := corpus.WriteArtifacts(context.Background(), r.subject, grp.Seed, grp.Path); err != nil {
		log.Error("writing finding", "path", grp.Path, "err", err)
	}
}

func (r *Report) writeOutputs(dir string, done bool) error {
	cov := filepath.Join(dir, "coverage")
	if err := os.MkdirAll(cov, 0o755); err != nil {
		return err
	}
	var tbl strings.Builder
	snap := r.Store.Snapshot(r.Method, int64(r.Sims))
	if err := coverage.WriteMarkdown(&tbl, snap); err != nil {
		return err
	}
	if err := corpus.WriteFileAtomic(filepath.Join(cov, "table.md"), []byte(tbl.String())); err != nil {
		return err
	}
	if err := coverage.SaveCoveragePlot(filepath.Join(cov, "coverage.png"), snap); err != nil {
		return err
	}
	// Figs. 9–10: growth of coverage(S,2) and coverage(S,128).
	for _, k := range []int{2, 128} {
		if _, ok := r.Store.Space().Level(k); !ok || len(r.Series.Points) == 0 {
			continue
		}
		if err := coverage.SaveGrowthPlot(filepath.Join(cov, fmt.Sprintf("growth-k%d.png", k)), k, r.Series); err != nil {
			return err
		}
	}
	st := r.status(0, r.Wall)
	b := fmt.Sprintf("{\n  \"method\": %q,\n  \"sims\": %d,\n  \"wall_s\": %.3f,\n  \"findings\": %d,\n  \"faults\": %d,\n  \"done\": %v\n}\n",
		r.Method, r.Sims, r.Wall.Seconds(), st.Findings, st.Faults, done)
	return corpus.WriteFileAtomic(filepath.Join(dir, "status.json"), []byte(b))
}

func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// regionKey groups a hit by the region of its S variables at k = 128.
func regionKey(sp coverage.Space, state map[string]any) string {
	var b strings.Builder
	for _, v := range sp.Vars {
		switch x := state[v.Name].(type) {
		case float64:
			if v.Step > 0 {
				fmt.Fprintf(&b, "%d,", int64(math.Floor((x-v.Min)/v.Step))/128)
			}
		default:
			fmt.Fprintf(&b, "%v,", x)
		}
	}
	return b.String()
}

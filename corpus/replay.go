package corpus

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
	"github.com/actfuzz/actfuzz/netenv/symbolic"
)

// Watcher turns state records into observations and checks conditions on
// them, per flow, remembering each flow's previous observation. It is the
// one place where campaigns and replay evaluate conditions, so both agree.
type Watcher struct {
	// Schemas (per flow) and conds are immutable once compiled; a
	// snapshot shares them, which matters because a schema's Values can
	// be a package-level table that other goroutines read (restoring
	// it, even with the same bytes, would race with them).
	Schemas []Schema `snapshot:"shared"`
	evals   []*Evaluator
	cur     [][]float64
	prev    [][]float64
	started []bool
	hist    []flowHistory // per flow: what the derived variables remember
	hits    []int
	// sched is the simulation's schedule (Start), phase the index of the
	// phase in force at the last record.
	sched netenv.Schedule
	phase int
	// OnObservation, if set, sees every observation (after conditions).
	//
	// A snapshot of a symbolic run (netenv/snapshot) restores the
	// watcher but not what these functions captured: their owner saves
	// that (seedWatch's hits are reached through the seedWatch itself).
	OnObservation func(flow int, obs []float64, at time.Duration) `snapshot:"shared"`
	// OnHit is called for each condition that holds on an observation.
	OnHit func(flow int, cond *Condition, obs []float64, at time.Duration) `snapshot:"shared"`
	// Err is the first condition evaluation error.
	Err   error
	conds [][]*Condition `snapshot:"shared"`
}

// NewWatcher compiles specs for every flow's CCAI on the native subject.
func NewWatcher(ccas []string, specs []ConditionSpec) (*Watcher, error) {
	return NewWatcherFor(netenv.NativeCapabilities(), ccas, specs)
}

// NewWatcherFor compiles specs for every flow's congestion control on a
// subject with capabilities caps: observations have the subject's schema
// (SchemaOf).
func NewWatcherFor(caps netenv.Capabilities, ccas []string, specs []ConditionSpec) (*Watcher, error) {
	w := &Watcher{}
	for i, c := range ccas {
		sc := SchemaOf(caps, c)
		mine := specs
		if slices.ContainsFunc(specs, func(sp ConditionSpec) bool { return len(sp.Only) > 0 }) {
			native := caps.NativeName(c)
			mine = nil
			for _, sp := range specs {
				if sp.AppliesTo(c, native) {
					mine = append(mine, sp)
				}
			}
		}
		specs := mine
		conds, err := Compile(specs, sc)
		if err != nil && i > 0 {
			// Flows of another CCAI lack the first one's variables:
			// a condition naming them applies to the flows that have
			// them.
			conds = conds[:0]
			for _, sp := range specs {
				if one, err := Compile([]ConditionSpec{sp}, sc); err == nil {
					conds = append(conds, one...)
				}
			}
		} else if err != nil {
			return nil, err
		}
		w.Schemas = append(w.Schemas, sc)
		w.conds = append(w.conds, conds)
		w.evals = append(w.evals, NewEvaluator(sc, conds))
		w.cur = append(w.cur, make([]float64, len(sc)))
		w.prev = append(w.prev, make([]float64, len(sc)))
		w.started = append(w.started, false)
	}
	w.hist = make([]flowHistory, len(ccas))
	return w, nil
}

// Reset prepares for a new simulation whose schedule is not known:
// conditions that read the parameters (p.X) fail. Use Start.
func (w *Watcher) Reset() {
	for i := range w.evals {
		w.evals[i].Reset()
		w.started[i] = false
		w.hist[i].started = false
	}
	w.sched, w.phase = nil, 0
	w.Err = nil
}

// Start prepares for a new simulation of schedule sched (the parameters
// that conditions read as p.X follow its phases).
func (w *Watcher) Start(sched netenv.Schedule) {
	w.Reset()
	w.sched = sched
	if len(sched) > 0 {
		for _, e := range w.evals {
			e.SetEnv(&sched[0].Env)
		}
	}
}

// Env is the environment in force at the last record (nil without a
// schedule, Start).
func (w *Watcher) Env() *netenv.Env {
	if len(w.sched) == 0 {
		return nil
	}
	return &w.sched[w.phase].Env
}

// followSchedule moves to the phase in force at t (records come in time
// order; a phase ends at its Until, the last one never).
func (w *Watcher) followSchedule(t time.Duration) {
	moved := false
	for w.phase < len(w.sched)-1 && t >= w.sched[w.phase].Until {
		w.phase++
		moved = true
	}
	if moved {
		for _, e := range w.evals {
			e.SetEnv(&w.sched[w.phase].Env)
		}
	}
}

// Observe implements observe.Observer.
func (w *Watcher) Observe(r *observe.Record) {
	f := int(r.Flow)
	cur, prev := w.cur[f], w.prev[f]
	if w.started[f] {
		copy(prev, cur)
	}
	w.followSchedule(r.Time)
	w.Schemas[f].Observe(r, cur)
	w.derive(f, r, cur)
	if !w.started[f] {
		copy(prev, cur)
		w.started[f] = true
	}
	if len(w.conds[f]) > 0 {
		hits, err := w.evals[f].Eval(cur, prev, w.hits[:0])
		if cap(hits) != cap(w.hits) {
			w.hits = hits // grown (a store only then: see Evaluator.setVals)
		}
		if err != nil && w.Err == nil {
			if cf, ok := AsConditionFault(err); ok {
				cf.Flow, cf.At, cf.State = f, r.Time, StateMap(w.Schemas[f], cur)
			}
			w.Err = err
		}
		if w.OnHit != nil {
			for _, ci := range hits {
				w.OnHit(f, w.conds[f][ci], cur, r.Time)
			}
		}
	}
	if w.OnObservation != nil {
		w.OnObservation(f, cur, r.Time)
	}
}

// ReplayResult says whether a seed's finding reproduced.
type ReplayResult struct {
	Result     netenv.Result `json:"result"`
	Reproduced bool          `json:"reproduced"`
	HitTimeNS  int64         `json:"hit_time_ns"`
	HitState   StateValues   `json:"hit_state,omitempty"`
	Diff       []string      `json:"diff,omitempty"`
	// Witness is the replayed outcome of a witness seed.
	Witness *symbolic.Replayed `json:"witness,omitempty"`
}

// Replay re-runs a seed; for a finding it checks that the same condition
// holds at the same time with the same state. extra, if not nil, also sees
// every state record (a CSV trace, a plot).
func Replay(ctx context.Context, s *Seed, extra observe.Observer) (*ReplayResult, error) {
	return ReplayWith(ctx, netenv.Native{}, s, extra)
}

// ReplayWith replays a seed on a given subject. A witness seed always runs
// on the native simulator (subj is not used).
func ReplayWith(ctx context.Context, subj netenv.Subject, s *Seed, extra observe.Observer) (*ReplayResult, error) {
	if s.Witness != nil {
		return replayWitness(ctx, s, &symbolic.Tracing{State: extra})
	}
	if s.Finding != nil && ProcessFault(s.Finding.Kind) {
		return nil, fmt.Errorf("a %s fault replays only in a worker process under a watchdog and a memory limit (actfuzz replay)", s.Finding.Kind)
	}
	cfg, err := s.Config()
	if err != nil {
		return nil, err
	}
	cfg.HashTrace = true
	var specs []ConditionSpec
	if s.Finding != nil && (s.Finding.Kind == "condition" || s.Finding.Kind == FaultCondition) {
		specs = []ConditionSpec{s.Finding.Spec()}
	}
	w, err := NewWatcherFor(subj.Capabilities(), s.CCAI, specs)
	if err != nil {
		return nil, err
	}
	w.Start(cfg.Schedule)
	out := &ReplayResult{HitTimeNS: -1}
	w.OnHit = func(flow int, c *Condition, obs []float64, at time.Duration) {
		if out.HitTimeNS < 0 {
			out.HitTimeNS = int64(at)
			out.HitState = StateMap(w.Schemas[flow], obs)
		}
	}
	var obs observe.Observer = w
	if extra != nil {
		obs = tee{w, extra}
	}
	res, err := subj.Run(ctx, cfg, obs)
	var fault *netenv.Fault
	if errors.As(err, &fault) && s.Finding != nil && s.Finding.Kind == fault.Kind {
		// A subject fault (a panic of the CCAI) is the finding itself.
		out.Reproduced = true
		out.Diff = nil
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	out.Result = res
	// A condition that faults is what a campaign records as a
	// condition-fault finding: the replay's outcome, not its error.
	cf, condFault := AsConditionFault(w.Err)
	if w.Err != nil && !condFault {
		return nil, w.Err
	}
	if s.Finding == nil {
		out.Reproduced = true
		return out, nil
	}
	f := s.Finding
	switch f.Kind {
	case FaultCondition:
		if condFault {
			out.HitTimeNS = int64(cf.At)
		}
		switch {
		case !condFault:
			out.Diff = append(out.Diff, fmt.Sprintf("condition %q did not fault (recorded at %v: %s)", f.Condition, time.Duration(f.TimeNS), f.Detail))
		case int64(cf.At) != f.TimeNS:
			out.Diff = append(out.Diff, fmt.Sprintf("condition %q faulted at %v, recorded %v", f.Condition, cf.At, time.Duration(f.TimeNS)))
		}
	case "condition":
		if condFault {
			out.Diff = append(out.Diff, fmt.Sprintf("condition %q faulted at %v on flow %d: %v", f.Condition, cf.At, cf.Flow, cf.Err))
		}
		switch {
		case out.HitTimeNS < 0:
			out.Diff = append(out.Diff, fmt.Sprintf("condition %q never held (recorded at %v)", f.Condition, time.Duration(f.TimeNS)))
		case out.HitTimeNS != f.TimeNS:
			out.Diff = append(out.Diff, fmt.Sprintf("first hit at %v, recorded %v", time.Duration(out.HitTimeNS), time.Duration(f.TimeNS)))
		}
		for k, v := range f.State {
			if got, ok := out.HitState[k]; ok && fmt.Sprint(got) != fmt.Sprint(v) {
				out.Diff = append(out.Diff, fmt.Sprintf("state %s = %v, recorded %v", k, got, v))
			}
		}
	case "event-cap":
		if !res.Capped {
			out.Diff = append(out.Diff, "the run was not capped")
		}
	}
	out.Reproduced = len(out.Diff) == 0
	return out, nil
}

type tee struct{ a, b observe.Observer }

func (t tee) Observe(r *observe.Record) { t.a.Observe(r); t.b.Observe(r) }

// WriteArtifacts writes a finding's seed to jsonPath and, beside it, its
// trace (trimmed, compressed: WriteSimulation) and the PNG plot of a
// replay.
func WriteArtifacts(ctx context.Context, subj netenv.Subject, s *Seed, jsonPath string) error {
	base := strings.TrimSuffix(jsonPath, filepath.Ext(jsonPath))
	return WriteSimulation(ctx, subj, []*Seed{s}, []string{jsonPath}, base+TraceExt)
}

// WriteSimulation writes the seeds of one simulation's findings (one
// configuration: seeds[i] to jsonPaths[i]) with one replay of it: each
// seed's PNG plot beside it, and one trace that they all name
// (Finding.Trace) at tracePath, gzip-compressed and trimmed to
// TraceWindowRecords around each of their hits.
//
// A file at a jsonPath that holds another finding is not written over:
// the error says so (a campaign's findings are named by condition and
// simulation, so only another campaign's file can be there; a resumed
// campaign writes its own again).
func WriteSimulation(ctx context.Context, subj netenv.Subject, seeds []*Seed, jsonPaths []string, tracePath string) error {
	for i, s := range seeds {
		if err := checkNotOther(jsonPaths[i], s); err != nil {
			return err
		}
	}
	first := seeds[0]
	if first.Witness != nil || first.Finding != nil && (ProcessFault(first.Finding.Kind) || first.Finding.Kind == "refused") {
		// A witness writes its own artifacts; replaying a process fault
		// here would hang or kill this process; a refused
		// configuration has no run to trace.
		for i, s := range seeds {
			if err := s.Write(jsonPaths[i]); err != nil {
				return err
			}
			if s.Witness != nil {
				if err := writeWitnessArtifacts(ctx, s, strings.TrimSuffix(jsonPaths[i], filepath.Ext(jsonPaths[i]))); err != nil {
					return err
				}
			}
		}
		return nil
	}
	var csv bytes.Buffer
	zw := gzipTo(&csv)
	tr := netenv.NewCSVTrace(zw, subj.Capabilities(), first.CCAI[0])
	var hits []TraceHit
	var obs []observe.Observer
	plots := make([]*TracePlot, len(seeds))
	for i, s := range seeds {
		if s.Finding != nil {
			hits = append(hits, TraceHit{AtNS: s.Finding.TimeNS, Flow: s.Finding.Flow})
		}
		plots[i] = NewTracePlot(s, subj.Capabilities())
		obs = append(obs, plots[i])
	}
	win := NewTraceWindow(tr, TraceWindowRecords, hits)
	res, err := ReplayWith(ctx, subj, first, tees(append(obs, win)))
	if err != nil {
		return fmt.Errorf("replaying %s: %w", jsonPaths[0], err)
	}
	if err := tr.Flush(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := WriteFileAtomic(tracePath, csv.Bytes()); err != nil {
		return err
	}
	for i, s := range seeds {
		dir := filepath.Dir(jsonPaths[i])
		rel, err := filepath.Rel(dir, tracePath)
		if err != nil {
			return fmt.Errorf("trace %s from %s: %w", tracePath, dir, err)
		}
		if s.Finding != nil {
			s.Finding.Trace = win.Ref(filepath.ToSlash(rel))
		}
		if err := s.Write(jsonPaths[i]); err != nil {
			return err
		}
		// The plot marks the hit: the replay's of the seed it ran, the
		// recorded one of the others (the same run's).
		at, cw := time.Duration(res.HitTimeNS), hitCwnd(res)
		if i > 0 {
			at, cw = recordedHit(s.Finding)
		}
		base := strings.TrimSuffix(jsonPaths[i], filepath.Ext(jsonPaths[i]))
		if err := plots[i].Save(base+".png", PlotTitle(s), s.Schedule, at, cw); err != nil {
			return err
		}
	}
	return nil
}

// recordedHit is a finding's hit as the campaign recorded it, for a plot:
// none (-1) but a condition's.
func recordedHit(f *Finding) (time.Duration, float64) {
	if f == nil || f.Kind != "condition" {
		return -1, 0
	}
	cw, _ := f.State["cwnd"].(float64)
	return time.Duration(f.TimeNS), cw
}

// tees is one observer that passes each record to all of obs, in order.
func tees(obs []observe.Observer) observe.Observer {
	var t observe.Observer = obs[len(obs)-1]
	for i := len(obs) - 2; i >= 0; i-- {
		t = tee{obs[i], t}
	}
	return t
}

// ErrOtherSeed is the error of a write over a file that holds another
// seed.
var ErrOtherSeed = errors.New("holds another finding: not written over")

// checkNotOther refuses a path where a file holds anything but the same
// finding of the same configuration as s (a resumed campaign's, possibly
// from an earlier build: the program is not compared).
func checkNotOther(path string, s *Seed) error {
	old, err := readSeedFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err == nil && sameFinding(old, s) {
		return nil
	}
	return fmt.Errorf("%s: %w", path, ErrOtherSeed)
}

// sameFinding says whether two seeds record the same finding of the same
// configuration.
func sameFinding(a, b *Seed) bool {
	if a.Seed != b.Seed || a.Subject != b.Subject || !slices.Equal(a.CCAI, b.CCAI) || a.Bytes != b.Bytes ||
		!slices.Equal(a.Schedule, b.Schedule) || (a.Finding == nil) != (b.Finding == nil) {
		return false
	}
	if a.Finding == nil {
		return true
	}
	fa, fb := a.Finding, b.Finding
	return fa.Condition == fb.Condition && fa.Kind == fb.Kind && fa.TimeNS == fb.TimeNS && fa.Flow == fb.Flow
}

// PlotTitle is a seed's plot title: the CCAIs, the subject and profile,
// the seed and the finding: "cubic + reno on native (linux), seed 42:
// cubic-aggressive".
func PlotTitle(s *Seed) string {
	t := fmt.Sprintf("%s on %s (%s), seed %d", strings.Join(s.CCAI, " + "), s.Subject, s.Profile, s.Seed)
	if s.Finding != nil {
		if s.Finding.Kind != "condition" {
			t += ": fault " + s.Finding.Kind
		} else {
			t += ": " + s.Finding.Condition
		}
	}
	return t
}

func hitCwnd(r *ReplayResult) float64 {
	if v, ok := r.HitState["cwnd"].(float64); ok {
		return v
	}
	return 0
}

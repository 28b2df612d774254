// Package triage follows each finding group of a campaign to a root
// cause (issue 50): it minimizes the group's seed (corpus.MinimizeWith),
// replays it on its subject (corpus.FirstHit, as `actfuzz confirm`), runs
// the same configuration on the other implementations of the congestion
// control (the native model, ns-3, gVisor, as `actfuzz diff`), checks
// that the harness did what the configuration says, and classifies the
// group: subject bug candidate, harness artefact, oracle imprecision,
// documented departure or our model's bug. A step that cannot run here
// is listed as skipped with why, and its group is not confirmed.
package triage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/ns3"
	"github.com/actfuzz/actfuzz/oracle"
)

// Options say how triage runs.
type Options struct {
	// Runs is how many times a finding replays on a subject that is not
	// deterministic (0: 20); a deterministic subject replays once.
	Runs int
	// MinimizeRuns caps each minimization's simulations (0: 400).
	MinimizeRuns int
	// Watchdog is the wall-clock limit of each minimization candidate.
	Watchdog time.Duration
	// Open opens a subject by name (netenv.SubjectNames).
	Open func(name string) (netenv.Subject, error)
	// References are the subjects the differential runs the
	// configuration on besides the group's own (nil: native, ns3,
	// gvisor).
	References []string
	Log        *slog.Logger
}

// Step is one step of a group's triage.
type Step struct {
	Name    string `json:"name"`
	Outcome string `json:"outcome"` // ran, skipped, failed
	Detail  string `json:"detail"`
}

// Result is one group's triage.
type Result struct {
	Condition string  `json:"condition"`
	Oracle    string  `json:"oracle,omitempty"`
	Source    string  `json:"source,omitempty"`
	Subject   string  `json:"subject"`
	CCAI      string  `json:"ccai"`
	Hits      int     `json:"hits"`
	FirstSim  int     `json:"first_sim"`
	FirstWall float64 `json:"first_wall_s"`
	Seed      string  `json:"seed"`
	Minimized string  `json:"minimized,omitempty"`
	Plot      string  `json:"plot,omitempty"`
	Class     Class   `json:"class"`
	Why       string  `json:"why"`
	Confirmed bool    `json:"confirmed"`
	Held      int     `json:"held"`
	Runs      int     `json:"runs"`
	Steps     []Step  `json:"steps"`
}

// Report is a campaign's triage.
type Report struct {
	Dir     string   `json:"dir"`
	Method  string   `json:"method"`
	Sims    int      `json:"sims"`
	Results []Result `json:"results"`
}

// Run triages every group of the campaign c.
func Run(ctx context.Context, c *Campaign, opt Options) (*Report, error) {
	if opt.Runs <= 0 {
		opt.Runs = 20
	}
	if opt.MinimizeRuns <= 0 {
		opt.MinimizeRuns = 400
	}
	if opt.References == nil {
		opt.References = []string{"native", "ns3", "gvisor"}
	}
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	rep := &Report{Dir: c.Dir, Method: c.Method, Sims: c.Sims}
	for _, g := range c.Groups {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		r, err := triageGroup(ctx, g, opt)
		if err != nil {
			return rep, err
		}
		opt.Log.Info("triaged", "condition", r.Condition, "seed", r.Seed, "class", r.Class, "confirmed", r.Confirmed)
		rep.Results = append(rep.Results, r)
	}
	return rep, nil
}

// group is one group's triage under way.
type group struct {
	Group
	opt  Options
	res  Result
	ev   evidence
	subj netenv.Subject
}

func (t *group) step(name, outcome, format string, args ...any) {
	t.res.Steps = append(t.res.Steps, Step{name, outcome, fmt.Sprintf(format, args...)})
}

// triageGroup runs a group's steps; its error is an interruption only
// (every other failure is a step's outcome).
func triageGroup(ctx context.Context, g Group, opt Options) (Result, error) {
	t := &group{Group: g, opt: opt}
	t.res = Result{Condition: g.Condition.Condition, Oracle: g.Condition.Oracle, Source: g.Condition.Source,
		Subject: g.Subject, CCAI: g.CCAI, Hits: g.Hits, FirstSim: g.FirstSim, FirstWall: g.FirstWallS,
		Seed: g.SeedPath, Plot: plotOf(g.SeedPath)}
	if g.Seed == nil {
		t.step("read seed", "failed", "%v", g.SeedErr)
		t.res.Class, t.res.Why = Untriaged, "its seed could not be read"
		return t.res, nil
	}
	t.ev.Native = g.Seed.Subject == "native" || g.Seed.Subject == ""
	subj, err := opt.Open(cmpOr(g.Seed.Subject, "native"))
	if err != nil {
		t.step("open subject", "skipped", "%s cannot run here: %v", g.Seed.Subject, err)
		t.ev.Reproduced = Skipped
	} else {
		defer closeSubject(subj)
		t.subj = subj
	}
	f := g.Seed.Finding
	if f == nil || f.Kind != "condition" {
		return t.fault(ctx)
	}
	t.departure()
	seed := g.Seed
	if t.subj != nil {
		if m, err := t.minimize(ctx, seed); err != nil {
			return t.res, err
		} else if m != nil {
			seed = m
		}
		if err := t.confirm(ctx, seed); err != nil {
			return t.res, err
		}
	}
	if err := t.differential(ctx, seed); err != nil {
		return t.res, err
	}
	t.res.Class, t.res.Why, t.res.Confirmed = classify(t.ev)
	return t.res, nil
}

// fault triages a fault group: it replays on a deterministic subject (a
// process fault, which would kill or hang this process, is not
// replayed). A fault of our native model is our model's bug; of another
// subject, the subject's (or, if it does not replay, the harness's).
func (t *group) fault(ctx context.Context) (Result, error) {
	f := t.Seed.Finding
	kind := "no finding"
	if f != nil {
		kind = f.Kind
	}
	t.res.Class, t.res.Why = SubjectBug, "the subject faulted ("+kind+")"
	if t.ev.Native {
		t.res.Class = ModelBug
	}
	switch {
	case t.subj == nil:
	case f == nil || corpus.ProcessFault(f.Kind) || f.Kind == "refused":
		t.step("replay", "skipped", "a %s fault is not replayed in the triage process (actfuzz replay %s does, isolated)", kind, t.SeedPath)
	case !t.subj.Capabilities().Deterministic:
		t.step("replay", "skipped", "the %s subject is not deterministic; a fault replays with actfuzz replay", t.subj.Name())
	default:
		rr, err := corpus.ReplayWith(ctx, t.subj, t.Seed, nil)
		if ctx.Err() != nil {
			return t.res, ctx.Err()
		}
		switch {
		case err != nil:
			t.step("replay", "failed", "%v", err)
		case rr.Reproduced:
			t.step("replay", "ran", "the fault reproduced")
			t.res.Confirmed, t.res.Held, t.res.Runs = true, 1, 1
		default:
			t.step("replay", "ran", "the fault did not reproduce: %s", strings.Join(rr.Diff, "; "))
			t.res.Class, t.res.Why, t.res.Runs = HarnessArtefact, "the fault does not replay on a deterministic subject", 1
		}
	}
	return t.res, nil
}

// departure records a documented departure that puts the finding's
// oracle out of its subject's or CCA's reach (oracle.Oracle's NotOn and
// ExceptCCAs: `actfuzz list --oracles`).
func (t *group) departure() {
	o, ok := oracle.Lookup(t.Condition.Condition)
	if !ok || t.Condition.Source != o.Source {
		t.step("documented departure", "ran", "a user's condition: no oracle documentation applies")
		return
	}
	subj := cmpOr(t.Seed.Subject, "native")
	keys := []string{subj}
	if subj == "native" {
		keys = append(keys, "native/"+cmpOr(t.Seed.Profile, ccai.ProfileNames[ccai.ProfileLinux]))
	}
	for _, k := range keys {
		if why, ok := o.NotOn[k]; ok {
			t.ev.Departure = fmt.Sprintf("%s does not apply on %s: %s", o.Name, k, why)
		}
	}
	native := netenv.NativeCapabilities().NativeName(t.CCAI)
	if why, ok := o.ExceptCCAs[native]; ok {
		t.ev.Departure = fmt.Sprintf("%s does not apply to %s: %s", o.Name, t.CCAI, why)
	}
	// The native model at profile linux follows Linux where the oracle
	// reports Linux's own departure: such a hit is that departure. (On
	// the kernel the same hit stays a finding of Linux's: docs/bugs.)
	if subj == "native" && cmpOr(t.Seed.Profile, ccai.ProfileNames[ccai.ProfileLinux]) == ccai.ProfileNames[ccai.ProfileLinux] && slices.Contains(o.ReportsLinux, native) {
		t.ev.Departure = fmt.Sprintf("%s on %s at profile linux follows Linux, whose departure the oracle reports: %s", o.Name, t.CCAI, o.Linux)
	}
	switch {
	case t.ev.Departure != "":
		t.step("documented departure", "ran", "%s", t.ev.Departure)
	case o.Linux != "" && (subj == "linux" || t.Seed.Profile == "linux"):
		t.step("documented departure", "ran", "none makes the oracle moot; the oracle already follows Linux's documented departures (actfuzz list --oracles)")
	default:
		t.step("documented departure", "ran", "none recorded for %s on %s", o.Name, subj)
	}
}

// minimize shrinks the seed on a deterministic subject and writes it
// beside the original (SEED.min.json, its trace and plot). nil: kept the
// original.
func (t *group) minimize(ctx context.Context, seed *corpus.Seed) (*corpus.Seed, error) {
	if !t.subj.Capabilities().Deterministic {
		t.step("minimize", "skipped", "the %s subject is not deterministic: each candidate would need %d runs (actfuzz minimize on a native copy of the seed)", t.subj.Name(), t.opt.Runs)
		return nil, nil
	}
	if seed.Witness != nil || seed.Pinned != nil || seed.SymWindow != nil {
		t.step("minimize", "skipped", "a symbolic seed is one point of a class already")
		return nil, nil
	}
	m, rep, err := corpus.MinimizeWith(ctx, t.subj, seed, t.opt.MinimizeRuns, t.opt.Watchdog)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if errors.Is(err, corpus.ErrNoHit) {
		t.step("minimize", "ran", "the seed does not hit its condition on replay")
		return nil, nil
	}
	if err != nil {
		t.step("minimize", "failed", "%v", err)
		return nil, nil
	}
	path := strings.TrimSuffix(t.SeedPath, ".json") + ".min.json"
	if err := corpus.WriteArtifacts(ctx, t.subj, m, path); err != nil {
		t.step("minimize", "failed", "writing %s: %v", path, err)
		return m, nil
	}
	t.res.Minimized, t.res.Plot = path, cmpOr(plotOf(path), t.res.Plot)
	detail := fmt.Sprintf("%d runs: %d → %d phases, hit at %.3f s → %.3f s", rep.Runs, rep.PhasesFrom, rep.PhasesTo, float64(rep.HitFromNS)/1e9, float64(rep.HitToNS)/1e9)
	if rep.Runs >= t.opt.MinimizeRuns {
		detail += fmt.Sprintf(" (capped at --minimize-runs %d: it may shrink further)", t.opt.MinimizeRuns)
	}
	if rep.Hung > 0 {
		detail += fmt.Sprintf("; %d candidates went past the watchdog and counted as not hitting", rep.Hung)
	}
	t.step("minimize", "ran", "%s", detail)
	return m, nil
}

// confirm replays the seed on its subject: once on a deterministic one,
// Runs times on the kernel; the first run is also the harness check's.
func (t *group) confirm(ctx context.Context, seed *corpus.Seed) error {
	cfg, err := seed.Config()
	if err != nil {
		t.step("replay", "failed", "%v", err)
		return nil
	}
	specs := []corpus.ConditionSpec{seed.Finding.Spec()}
	if err := corpus.ProvidedVars(t.subj, seed.CCAI, specs); err != nil {
		t.step("replay", "failed", "%v", err)
		return nil
	}
	n := 1
	if !t.subj.Capabilities().Deterministic {
		n = t.opt.Runs
	}
	var errs []string
	var harness Step
	for i := range n {
		var h *harnessObserver
		if i == 0 {
			h = newHarness(cfg, seed.Finding)
		}
		_, held, res, err := corpus.FirstHit(ctx, t.subj, seed, cfg, specs, observer(h))
		if ctx.Err() != nil {
			return ctx.Err()
		}
		t.res.Runs++
		switch {
		case err != nil:
			errs = append(errs, err.Error())
		case held:
			t.res.Held++
		}
		if h != nil && err == nil {
			harness = t.harness(h, res)
		}
	}
	defer func() {
		if harness.Name != "" {
			t.res.Steps = append(t.res.Steps, harness)
		}
	}()
	switch {
	case len(errs) == n:
		t.step("replay", "failed", "every run failed: %s", errs[0])
		t.ev.Reproduced = Skipped
	case t.res.Held > 0:
		t.step("replay", "ran", "held in %d/%d runs on %s", t.res.Held, n, t.subj.Name())
		t.ev.Reproduced = Held
	default:
		t.step("replay", "ran", "held in 0/%d runs on %s", n, t.subj.Name())
		t.ev.Reproduced = NotHeld
	}
	return nil
}

// harness records the harness checks of the first replay.
func (t *group) harness(h *harnessObserver, res netenv.Result) Step {
	fails, notes := h.check(res)
	if fail, note := lateness(t.subj, h.cfg); fail != "" {
		fails = append(fails, fail)
	} else if note != "" {
		notes = append(notes, note)
	}
	t.ev.Harness = append(t.ev.Harness, fails...)
	outcome := "ran"
	if len(fails) > 0 {
		outcome = "failed"
	}
	return Step{"harness", outcome, strings.Join(slices.Concat(fails, notes), "; ")}
}

// differential runs the configuration on the other implementations of
// the CCA, each checked with its own version of the condition (an
// oracle is selected for each subject, as a campaign on it would).
func (t *group) differential(ctx context.Context, seed *corpus.Seed) error {
	own := cmpOr(seed.Subject, "native")
	for _, name := range t.opt.References {
		if name == own {
			continue
		}
		out, err := t.reference(ctx, seed, name)
		if err != nil {
			return err
		}
		t.ev.References = append(t.ev.References, out)
	}
	return nil
}

// reference is the differential against one subject.
func (t *group) reference(ctx context.Context, seed *corpus.Seed, name string) (Outcome, error) {
	label := "differential vs " + name
	ref, err := t.opt.Open(name)
	if err != nil {
		t.step(label, "skipped", "%s cannot run here: %v", name, err)
		return Skipped, nil
	}
	defer closeSubject(ref)
	caps := ref.Capabilities()
	cfg, err := seed.Config()
	if err != nil {
		t.step(label, "failed", "%v", err)
		return Skipped, nil
	}
	cfg.Flows = slices.Clone(cfg.Flows)
	ccas := make([]string, len(cfg.Flows))
	for i := range cfg.Flows {
		cfg.Flows[i].CCA = ns3.CCAFor(name, cfg.Flows[i].CCA)
		if _, err := caps.Resolve(cfg.Flows[i].CCA); err != nil {
			t.step(label, "skipped", "%s has no model of flow %d's CCA: %v", name, i+1, err)
			return Skipped, nil
		}
		ccas[i] = cfg.Flows[i].CCA
	}
	if err := caps.CheckConfig(&cfg); err != nil {
		t.step(label, "skipped", "the configuration is out of %s's range: %v", name, err)
		return Skipped, nil
	}
	specs, why := t.specsFor(caps, ccas, cfg.Profile)
	if len(specs) == 0 {
		t.step(label, "skipped", "the condition does not run on %s: %s", name, why)
		return Skipped, nil
	}
	rs := *seed
	rs.CCAI, rs.Subject = ccas, name
	n := 1
	if !caps.Deterministic {
		n = t.opt.Runs
	}
	held := 0
	var last error
	for range n {
		_, h, _, err := corpus.FirstHit(ctx, ref, &rs, cfg, specs, nil)
		if ctx.Err() != nil {
			return Skipped, ctx.Err()
		}
		if err != nil {
			last = err
		}
		if h {
			held++
		}
	}
	if last != nil && held == 0 {
		t.step(label, "failed", "%v", last)
		return Skipped, nil
	}
	detail := fmt.Sprintf("held in %d/%d runs on %s", held, n, name)
	if caps.Deterministic && t.subj != nil && t.subj.Capabilities().Deterministic {
		if d, err := ns3.Diff(ctx, cfg, t.subj, ref); err == nil {
			detail += "; " + diffSummary(d)
		}
	}
	t.step(label, "ran", "%s", detail)
	if held > 0 {
		return Held, nil
	}
	return NotHeld, nil
}

// specsFor is the finding's condition for another subject: the oracle's
// version for it (oracle.Select), or a user's condition as it is.
func (t *group) specsFor(caps netenv.Capabilities, ccas []string, prof ccai.Profile) ([]corpus.ConditionSpec, string) {
	f := t.Seed.Finding
	o, ok := oracle.Lookup(f.Condition)
	if !ok || o.Source != f.Source {
		return []corpus.ConditionSpec{f.Spec()}, ""
	}
	specs, skips := oracle.Select(oracle.Choice{Names: []string{o.Name}}, caps, ccas, prof)
	var why []string
	for _, s := range skips {
		why = append(why, s.Why)
	}
	return specs, strings.Join(why, "; ")
}

// diffSummary is a differential's verdict in one line.
func diffSummary(d *ns3.DiffReport) string {
	if d.Agree() {
		return "the traces agree (actfuzz diff)"
	}
	return "the traces differ (actfuzz diff): " + strings.Join(d.Disagreements, "; ")
}

func closeSubject(s netenv.Subject) {
	if c, ok := s.(interface{ Close() error }); ok {
		_ = c.Close()
	}
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

package gvisor

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

// DefaultStallTimeout is how long a run may make no progress (wall clock)
// before Run reports it as a hang.
const DefaultStallTimeout = 30 * time.Second

// Subject is gVisor's netstack TCP as a netenv.Subject.
type Subject struct {
	// StallTimeout overrides DefaultStallTimeout when > 0.
	StallTimeout time.Duration

	hooks hooks // tests
}

var _ netenv.Subject = (*Subject)(nil)

// Open returns the gVisor subject.
func Open() (netenv.Subject, error) { return &Subject{}, nil }

// Name implements netenv.Subject.
func (*Subject) Name() string { return "gvisor" }

// Capabilities implements netenv.Subject: gVisor's reno and cubic (the
// native names are its own), every parameter and topology (through
// netenv's link model and topology plan), bit-deterministic (see the
// package documentation), profiles do not apply, every base variable but
// pacing_rate (gVisor does not pace), and Vars.
func (*Subject) Capabilities() netenv.Capabilities {
	base := make([]string, 0, len(netenv.BaseVars))
	for _, v := range netenv.BaseVars {
		if v != "pacing_rate" {
			base = append(base, v)
		}
	}
	return netenv.Capabilities{Name: "gvisor", CCAs: []string{"reno", "cubic"},
		Params: params(), Topologies: slices.Clone(netenv.Topologies),
		Deterministic: true, Base: base, Vars: Vars}
}

// Vars lists the variables records of cca carry (see the package-level
// Vars).
func (*Subject) Vars(cca string) []ccai.VarDesc { return Vars(cca) }

// validate checks what this subject supports on top of cfg.Validate.
func validate(cfg *netenv.Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	for i, f := range cfg.Flows {
		if f.CCA != "reno" && f.CCA != "cubic" {
			return fmt.Errorf("flow %d: congestion control %q: the gvisor subject offers reno and cubic", i, f.CCA)
		}
	}
	if cfg.DelayHook != nil {
		return fmt.Errorf("gvisor subject: DelayHook (the symbolic back-end) is not supported")
	}
	return nil
}

// Run implements netenv.Subject. The simulation runs on a goroutine of its
// own under a watchdog: a run that stops making progress for the stall
// timeout returns a *netenv.Fault of kind "hang" (its goroutines are
// abandoned, as they cannot be stopped); a panic on the harness goroutine
// returns a *netenv.Fault of kind "panic".
func (s *Subject) Run(ctx context.Context, cfg netenv.Config, obs observe.Observer) (netenv.Result, error) {
	if err := validate(&cfg); err != nil {
		return netenv.Result{}, err
	}
	stall := s.StallTimeout
	if stall <= 0 {
		stall = DefaultStallTimeout
	}
	h := newHarness(&cfg, obs, s.hooks)
	return netenv.Watch(ctx, stall, h.progress.Load, func() { h.abandon.Store(true) },
		func() string {
			return fmt.Sprintf("gvisor: no progress for %v at simulated time %v", stall, time.Duration(h.now.Load()))
		}, h.run)
}

// params are the parameters of P the gVisor subject expresses: all that
// the one link model applies to its packets, but ECN, whose codepoints
// live in IP headers that the harness does not rewrite.
func params() []string { return netenv.ParamNamesWithoutECN() }

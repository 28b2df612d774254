package netenv

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/internal/suggest"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

// BaseVars names the base state variables of a flow (observe.Base), in
// observation order. A subject fills some or all of them
// (Capabilities.Base).
var BaseVars = observe.Names()

// Topologies lists every topology of netenv (see topology.go).
var Topologies = []string{TopoSingleLink, TopoDumbbell, TopoParkingLot}

// Capabilities is what a subject declares it provides. A campaign, a
// condition or a flag that needs something the subject lacks is refused at
// start (exit 2, naming it) instead of running with silent zeros, and
// traces and findings show only what the subject provided.
type Capabilities struct {
	// Name is the subject's (Subject.Name), for messages.
	Name string
	// CCAs are the congestion controls the subject offers, by its own
	// names (ns-3's "TcpCubic", the kernel's "cubic"). Nil for the native
	// subject: every name in the ccai registry.
	CCAs []string
	// Aliases maps native names to the subject's own ("cubic" →
	// "TcpCubic"), so a campaign written for the native subject runs
	// unchanged.
	Aliases map[string]string
	// Params names the parameters of P (netenv.ParamNames) the subject can
	// express. A campaign that varies any other parameter away from its
	// default is refused.
	Params []string
	// Topologies are the topologies the subject can build.
	Topologies []string
	// Deterministic is true when the same configuration always gives the
	// same trace, bit for bit (false for a real kernel running in real
	// time).
	Deterministic bool
	// Profiles is true when ccai.Profile (linux-3.10, …) changes the
	// subject's behaviour; false means a profile other than the default is
	// refused.
	Profiles bool
	// Base names the base state variables (BaseVars) the subject fills;
	// nil means all of them. The others are left zero in its records, and
	// schemas and traces leave them out.
	Base []string
	// Vars gives the subject's own state variables for a congestion
	// control (its own name), in the order of observe.Record.Vars. Nil
	// Vars means the ccai registry's.
	Vars func(cca string) []ccai.VarDesc
	// MaxWall is the wall-clock time one run may take by design on a
	// subject that runs in real time (its time cap, its own stall
	// watchdog and teardown); 0 for subjects whose time is simulated. A
	// campaign's watchdog (act.IsolateOptions) is never below it.
	MaxWall time.Duration
}

// Capable is a subject that declares its capabilities. Every subject
// implements it (it is part of Subject).
type Capable interface {
	Capabilities() Capabilities
}

// SubjectNames are the names of every subject (Subject.Name), in the order
// help texts list them: the one list of them that seeds, flags and
// messages use (the command line opens each by name, cli/subjects.go).
func SubjectNames() []string { return []string{"native", "ns3", "gvisor", "linux", "quic"} }

// NativeCapabilities are the native subject's: every CCAI of the
// registry, parameter and topology; bit-deterministic; profiles apply;
// every base variable and the registry's variables.
func NativeCapabilities() Capabilities {
	return Capabilities{Name: "native", Params: ParamNames(), Topologies: slices.Clone(Topologies),
		Deterministic: true, Profiles: true}
}

// CCANames lists the subject's own congestion-control names.
func (c Capabilities) CCANames() []string {
	if c.CCAs == nil {
		return ccai.Names()
	}
	return c.CCAs
}

// Resolve maps a congestion-control name (the subject's own, in any case,
// or a native alias) to the subject's own name. The error names the
// subject, what it offers and the closest name.
func (c Capabilities) Resolve(name string) (string, error) {
	if c.CCAs == nil {
		if _, ok := ccai.Lookup(name); ok {
			return name, nil
		}
	} else {
		for _, m := range c.CCAs {
			if strings.EqualFold(m, name) {
				return m, nil
			}
		}
		if m, ok := c.Aliases[strings.ToLower(name)]; ok {
			return m, nil
		}
	}
	known := c.CCANames()
	aliases := slices.Sorted(maps.Keys(c.Aliases))
	also := ""
	if len(aliases) > 0 {
		also = "; or a native name such as " + strings.Join(aliases[:min(3, len(aliases))], ", ")
	}
	cands := append(slices.Clip(known), aliases...)
	return "", fmt.Errorf("unknown congestion control %q for the %s subject%s (known: %s%s)", name, c.Name,
		suggest.DidYouMean(name, cands), strings.Join(known, ", "), also)
}

// NativeName is the native name of one of the subject's congestion
// controls (the alias of its own name), or name itself.
func (c Capabilities) NativeName(name string) string {
	own, err := c.Resolve(name)
	if err != nil {
		return name
	}
	for _, a := range slices.Sorted(maps.Keys(c.Aliases)) {
		if c.Aliases[a] == own {
			return a
		}
	}
	return own
}

// HasBase says whether the subject fills base variable name.
func (c Capabilities) HasBase(name string) bool {
	return c.Base == nil || slices.Contains(c.Base, name)
}

// VarsOf lists the subject's own variables for cca (its own name or an
// alias); nil for an unknown name.
func (c Capabilities) VarsOf(cca string) []ccai.VarDesc {
	own, err := c.Resolve(cca)
	if err != nil {
		return nil
	}
	if c.Vars != nil {
		return c.Vars(own)
	}
	a, err := ccai.New(own)
	if err != nil {
		return nil
	}
	return ccai.VarsOf(a)
}

// CheckTopology refuses a topology the subject cannot build ("" is
// single-link).
func (c Capabilities) CheckTopology(t string) error {
	if t == "" {
		t = TopoSingleLink
	}
	if !slices.Contains(c.Topologies, t) {
		return fmt.Errorf("the %s subject cannot build topology %q (it builds %s)", c.Name, t, strings.Join(c.Topologies, ", "))
	}
	return nil
}

// CheckProfile refuses a profile other than the default on a subject that
// profiles do not apply to: the run would silently ignore it.
func (c Capabilities) CheckProfile(p ccai.Profile) error {
	if p != ccai.ProfileLinux && !c.Profiles {
		return fmt.Errorf("profile %s does not apply to the %s subject (its TCP is its own; only %s)", p, c.Name, ccai.ProfileLinux)
	}
	return nil
}

// CheckParam refuses parameter name of P when the subject cannot express
// it.
func (c Capabilities) CheckParam(name string) error {
	if !slices.Contains(c.Params, name) {
		return fmt.Errorf("the %s subject cannot express parameter %s (it expresses %s)", c.Name, name, strings.Join(c.Params, ", "))
	}
	return nil
}

// CheckConfig checks what a configuration needs of the subject: its flows'
// congestion controls, topology, profile, and any parameter of P the
// subject cannot express set away from its default. The error names the
// first thing missing.
func (c Capabilities) CheckConfig(cfg *Config) error {
	for i, f := range cfg.Flows {
		if _, err := c.Resolve(f.CCA); err != nil {
			return fmt.Errorf("flow %d: %w", i, err)
		}
	}
	if err := c.CheckTopology(cfg.Topology); err != nil {
		return err
	}
	if err := c.CheckProfile(cfg.Profile); err != nil {
		return err
	}
	return CheckExpressible(cfg.Schedule, c.Params, c.Name)
}

package netenv

import (
	"context"

	"github.com/actfuzz/actfuzz/netenv/observe"
)

// Subject runs one simulation configuration G and streams the state trace:
// our simulator with a registered CCAI (native), or a real implementation
// no one here wrote (ns-3's TCP models, gVisor's netstack).
//
// A subject fills every field of observe.Record it can; fields it cannot
// observe stay zero and are documented by the subject. Run returns a
// *Fault when the subject misbehaves (crash, hang, garbage), so that a
// campaign records it as a finding and goes on.
type Subject interface {
	// Name is the --subject value ("native", "ns3", "gvisor").
	Name() string
	// Capabilities declares what the subject offers: congestion controls
	// (its own names and native aliases), parameters, topologies,
	// profiles and the state variables its records carry.
	Capable
	// Run simulates cfg, streaming state records to obs (may be nil).
	Run(ctx context.Context, cfg Config, obs observe.Observer) (Result, error)
}

// Native is our simulator with the CCAIs of package ccai.
type Native struct{}

func (Native) Name() string { return "native" }

// Capabilities are NativeCapabilities.
func (Native) Capabilities() Capabilities { return NativeCapabilities() }

func (Native) Run(ctx context.Context, cfg Config, obs observe.Observer) (Result, error) {
	return Run(ctx, cfg, obs)
}

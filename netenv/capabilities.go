package netenv

import "github.com/actfuzz/actfuzz/ccai"

// Capabilities is what a subject declares it provides. A campaign, a
// condition or a flag that needs something the subject lacks is refused at
// start (exit 2, naming it) instead of running with silent zeros, and
// traces and findings show only what the subject provided.
type Capabilities struct {
	// CCAs are the congestion controls the subject offers, by its own
	// names (ns-3's "TcpCubic", the kernel's "cubic"). Nil for the native
	// subject: every name in the ccai registry.
	CCAs []string
	// Aliases maps native names to the subject's own ("cubic" →
	// "TcpCubic"), so a campaign written for the native subject runs
	// unchanged.
	Aliases map[string]string
	// Params names the parameters of P (netenv.Params) the subject can
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
	// Base names the base state variables the subject fills (the fields
	// of tcp.StateRecord, by their state-variable names: cwnd, ssthresh,
	// …); nil means all of them.
	Base []string
	// Vars gives the subject's own state variables for a congestion
	// control (its own name or an alias), in the order of
	// tcp.StateRecord.Vars. Nil Vars means the ccai registry's.
	Vars func(cca string) []ccai.VarDesc
}

// Capable is a subject that declares its capabilities. Every subject of
// this repository implements it.
type Capable interface {
	Capabilities() Capabilities
}

// Package netenv is actfuzz's network environment: the environment
// parameters p of the ACT paper's space P, schedules that switch them during
// a run, topologies, and the native subject that runs a simulation
// configuration G = (e, [(p1, t1), …, (pn, tn)]) on our discrete-event
// simulator (package netenv/sim) with Linux-like TCP endpoints (package
// netenv/tcp) and a registered CCAI (package ccai).
//
// A run is deterministic: simulated time is integer nanoseconds and every
// random process (loss, queuing delay) draws from its own PRNG stream derived
// from the seed e, so the same (e, schedule) gives the same trace on every
// machine.
//
// Link model (ACT §4.1's single virtual link): the forward (data) direction
// has a bottleneck of the given bandwidth with a drop-tail buffer of the given
// number of packets, random loss applied to each packet after it is
// serialized, and a one-way propagation delay plus a random queuing delay
// drawn per packet from Gamma(shape, scale ms), which can reorder packets.
// The reverse (ACK) direction has the same bandwidth and propagation delay,
// no random loss or queuing delay, and a buffer of at least 1000 packets.
// The model is written once (link.go, over the small LinkPacket interface)
// and serves the native subject, the gVisor subject and the UDP topologies
// of the symbolic back-end; topologies are planned once (PlanTopology).
//
// Parameters: P is one table (params.go), one row per parameter with its
// name, unit, doc, kind (numeric or categorical), default, default campaign
// range, validity bounds and minimization rules. Env's accessors, campaign
// ranges (Range, with the grid arithmetic ACT and the fuzz decoder share),
// the CLI's flags, `actfuzz list`, seeds' and scenarios' decoding and the
// subjects' mappings all derive from it; adding a parameter is a field of
// Env, a row, its meaning in the link model and a mapping in each subject
// that can express it (a subject declares those in its Capabilities).
//
// Test inputs: Setup is what every run of a campaign shares (CCAIs,
// topology, profile, bytes, SACK, handshake); Setup.Config adds a run's
// seed and schedule.
package netenv

// Package quicgo is the quic subject (--subject quic): quic-go
// (github.com/quic-go/quic-go v0.65.0, pinned in go.mod), the Go
// ecosystem's QUIC, run in-process and tested through netenv's link model.
//
// A run starts one quic-go server (a quic.Transport listening on port 443)
// and, per flow, one quic-go client (a quic.Transport of its own on port
// 10000+i) that dials the server, opens one stream and writes the flow's
// bytes on it; the server reads every stream to its end, and a flow is
// done when the server has read all its bytes. Every endpoint's UDP socket
// is a net.PacketConn of ours (conn.go): a write goes to the harness, which
// puts the datagram on the first link of its flow's path; the link model
// (netenv.Link: rate, drop-tail or AQM buffer, random loss, delay and
// Gamma queuing delay, policer, ACK aggregation, link traces, schedules)
// delivers it to the other endpoint's read queue. The links are built from
// the topology plan every Go subject uses (netenv.PlanTopology), so every
// topology runs and the links draw from the same PRNG streams as natively;
// a datagram's size on the wire is its UDP payload plus 28 bytes of IPv4
// and UDP headers. Flow control never limits a flow (64 MB windows); path
// MTU discovery is off, so every datagram is at most 1280 bytes, quic-go's
// protocol.InitialPacketSize, which is also the datagram size its
// congestion controller counts in. The application sends as fast as
// quic-go takes the bytes, or, when Env.App is below 1000× the bottleneck,
// one 1280-byte write per interval at that rate.
//
// Not expressed, refused at start naming the parameter (exit 2): ecn and
// ecn_k. quic-go uses ECN only on an OOBCapablePacketConn (a *net.UDPConn
// with its socket options and control messages), which ours is not: it
// treats it as a basic connection (sys_conn.go wrapConn) and neither sends
// ECT nor reads CE. Congestion controls: quic-go has one, NewReno with a
// multiplicative decrease of 0.7 (internal/congestion/cubic_sender.go with
// reno true, sent_packet_handler.go), offered as "reno"; any other name is
// refused. Profiles do not apply.
//
// # State
//
// quic-go's qlog interface (quic.Config.Tracer returning a
// qlogwriter.Trace; in v0.65.0 the older logging.ConnectionTracer is gone)
// calls our recorder (trace.go) synchronously where the event happens, on
// the client connection's goroutine. A record is emitted on every
// recovery:metrics_updated event that is not only a send (quic-go logs
// metrics after each ACK that acknowledged something and after each
// ack-eliciting packet sent; a send only raises bytes in flight), so S is
// per ACK as for the TCP subjects. Fields:
//
//   - cwnd: metrics_updated congestion_window (quic-go's
//     GetCongestionWindow, bytes) divided by 1280, rounded down.
//   - in_flight: metrics_updated bytes_in_flight, in 1280-byte datagrams
//     rounded up (the exact bytes are variable in_flight_bytes).
//   - srtt, rttvar: metrics_updated smoothed_rtt and rtt_variance (RFC
//     9002 §5.3 smoothed_rtt and rttvar).
//   - ca_state: recovery while quic-go's congestion state is "recovery"
//     (recovery:congestion_state_updated; cubicSender.InRecovery: RFC 9002
//     §7.3.2's recovery period), open otherwise. RFC 9002 has no disorder,
//     CWR or loss state: a PTO is not a congestion event (§6.2), and
//     persistent congestion (§7.6) only sets cwnd.
//   - prev_ca_state, prior_cwnd: as netenv/observe.ObserveTransition derives
//     them for every foreign subject (prior_cwnd: the cwnd last recorded
//     before entering recovery; quic-go logs the state change before it
//     reduces cwnd).
//   - time: the run's time (see Time), flow: the flow's index.
//   - ssthresh, rto, delivered, pacing_rate: not filled (Capabilities.Base
//     leaves them out). qlog carries no ssthresh, PTO period, delivery
//     count or pacing rate.
//
// The subject's variables (Vars): cc_state (quic-go's own state:
// slow_start, congestion_avoidance, recovery, application_limited, from
// recovery:congestion_state_updated), cwnd_bytes, in_flight_bytes,
// packets_in_flight, min_rtt_ms, latest_rtt_ms (recovery:metrics_updated),
// pto_count (recovery:metrics_updated pto_count, RFC 9002 §6.2.1) and lost
// (recovery:packet_lost events so far). quic-go's pacing budget
// (internal/congestion/pacer.go) is not observable through any public
// interface of v0.65.0 (no qlog event, no ConnectionStats field), so it is
// not a variable: reading it would mean patching quic-go.
//
// metrics_updated carries only the fields that changed, with zero for the
// others; cwnd and the RTTs are never zero once set, but bytes and packets
// in flight can become zero, so a zero there is read as "now zero" when
// the other in-flight count is zero too (an event that changed neither
// leaves both at zero, which then wrongly reads as an empty flight: an
// ACK that acknowledged nothing in flight; rare).
//
// # Time
//
// quic-go reads the wall clock (time.Now, its monotime package) and arms
// Go timers, so the run is in real time, like the linux subject: the link
// model's simulator (netenv/sim) is advanced to the wall-clock time since
// the run's start whenever the driver wakes (sim.RunUntil: at the next due
// link event, or when an endpoint wrote), and a datagram enters its first
// link when the driver takes it. Runs are not bit-deterministic
// (Capabilities.Deterministic is false); `actfuzz confirm --subject quic`
// measures how often a finding holds. A run's time is capped at
// DefaultMaxTime (2 minutes of wall clock).
//
// Hit stability, measured (bench/results/quic-confirm-stability-20261128.md):
// the finding seed testdata/quicgo/findings/no-persistent-congestion.json
// (3 MB at 20 Mbit/s, a 2 s blackout) held in 20/20 runs of `actfuzz
// confirm --subject quic --runs 20`, twice. Each 20 took 81 s of wall
// clock (4.1 s a run, 0.25 runs/s) at a 1-minute load of 0.7 to 1.5
// on 2 cores (2026-11-28). The first hit fell between 3.17 s and 3.35 s
// of run time. The same scenario's Go test (make quic-findings
// QUIC_RUNS=20) passed 20/20. In 2 of its runs the first ACK after the
// blackout came at 3.54 s and 4.38 s: real-time runs differ by whole
// PTO periods, so a finding's condition should not pin a narrow time
// window.
//
// Virtual time was tried and rejected, for two reasons that hold in Go
// 1.26.8 without patching quic-go:
//
//   - testing/synctest's bubble (fake time, advanced when every goroutine
//     of the bubble is durably blocked) is entered only through
//     synctest.Test, which needs a *testing.T. Outside `go test` the only
//     way to get one is testing.RunTests, and it runs nothing: the test
//     loop ranges over the -test.cpu list, which only M.Run parses
//     (testing.go runTests, parseCpuList); testing.MainStart is "not
//     meant to be called directly" and M.Run prints PASS and parses the
//     process's flags. (internal/synctest.Run cannot be linked to.)
//   - Even in a bubble, runs would differ: quic-go skips packet numbers
//     at random (RFC 9000 §21.4's defence against optimistic ACKs;
//     internal/ackhandler packet_number_generator.go) drawing from
//     crypto/rand, which Go 1.26 seeds only in test binaries
//     (testing/cryptotest.SetGlobalRandom panics outside them). A skipped
//     number changes ACK ranges, so datagram sizes, and RFC 9002 §6.1.1's
//     packet threshold counts packet numbers; and select picks at random
//     among ready cases of quic-go's run loop.
//
// Inside a test binary the bubble works: netenv/quicgo/upstream runs
// quic-go alone on its own simulated network (testutils/simnet) in
// synctest.Test, a 4 s scenario in 0.05 s of wall clock, and its result
// was the same in 50 of 50 runs (docs/bugs/quicgo-no-persistent-congestion.md).
// That serves reproducers, not campaigns: it has neither our link model
// nor a way out of `go test`.
//
// # Faults
//
// A panic on the harness goroutine becomes a *netenv.Fault of kind panic,
// and a run that makes no progress for DefaultStallTimeout one of kind
// hang (its goroutines are abandoned). A panic on one of quic-go's own
// goroutines cannot be recovered in-process (Go recovers only on the
// panicking goroutine) and ends the process, as for the gVisor subject.
// An application error (a dial or handshake that fails, a stream write or
// read error) ends the run with a *netenv.Fault of kind error.
//
// A run takes up to DefaultMaxTime of wall clock by design, plus a stall
// and teardown: Capabilities.MaxWall (4 minutes all told) tells the
// campaign, whose worker watchdog (act.IsolateOptions) is never below it
// plus 60 s. Before, the watchdog was 60 s until the first results gave a
// median, and a run longer than that (a megabyte over a lossy slow path)
// was killed as a "hang" at time 0 (no record: the supervisor's kill has
// none): the 2 hangs in 40 runs of examples/quic-recovery.yaml.
//
// # Oracles
//
// The RFC 9002 oracles (package oracle, rfc9002.go) run on this subject
// only: quic-recovery-steady (§7.3.2) and quic-app-limited-no-growth
// (§7.8) on every campaign; quic-persistent-congestion (§7.6.2) is skipped
// because quic-go v0.65.0 neither reports persistent congestion in qlog
// nor establishes it (its sent-packet handler never calls the congestion
// controller's OnRetransmissionTimeout, the code that would collapse
// cwnd; no code computes §7.6.1's duration: a subject bug candidate,
// docs/bugs/quicgo-no-persistent-congestion.md, reproduced by
// upstream.TestNoPersistentCongestion with quic-go alone and by
// TestNoPersistentCongestion here under ACTFUZZ_QUIC_FINDINGS=1, `make
// quic-findings`), and quic-ecn-ce-reduces (§7.1) because the subject
// refuses ECN.
package quicgo

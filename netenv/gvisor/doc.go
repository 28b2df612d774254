// Package gvisor is the gVisor subject: gVisor's netstack TCP (the stack
// that runs in production in gVisor and in tailscale: reno, cubic, SACK,
// RACK/TLP) tested through netenv's link model.
//
// A run builds two netstack stacks, a sender and a receiver, each with one
// channel link endpoint, and connects them through netenv's one link model
// (netenv.Link: bottleneck rate, drop-tail buffer, random loss, delay and
// Gamma queuing delay, schedules), driven by netenv/sim. The links are
// built from the native subject's topology plan (netenv.PlanTopology), so
// every topology runs and the links draw from the same PRNG streams by
// construction.
//
// Time: each stack's tcpip.Clock is a manual clock whose time is the
// simulator's and whose timers are simulator events. (faketime.ManualClock
// is not used: it fires timers due at the same instant in Go map order and
// runs timers due "now" on goroutines of their own, both of which vary from
// run to run, and it cannot tell the harness when its next timer is due, so
// it cannot be interleaved with link events at nanosecond precision.)
//
// Determinism: after every event that touches a stack the harness waits for
// quiescence (every processor goroutine of the stack idle with nothing
// queued, via stack.Pause/Resume) before the next event runs, so gVisor's
// goroutines never run concurrently with each other or with the harness,
// and everything gVisor draws at random comes from PRNGs seeded by e.
//
// State: the sender stack's TCP probe gives cwnd, ssthresh, srtt, rttvar,
// RTO, in-flight and CUBIC's state after every ACK; TCP_INFO gives
// CcState, mapped to ca_state (Open→open, Disorder→disorder,
// FastRecovery/SACKRecovery→recovery while fast recovery is active, open
// after a TLP episode, which enters and leaves it on one ACK and is
// recorded as both (effectiveState, tlpEpisode), RTORecovery→loss; gVisor
// has no CWR). Records are emitted after every ACK (reason ack, or state when
// ca_state changed), on the connection's establishment, after sender
// timers that change ca_state, cwnd or ssthresh (reason state, and rto
// when the stack counted a timeout), and after a rate-limited
// application's write that changed them (sendData's restart of an idle
// connection at the initial window). An ACK that acknowledges the
// recovery point of the recovery (or timeout) in force first records the
// Open state gVisor's leaveRecovery leaves (cwnd = ssthresh), before the
// ACK's own growth, and before a new recovery the same ACK may enter
// (passOpen). The probe does not run on timers or writes, so for those
// records the sender and CUBIC state are read directly (peekSender).
// Fields gVisor has no counterpart for, or whose counterpart is not what
// the field means: pacing_rate is 0; prior_cwnd is derived as Linux sets
// it (the last cwnd recorded before entering recovery, or loss from
// open/disorder), for CUBIC the cwnd gVisor reduced from (WLastMax);
// delivered counts the packets the receiver's ACKs report, cumulatively
// or by SACK, each once (ackBoard: gVisor's SackedOut is no such count);
// in_flight is gVisor's Outstanding (RFC 6675's pipe) in recovery and
// after a timeout, elsewhere the packets sent and not cumulatively
// acknowledged less those SACKed (gVisor's Outstanding there keeps
// SACKed packets, google/gvisor#14092). See Vars for CUBIC's variables.
//
// Consequences of one-event-at-a-time processing: every arriving packet is
// processed on its own, so gVisor's receiver, which acknowledges after each
// batch of processed segments, acknowledges every segment. The applications
// act at quiescence: the receiver reads everything readable, the sender
// keeps the send buffer (4 MB, Linux's tcp_wmem[2], as natively) filled
// up to what the application has produced (Env.App; unlimited at ≥ 1000×
// the bottleneck, as in the native subject); a rate-limited application
// blocked on the full buffer produces nothing until it is writable again. The receive buffer is 64 MB, without moderation. Profiles do
// not apply (gVisor's TCP is its own); Capabilities says so, and a campaign
// or flag asking for linux-3.10 is refused at start. Every topology of netenv runs (single-link, dumbbell with its
// access links, parking-lot): both hosts are shared by the flows, and a
// packet takes its flow's path, found from its TCP ports. Flows may be
// several; each is a connection from the sender stack to the receiver
// stack, with its own congestion control. A flow whose connection gVisor
// gives up on (SYN or data retransmissions exhausted) ends with Done false,
// and the run ends when every flow is done or given up.
//
// Known departures and candidate bugs: the oracles that fire on gVisor
// because of what gVisor does (not because of this harness) are listed,
// with their gVisor source, in oracles_test.go (gvisorDepartures and
// gvisorCandidates; TestGvisorOracleSeeds, TestGvisorCampaignHits). The
// write-ups are docs/bugs/gvisor-*.md, and the reproducers that drive
// gVisor alone are in package upstream (netenv/gvisor/upstream). The
// candidate bugs, found by the oracles in a 2,000-simulation CUBIC
// campaign and traced to gVisor's source (gvisor.dev/gvisor
// v0.0.0-20260905035102-160fafc42237, pkg/tcpip/transport/tcp):
//
//   - cubic-reno-friendly: cubic.go getCwnd computes the concave/convex
//     growth in a float, cwnd += (W_cubic(t+RTT) − cwnd)/cwnd per packet
//     the ACK acknowledged, and returns int(cwnd): the fraction is
//     dropped on every ACK, not carried to the next (reno.go keeps its
//     SndCAAckCount; Linux its cnt and snd_cwnd_cnt). RFC 9438 §4.4 and
//     §4.5: cwnd MUST be incremented by (target − cwnd)/cwnd for each new
//     ACK. With ACKs of one segment, cwnd does not grow until the target
//     reaches 2·cwnd (then it grows a segment per ACK, as in slow start:
//     cubic-growth, cubic-target-bound); meanwhile it stays below even
//     W_est, the Reno-friendly window. Reproducer:
//     testdata/fp-cubic-reno-friendly-0424.json, cwnd 14 for 7 round
//     trips (3 to 5.5 s) with a target of 18.6 to 20.3 and W_est 15 to
//     18.7, every ACK of one segment. Not found reported upstream (the
//     nearest, google/gvisor#13958, bounds the target below by cwnd).
//     Confirmed without actfuzz in the loop by
//     upstream.TestCubicConcaveGrowthLost.
//
//   - cubic-reno-friendly, a second cause: snd.go sendData restarts
//     cwnd at the initial window when nothing was sent for an RTO (RFC
//     5681 §4.1), whether or not data is outstanding; Linux restarts only
//     an idle connection (tcp_slow_start_after_idle_check: packets_out
//     0). With more outstanding than the initial window nothing is sent,
//     the time since the last send keeps growing, and every ACK's growth
//     (cc.Update, before sendData on the same ACK) is undone. Reproducer:
//     testdata/fp-cubic-reno-friendly-0636.json, cwnd 3,776 → 10 at
//     46.4 s with 1,800 segments outstanding and a CUBIC target of
//     33,000 to 39,000, and 10 on every ACK for 2 s after. Confirmed
//     without actfuzz in the loop by upstream.TestRestartWindowWithDataOutstanding.
//
//   - stall: snd.go postXmit schedules the tail-loss probe on every
//     sendData, whether or not it sent anything (its comment says "after
//     transmitting new data"), and rack.go schedulePTO disables the
//     resend timer in favour of a probe 2·SRTT from now. Each write of
//     the application (Endpoint.Write calls sendData) that cannot send
//     (cwnd full) so pushes the probe, and the retransmission timeout it
//     replaced, another 2·SRTT away: while the application writes more
//     often than that, a lost segment is never retransmitted. RFC 8985
//     §7.2 (re)starts the PTO after transmitting new data or on an ACK
//     that acknowledges new data; RFC 6298 §5 keeps the retransmission
//     timer of outstanding data running. gVisor's phantom in-flight
//     (google/gvisor#14092: Outstanding 2 for the one segment
//     outstanding) is what fills cwnd there. Reproducer:
//     testdata/fp-stall-1859.json: the segment at 1,215.8 s is lost, the
//     application (0.1 Mbit/s) writes every 115 ms until 1,282.8 s, the
//     probe goes out at 1,287.1 s and the timeout at 1,289.9 s: 74 s
//     without progress with the retransmission timeout at 2.9 s. Not
//     found reported upstream. Confirmed without actfuzz in the loop by
//     upstream.TestProbePushedByBlockedWrites.
//
//   - cubic-target-bound, cubic-growth: a HyStart exit sets ssthresh to
//     cwnd in updateHyStart but never starts CUBIC's epoch
//     (enterCongestionAvoidance runs only from updateSlowStart), so t is
//     the connection's age, and getCwnd bounds the target only below:
//     cwnd 131 → 753 in 100 ACKs after a 20 s idle period. Reproduced
//     without actfuzz by upstream.TestCubicRunawayAfterHyStartExit;
//     docs/bugs/gvisor-cubic-hystart-epoch.md.
//
// gVisor's Reno halves its Outstanding (reno.go reduceSlowStartThreshold),
// RFC 5681 eq. (4)'s FlightSize, where Linux halves cwnd; reno-half and
// reduction-bound bound it by the flight on this subject (the oracle
// package's fill). What they still report is a known departure
// (gvisorRenoDepartures): Outstanding keeps segments SACKed outside a
// recovery after their cumulative ACK (google/gvisor#14092), so ssthresh
// can be half of segments long acknowledged, above cwnd itself.
//
// Faults: a panic on the harness goroutine (gVisor code called from a
// timer, a packet injection or an application call) and a run that stops
// making progress become *netenv.Fault. A panic on one of gVisor's own
// processor goroutines cannot be recovered in-process (Go recovers only on
// the panicking goroutine) and ends the process.
package gvisor

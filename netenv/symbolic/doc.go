// Package symbolic is actfuzz's interval-branching back-end: it explores
// every order of events that a window of uncertain packet delays can cause,
// as SEIB does with S²E and ns-3 (Vu, Xu, Elbaum, Sun, Qiao: "Efficient
// Protocol Testing Under Temporal Uncertain Event Using Discrete-event
// Network Simulations", ACM TOMACS 32(2), 2022), but on actfuzz's own
// simulator, with the same simulator code, TCP endpoints and CCAIs as every
// other run.
//
// # Model
//
// A scenario names n packets (the window) whose delays d_1…d_n are
// uncertain: integers in [lo, hi] at a resolution R (1 ms by default). Every
// event timestamp is then a linear expression c + R·Σ a_i·d_i. A branch is
// an equivalence class of delay vectors: all the vectors for which the
// simulator makes the same decisions, so that it executes the same events in
// the same order and reaches the same outcome. Explore enumerates the
// branches; each comes with its constraints (the path condition, a
// conjunction of linear inequalities over d), an integer witness vector and
// its outcome (metrics, conditions).
//
// # Concolic re-execution
//
// A run executes the normal simulator (netenv.Run or netenv.RunTopology) on
// one concrete witness vector, with a symbolic scheduler plugged in through
// the sim.Scheduler interface. Since every timestamp comparison happens in
// the scheduler (the end of the run is an event too), the scheduler sees
// every decision the simulator makes about time. It keeps, for each queued
// event, its concrete timestamp under the witness and an interned
// coefficient vector a: an event inherits the vector of the event that
// scheduled it, plus the unit vector of d_i when the link hook delayed it by
// d_i (sim.Event.Uncertain), or plus the vector of the timeout when it is a
// retransmission timer (below). A comparison of two timestamps whose vectors
// differ is a potential fork: if the answer the witness does not give is
// feasible under the path condition (an integer point exists), the other
// branch is pushed with a witness computed from its constraints, and the
// path condition takes the witness's answer. Children replay their parent's
// decisions without solver calls up to the fork that created them. Branches
// are explored depth first, so memory stays small.
//
// No run but the first two simulates the prefix: up to the event whose
// handler delays the window's first packet, every run executes the same
// events, so the explorer saves the whole simulation there once
// (netenv/snapshot) and starts every later run by restoring it
// (prefix.go). A simulation whose state cannot be saved (a closure in a
// user CCAI, say: ccai.StateSaver) runs every branch from time zero;
// Report.Snapshot says which happened.
//
// Feasibility is decided exactly over the integers by Fourier–Motzkin
// elimination with integer normalization and a backtracking assignment
// (midpoint first, so witnesses avoid ties and boundaries): the solver
// answers "feasible" only with an integer point that satisfies every
// constraint. Interval bounds propagation answers most queries without it.
//
// Ties between equal timestamps are broken exactly as the default heap
// breaks them (insertion order), so classes agree with ordinary runs of the
// same delays (Replay), including ties.
//
// # RTT-dependent timers
//
// A handler that computes a delay from the uncertain times makes the offset
// depend on d: TCP's retransmission timeout, computed from RTT samples of
// delayed packets. The scheduler implements tcp.RTTTracker (rtt.go): it
// replays the sender's RFC 6298 estimator on linear forms, deciding its sign
// tests and clamps on the path like any comparison, and gives the timer the
// form now + RTO. This stays exact while the estimator's divisions by 8 and 4
// come out even on the coefficients, which are kept in units of R/D with D
// the power of two in R (path.go): for a 1 ms resolution, the samples of a
// few delayed packets. Beyond that the estimator's values are taken at the
// witness, and a branch whose timer is armed from them is flagged
// Concretized.
//
// # Timers at an absolute time
//
// A TCP sender also schedules timers at an absolute time: an
// application-limited sender's send timer at the instant its application
// will have written the next segment (on the application's clock, from the
// instant it last started, blocked or woke), and the pacing timer at
// nextPace = max(nextPace, now) + gap. Such a timer does not have the form
// of the event that armed it. The scheduler implements tcp.ClockTracker
// (abstime.go): it keeps the forms of the application's clock and of
// nextPace per flow, decides the maxima and the sender's own comparisons
// with them on the path, and gives the timer the form of the instant it
// was set to. The sender's own comparisons of now with the instants its
// application will have written a segment, a runt's first byte or the
// send buffer's limit (at which it blocks) by (tcp's AppCheck) are
// decided on the path where it makes them, so that a child forked there
// replays its parent exactly and takes the other step. The gap and the application's write time are taken at the
// witness, as constants of the path; a run that sends a runt whose size
// follows a delayed arrival is flagged Concretized. So is a run that
// computes a pacing gap after its flow's algorithm was given a
// delivery-rate sample whose interval, or an RTT sample, is not a
// constant of the class (tcp.RateTracker): BBR's pacing rate follows
// both (its bandwidth filter, and SRTT before the first sample), and a
// quotient by the delays has no linear form. Report.PaceConcretized
// counts these branches.
//
// # What the linear model does not see
//
// A handler that compares times itself (TCP's idle and cwnd-validation
// checks against the RTO, the minimum RTT, the largest SACK RTT sample)
// decides outside the scheduler, as does an algorithm that reads its own
// samples (BBR's cwnd from the minimum RTT and its bandwidth filter: only
// the pacing gap they give is flagged); and a concretized timer is
// ordered by its value at the witness, as concolic testing does. A child that does not
// follow its parent's recorded decisions, or finds a fork where its parent
// found none, is flagged Diverged; Options.Verify re-runs extreme points of
// each class to check them. UDP scenarios are exact. TCP windows where no
// branch is Diverged or Concretized have agreed with brute force wherever
// it could be run (windows that cross the timeout, explore_test.go); the
// handlers' own comparisons are what remains unseen.
//
// # Reductions
//
// The event lists follow the paper's pseudocode, so that branch counts
// compare with its Table 2: sorted lists with linear insertion (pseudocode
// 3). The insertion point is found by binary search on the witness's order
// (which every decision agrees with), and only the comparisons that can
// fork are made one by one, in the order a linear scan makes them.
//   - S (pseudocode 4): one timestamp comparison per Before.
//   - C: Ce (pseudocode 5) discards events beyond the end; Cc (6) removes
//     cancelled timers at once (without it they stay in the list, flagged, as
//     in ns-3); Coc (7) defers comparisons with outstanding timeouts to
//     waiting lists. Pseudocode 7 compares a new event with a timeout at the
//     head of the list (its k ≠ 0): when that timeout already has a waiting
//     list, the new event could go before it uncompared with the waiting
//     events and run before an earlier one; here it joins the waiting list
//     too, which restores the invariant its Theorem 7 needs.
//   - I (pseudocode 8): one event list per node, arrivals first queued at
//     their source, local synchronization (a node runs when it holds an
//     arrival from each in-neighbour) and global deadlock recovery. Two
//     additions, both sound: a node whose list is empty and whose
//     in-neighbours are all closed is closed (it can never send again), so
//     its neighbours stop waiting for it; and by default the nodes are
//     state components rather than topology nodes (netenv's Components: a
//     source with its first link, each link's transmitter with the
//     arrivals forwarded into it, each sink), which is SEIB's independence
//     argument at the grain the handlers actually share state. Options.
//     NodeGranularity uses topology nodes, as SEIB's ns-3 does.
//   - H (not SEIB's; the J-Sim thesis's state merging): a run that reaches
//     a state an earlier run reached (handlers, pending events with their
//     symbolic timestamps, and the path constraints on the delays still
//     pending) stops there: the earlier run's subtree covers its future.
//     Report.Branches then counts the leaves, Report.Merged the runs
//     stopped. Topology (UDP) scenarios only, and not with I (merge.go).
//
// Every setting simulates the same thing: the outcomes are identical, which
// the tests check against brute force over every delay vector.
package symbolic

// Package sim is actfuzz's discrete-event core: events, the scheduler
// interface and its default binary heap, the simulation loop with its caps,
// and the per-run PRNG streams.
//
// Time is an integer count of nanoseconds since the start of the run
// (time.Duration); nothing in a run reads the wall clock or uses
// floating-point time.
//
// The event queue sits behind [Scheduler] so that the symbolic back-end can
// plug in a queue whose timestamps are linear expressions over uncertain
// packet delays (SEIB, ACM TOMACS 2022, pseudocode 1–3). Three rules make
// that possible without a rewrite:
//   - every event carries its node, its kind (packet arrival, timer or
//     control) and its timestamp;
//   - a cancelled timer is removed from the queue, never flagged
//     (SEIB pseudocode 6);
//   - every comparison of two timestamps happens inside the scheduler: the
//     simulator itself never compares times. The end of the run is an event
//     of its own (like ns-3's Simulator::Stop), so even "is this past the
//     end?" is a scheduler decision.
package sim

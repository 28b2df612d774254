// Package act is automatic congestion-control testing (ACT, Zhang et al.,
// NSDI 2019): campaigns (the test input L, T, P, S, C), the selector that
// picks simulation configurations — the paper's four steps (uniform random
// sampling until saturation, parameter estimation by interpolation and
// gradient-steered extrapolation, parameter concatenation, condition
// checking) and the RAN and MAN baselines, with the directed step
// (directed.go), the adaptive schedule (bandit.go) and the symbolic step
// (symstep.go: exhaustive delay windows at the moments a simulation went
// where none had) — and the parallel runner behind `actfuzz run` and
// `actfuzz compare`.
//
// Determinism: the selector works in fixed-size batches. Each batch is
// chosen from the coverage store as it stood after the previous batch, and
// results are merged in configuration order, so a campaign's regions,
// findings and seeds do not depend on the worker count.
//
// Workers: an executor (executor.go) runs the configurations of a batch.
// In process (the library default, Options.Isolate false) they run on
// goroutines; isolated (Options.Isolate, the default of `actfuzz run` and
// `compare`) they run in supervised worker processes (`actfuzz worker`)
// that speak the worker protocol of protocol.go. The supervisor
// (isolate.go) turns a simulation that outlives the watchdog, a worker
// over its memory limit and a worker that dies into fault findings (hang,
// oom, crash) of the configuration it was running, and re-runs the rest on
// a fresh worker, so results are the same as in process. An Executor
// (Options.Executor) runs them elsewhere: act/cluster's on worker hosts
// fed through NATS JetStream, each host a WorkerPool of such processes.
// Results depend on Options.Lag, the batches chosen ahead of the merge,
// and on nothing else of where simulations ran.
//
// Checkpoints: while the coordinator waits for results, a timer writes the
// merged state every Options.CheckpointEvery (wait.go), however slow a
// batch; configurations chosen but not merged are recomputed on resume.
package act

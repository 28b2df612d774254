// Package act is automatic congestion-control testing (ACT, Zhang et al.,
// NSDI 2019): campaigns (the test input L, T, P, S, C), the selector that
// picks simulation configurations — the paper's four steps (uniform random
// sampling until saturation, parameter estimation by interpolation and
// gradient-steered extrapolation, parameter concatenation, condition
// checking) and the RAN and MAN baselines — and the parallel runner behind
// `actfuzz run` and `actfuzz compare`.
//
// Determinism: the selector works in fixed-size batches. Each batch is
// chosen from the coverage store as it stood after the previous batch, and
// results are merged in configuration order, so a campaign's regions,
// findings and seeds do not depend on the worker count.
package act

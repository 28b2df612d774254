// Package fuzz holds actfuzz's fuzzing harnesses and the code-coverage-guided
// fuzzer that `actfuzz compare` runs as the "fuzz" method.
//
// # Inputs
//
// [Decode] maps any byte string to a simulation configuration G = (seed,
// schedule of 1–[MaxPhases] environments) of a campaign: every parameter is a
// grid point of the campaign's ranges P, switch times strictly increase, and
// netenv validates the result. There is no rejection and no loop (the layout
// is documented in decode.go). [Encode] is its inverse on the grid, so
// fuzzers can be seeded from a campaign's seed files ([SeedInputs],
// [WriteGoFuzzCorpus], [WriteNativeCorpus], and the fuzz/cmd/fuzzseeds
// command).
//
// # Harnesses
//
// A [Runner] runs G the way act's workers do (states projected onto S into a
// coverage.Batch, conditions watched through corpus.Watcher, subject faults
// recorded as a campaign records them). A [RegionStore] is the region
// feedback: a coverage.Store persisted in a file shared by fuzzing
// processes (merged under a lock, saved every 10 s).
//
//   - Fuzz (build tag gofuzz; `make gofuzz`) is the go-fuzz entry point: it
//     returns 1 when the run reaches a new region at k=16 and panics on a
//     condition hit or a subject fault, so go-fuzz's crashers hold
//     reproducers. go-fuzz still admits inputs to its corpus by its own code
//     coverage; 1 only raises priority (ACTFUZZ_GATE=1 also keeps inputs
//     without a new region out).
//   - FuzzRegions is the `go test -fuzz` counterpart (same decoder, region
//     store and crash semantics; the native engine has no priority hook).
//   - FuzzCampaignParser, FuzzSeedDecoder, FuzzSimulatorExtremes and
//     FuzzDecode are robustness targets (`make fuzz-smoke` runs each
//     briefly).
//
// The harnesses read ACTFUZZ_CAMPAIGN, ACTFUZZ_BYTES and ACTFUZZ_REGIONS
// ([CampaignFromEnv]) and cap runs with [HarnessLimits].
//
// # go-fuzz and embedded files
//
// go-fuzz-build copies every package into a GOPATH tree and handles a
// //go:embed line as one literal file name. The newest go-fuzz the module
// proxy serves (v0.0.0-20220726122315-1d375ef9f9f6; the fix, go-fuzz PR
// #356, came later) therefore fails on codeberg.org/go-pdf/fpdf's
// "//go:embed font_embed/*.json font_embed/*.map", which package fuzz links
// through gonum/plot (coverage/plot.go, corpus/plot.go). Those two files are
// therefore excluded under the gofuzz tag, with stubs (plot_gofuzz.go) that
// return an error: go-fuzz binaries draw no plots, and `make gofuzz` works.
// Fuzz is also tested without go-fuzz: go test -tags gofuzz ./fuzz.
//
// # Code-coverage feedback (ACT §6.2)
//
// [Run] and [RunMethod] are a coverage-guided mutation fuzzer over Decode's
// inputs (AFL-style havoc mutations, a weighted corpus, batches merged in
// order so results do not depend on the worker count), measured like every
// method by the regions of S its simulations reach. Its feedback is
// [FeedbackCode] by default: an AFL-style edge-coverage proxy computed from
// the sender's state records (edges.go explains what it sees and what it
// does not), because Go offers no per-run coverage counters to a library.
// [FeedbackGoCover] uses real Go block coverage through runtime/coverage in
// binaries built with -cover -covermode=atomic (simulations are then
// serialized), and [FeedbackRegions] steers the same loop with ACT's region
// feedback instead, as an ablation. The fuzz/cmd/fuzzcompare command runs
// the comparison.
package fuzz

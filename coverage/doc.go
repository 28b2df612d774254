// Package coverage measures how much of a congestion-control state space S a
// campaign has explored, and keeps the visited states that the ACT selector
// needs for parameter estimation and concatenation.
//
// It follows ACT (Sun et al., NSDI 2019):
//
//   - §2.1: S is an ordered list of state variables. A numerical variable has a
//     range and a granularity; a non-numerical one has a set of values. For a
//     region size k, each numerical range is cut into equal intervals of k
//     granules and each non-numerical variable into intervals of size 1. A
//     region R(s,k) holds all states whose variables fall in the same intervals
//     as s. Region sizes are k = 1, 2, 4, … up to the widest range (see
//     [Space.MaxK]); k = 2^l is called level l here.
//   - §2.2: coverage(S,k) is the number of visited regions over the total
//     number of regions. A region is visited when at least one of its states is.
//   - §2.4–2.5 (Methods 1 and 2): each visited state keeps a pool of the
//     simulation configurations G that visited it, with the visit time t_n,
//     and ESTIMATION and CONCATENATION ask for visited states that bracket an
//     unvisited region R(s*,k) along one variable, or that differ from it in
//     exactly one variable. [Store.RandomBracket] and [Store.RandomNeighbour]
//     answer those questions at one k; [Store.SearchEstimation] and
//     [Store.SearchConcatenation] run the whole "k = 1, 2, 4, …" loop of the
//     two methods for the cost of one query; [Store.SampleUnvisited] draws
//     the s* of ACT's steps 2 and 3 (§3.2).
//   - §4.2: [WriteTable], [WriteMarkdown], [SaveCoveragePlot] (Fig. 8) and
//     [SaveGrowthPlot] (Figs. 9–10) report coverage of several methods.
//
// # Storage
//
// A state is a []float64 aligned with [Space.Vars]. It is quantised to granule
// indices g = floor((v-Min)/Step), which are bit-packed into a compact key of
// one or more 64-bit words (one word for the default S). The region of a state
// at level l is the same key with the low l bits of every numerical field
// cleared, so every level has its own exact hash set of visited regions and
// visited(k) is an O(1) count. Bracket and neighbour queries walk down the
// levels along one variable (a 2^d-ary tree kept implicitly by the level sets),
// so their cost depends on how many regions along the line are visited, not on
// the size of the store.
//
// Memory: a state of the default S costs about 5 bytes of key, 6–9 bytes of
// index, a 4-byte visit count, min(PoolSize, 2) inline 8-byte visits (plus a
// block of PoolSize-2 visits and a 4-byte block number when PoolSize > 2), and
// its share of the region sets (about 4 bytes): roughly 40–45 bytes with the
// default PoolSize of 2. Visits are a 23-bit interned config index and a
// 41-bit time packed in 8 bytes (larger values go to an escape list).
// Out-of-range states use a 32-bit id per variable, with per-variable
// dictionaries for the out-of-range values. Use a [Batch] per simulation so
// that a pool holds distinct simulations.
//
// States outside the ranges of S (or with NaN values) are kept apart: they have
// pools and can still be listed and decoded, but they belong to no region and
// are not in any count of visited regions.
//
// A Store is not safe for concurrent use. Parallel workers each fill their own
// Store (or a [Batch] per simulation) and the results are combined with
// [Store.Merge], which gives exactly the same visited states and regions as
// adding everything to one store.
package coverage

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
// 41-bit time packed in 8 bytes; larger values go to an escape list whose
// entries are freed when their visit leaves its pool, so it is bounded by
// the pool slots. Out-of-range states use a 32-bit id per variable, with
// per-variable dictionaries for the out-of-range values. Use a [Batch] per
// simulation so that a pool holds distinct simulations.
//
// # Shards and the parallel merge
//
// Every table (the pooled states and the region set of every level) is
// split into [Options.Shards] shards by the hash of its own key, each with
// its own PRNG for the reservoirs. [Store.AddBatches] merges many
// simulations at once level by level, all shards of a level in parallel;
// keys equal at a level meet in one shard in the order of the simulations,
// so the outcome is exactly that of adding the simulations one by one, on
// any number of cores. Results depend on the shard count (a store setting
// saved in checkpoints), never on the machine.
//
// # Parts and an index
//
// A store can be split, for a coordinator that must not merge every visit
// of every simulation itself (act/cluster's store processes): [NewPart]
// keeps the pooled states of its shards (counts and pools) and merges
// every visit of them ([Batch.Share], [Store.AddShares]); [NewIndex] keeps
// the visited regions of every level, and its states as bits of their
// regions at k = 2 (slim.go), and answers every query, fed only with the
// states the parts found new ([PartNews], [Store.AddNews]), and asks the
// parts for pools by key ([PoolSource]). Together they are exactly the
// whole store ([Join], [Split]); see parts.go.
//
// # Memory budget
//
// With [Options.Memory] set, the store keeps [Store.Bytes] within the
// budget by coarsening, after a merge that exceeded it, until it is back
// under 3/4 of it. Two things coarsen, alternately, so that the pools never
// sit more than two levels above the finest exact set:
//
//   - The pools: the pooled states become the visited regions one level up
//     ([Store.PoolK] doubles). Each region's count is the sum, and its pool a
//     uniform sample of the union, of its sub-regions' (each reservoir
//     weighted by its count, as in [Store.Merge]), so every visited region at
//     PoolK keeps at least one visit. The finer level stays an exact
//     key-only set.
//   - The floor: the finest exact set is replaced by a HyperLogLog sketch
//     (precision 14) of its keys, fed by every later visit ([Store.FloorK]
//     doubles).
//
// What stays exact and what degrades:
//
//   - VisitedRegions, Coverage, Exact: exact for k ≥ FloorK; below it, a
//     HyperLogLog estimate (relative standard error about 0.8%), never below
//     the exact count at FloorK.
//   - Visited: exact for k ≥ FloorK; below it, whether the enclosing region
//     at FloorK is visited (never a false "unvisited").
//   - SampleUnvisited, Brackets, Neighbours, RandomBracket, RandomNeighbour,
//     SearchEstimation, SearchConcatenation: exact for k ≥ FloorK; a smaller
//     k is answered at FloorK (ACT's k loop then starts there). A bracket or
//     neighbour found at k < PoolK is a visited region whose ref is its
//     pooled region at PoolK, and its visit is one of that region's: a
//     simulation that reached a state within PoolK granules of it, with the
//     time it first did.
//   - State, Lookup: the lower corner of the pooled region.
//   - Pools: uniform over the visits of the pooled region.
//   - StateRefs change at each coarsening ([Store.Coarsenings] counts them).
//   - Interned configs no pool refers to are dropped at each coarsening.
//
// When the pools are at the top level and the floor has reached them,
// nothing is left to coarsen: [Store.OverBudget] reports it and the store
// grows past its budget. Out-of-range states are bounded separately
// ([Store.LimitOutOfRange]) and count towards Bytes.
//
// States outside the ranges of S (or with NaN values) are kept apart: they have
// pools and can still be listed and decoded, but they belong to no region and
// are not in any count of visited regions.
//
// A Store is not safe for concurrent use (its merges use all cores
// internally). Parallel workers each fill a [Batch] per simulation (or their
// own Store) and the results are combined with [Store.AddBatches] (or
// [Store.Merge]), which gives exactly the same visited states and regions as
// adding everything to one store.
package coverage

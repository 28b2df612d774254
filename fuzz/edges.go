package fuzz

import (
	"slices"

	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

// Code-coverage feedback, and what it means here.
//
// Go has no API that a library can call between two simulations to read the
// coverage counters of the code those simulations ran: `go test -fuzz` keeps
// its libFuzzer-style counters to itself, and runtime/coverage needs a
// binary built with -cover (see FeedbackGoCover, which uses it when it can).
// The "fuzz" method therefore uses, by default, a proxy of AFL's edge
// coverage computed from the sender's state-record stream, which every
// subject produces. Each state record is emitted after one pass through
// the sender and CCAI code (an ACK, a ca_state change, an RTO, an idle
// restart) and reveals which way that pass went at a few branch sites; a
// feature is one (site, outcome) pair, the analogue of one edge of the
// control-flow graph:
//
//   - the emitting call site (ACK processed, ca_state change, RTO, idle);
//   - the ca_state transition prev_ca_state → ca_state (the recovery state
//     machine's arms);
//   - per ca_state and slow-start flag (cwnd < ssthresh, the
//     tcp_in_slow_start branch): cwnd went up, down or stayed (slow start,
//     congestion avoidance, PRR, reduction, undo arms);
//   - per ca_state: ssthresh went up, down or stayed (SSThresh() called,
//     undo);
//   - per ca_state: cwnd-limited or not (in_flight ≥ cwnd, the output
//     path's branch);
//   - per exported CCAI variable and slow-start flag: changed or not (which
//     of the CCAI's assignments ran: a CUBIC epoch reset, a W_max update,
//     HyStart setting ssthresh);
//   - the pair (previous emitting site, this one): successive passes, as
//     AFL's edges chain blocks;
//   - per flow at the end: finished, timed out, recovered, undone, capped.
//
// Features are hashed into a 64 Ki map with per-run hit counts bucketed as
// in AFL (1, 2, 3, 4–7, 8–15, 16–31, 32–127, 128+); an input is interesting
// when it sets an (feature, bucket) pair never seen before.
//
// None of this looks at the values of cwnd, ssthresh, srtt or rttvar beyond
// the signs and comparisons that the code branches on: that is exactly the
// difference between code-coverage feedback and ACT's state-region feedback
// (ACT §6.2). It is a proxy, and a coarse one: 2,000 runs of the default
// CUBIC campaign reach 99 features (565 with hit-count buckets), where Go's
// block coverage of netenv and ccai reaches 671 blocks (2,682 with
// buckets); a branch that changes nothing observable is invisible, and two
// code paths with the same effect look the same.

// EdgeMapSize is the size of the edge map (AFL's 64 Ki).
const EdgeMapSize = 1 << 16

// edgeTracer is a observe.Observer that fills an edge hit-count map.
type edgeTracer struct {
	hits     [EdgeMapSize]uint32
	touched  []uint16
	prev     []uint64 // per flow: previous emitting site
	last     []lastRec
	features []uint32
}

type lastRec struct {
	ok       bool
	cwnd     uint32
	ssthresh uint32
	vars     []float64
}

func newEdgeTracer(flows int) *edgeTracer {
	return &edgeTracer{prev: make([]uint64, flows), last: make([]lastRec, flows)}
}

func (t *edgeTracer) reset() {
	for _, i := range t.touched {
		t.hits[i] = 0
	}
	t.touched = t.touched[:0]
	clear(t.prev)
	for i := range t.last {
		t.last[i].ok = false
	}
}

func sign32(a, b uint32) uint64 {
	switch {
	case a > b:
		return 1
	case a < b:
		return 2
	}
	return 0
}

// mix is a 64-bit finalizer (splitmix64).
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// hit counts one occurrence of feature f (site<<32 | outcome).
func (t *edgeTracer) hit(site, outcome uint64) {
	i := uint16(mix(site<<32|outcome) & (EdgeMapSize - 1))
	if t.hits[i] == 0 {
		t.touched = append(t.touched, i)
	}
	t.hits[i]++
}

// Feature sites.
const (
	siteReason = iota + 1
	siteTransition
	siteCwnd
	siteSSThresh
	siteLimited
	siteReasonPair
	siteEnd
	siteVar // + variable index
)

// Observe implements observe.Observer.
func (t *edgeTracer) Observe(r *observe.Record) {
	f := int(r.Flow)
	if f >= len(t.prev) {
		return
	}
	l := &t.last[f]
	ca := uint64(r.CAState)
	var ss uint64
	if r.Cwnd < r.SSThresh {
		ss = 1
	}
	t.hit(siteReason, uint64(r.Reason))
	t.hit(siteTransition, uint64(r.PrevCAState)<<4|ca)
	if r.InFlight >= r.Cwnd {
		t.hit(siteLimited, ca<<1|1)
	} else {
		t.hit(siteLimited, ca<<1)
	}
	if l.ok {
		t.hit(siteReasonPair, t.prev[f]<<4|uint64(r.Reason))
		t.hit(siteCwnd, ca<<4|ss<<3|sign32(r.Cwnd, l.cwnd))
		t.hit(siteSSThresh, ca<<4|sign32(r.SSThresh, l.ssthresh))
		for i, v := range r.Vars {
			var ch uint64
			if i < len(l.vars) && v != l.vars[i] {
				ch = 1
			}
			t.hit(siteVar+uint64(i), ss<<1|ch)
		}
	}
	t.prev[f] = uint64(r.Reason)
	l.ok = true
	l.cwnd, l.ssthresh = r.Cwnd, r.SSThresh
	l.vars = append(l.vars[:0], r.Vars...)
}

// bucket is AFL's hit-count class (1…8; 0 for no hit).
func bucket(n uint32) uint32 {
	switch {
	case n == 0:
		return 0
	case n <= 3:
		return n
	case n <= 7:
		return 4
	case n <= 15:
		return 5
	case n <= 31:
		return 6
	case n <= 127:
		return 7
	}
	return 8
}

// finish adds the run-level blocks and returns the run's features: each
// touched feature with its hit-count bucket (index<<4 | bucket), sorted.
func (t *edgeTracer) finish(res *netenv.Result) []uint32 {
	for i, fr := range res.Flows {
		if i >= len(t.prev) {
			break
		}
		var b uint64
		if fr.Done {
			b |= 1
		}
		if fr.Timeouts > 0 {
			b |= 2
		}
		if fr.Recoveries > 0 {
			b |= 4
		}
		if fr.Undos > 0 {
			b |= 8
		}
		if res.Capped {
			b |= 16
		}
		t.hit(siteEnd, b)
	}
	t.features = t.features[:0]
	for _, i := range t.touched {
		t.features = append(t.features, uint32(i)<<4|bucket(t.hits[i]))
	}
	slices.Sort(t.features)
	return slices.Clone(t.features)
}

// edgeVirgin is the set of (edge, bucket) features seen so far.
type edgeVirgin struct {
	seen  [EdgeMapSize]uint16 // bit b: bucket b seen
	edges int                 // edges seen at least once
	feats int                 // (edge, bucket) pairs seen
}

// add records a run's features and returns how many were new.
func (v *edgeVirgin) add(features []uint32) int {
	n := 0
	for _, f := range features {
		i, b := f>>4, f&15
		if v.seen[i]&(1<<b) == 0 {
			if v.seen[i] == 0 {
				v.edges++
			}
			v.seen[i] |= 1 << b
			v.feats++
			n++
		}
	}
	return n
}

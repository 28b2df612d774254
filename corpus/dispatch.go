package corpus

import "math"

// Most conditions, the oracles' all, require a categorical state: a
// reduction's entry (ca_state in ["recovery", "cwr", "loss"] && prev.ca_state
// in ["open", "disorder"]), a timeout (reason == "rto"). On most records
// they do not hold, and testing each condition's gates costs more than
// the rest of the observer (oracle.BenchmarkOracles). The gates of all the
// conditions read a handful of variables (ca_state, prev.ca_state, reason,
// prev.reason), whose values combine into few keys: a dispatch table maps
// each key to the conditions whose gates it passes (a plan), computed the
// first time a flow meets the key, with their closure trees compiled for
// it: the key's categorical tests are constants there, wherever they
// stand (cwnd < 1 || ca_state == "loss" is cwnd < 1 in open). A record
// then costs one look-up, and only what the key leaves open runs.

// maxKeys bounds a dispatch table: a variable whose categories would take
// the table beyond it is left out of the key, and the gates that test it
// are tested at every record instead.
const maxKeys = 1 << 12

// keyVar is a categorical variable of the key: slot k < n is its k-th
// category, slot n any other value (another number, NaN), which no gate's
// name matches.
type keyVar struct {
	kind, idx int // opCur or opPrev, and the schema index
	n         int
	stride    int
}

// slot is the key slot of the value x.
func (v keyVar) slot(x float64) int {
	if x >= 0 && x < float64(v.n) {
		if k := int(x); float64(k) == x {
			return k
		}
	}
	return v.n
}

// plan is what a key leaves to do: the conditions to evaluate, in order,
// and the stretches it ends.
type plan struct {
	run []planStep
	// sieve is the disjunction of the closure trees of the plan's
	// stepFast conditions, and rest its other steps. The oracles' are
	// mostly such conditions, which hold at few records: one call says
	// that none holds, and the loop leaves them out.
	sieve fastNode
	rest  []planStep
	// end lists the conditions with a stretch whose stretch predicate
	// the key makes false: their stretch ends, as it would by evaluating
	// them.
	end []int
}

// sift sets the plan's sieve and rest, once its steps are known. The
// sieve runs the atoms of the conditions' top-level chains of || and &&
// (their sums of products: dnf) in one loop, without the calls of the
// chains' own closures.
func (pl *plan) sift(fc *fastCompiler, conds []*Condition) {
	var dnf [][]fastAtom
	for _, st := range pl.run {
		switch {
		case st.how != stepFast:
			pl.rest = append(pl.rest, st)
		case st.when != nil:
			dnf = append(dnf, fc.dnf(conds[st.ci].when.tree)...)
		}
		// A stepFast without a tree is false (see newPlan): neither.
	}
	if len(dnf) == 0 {
		return
	}
	pl.sieve = func(vs *fastVals) float64 {
	products:
		for _, p := range dnf {
			for i := range p {
				a := &p[i]
				var ok bool
				if a.f != nil {
					ok = a.f(vs) != 0
				} else {
					ok = a.cmp.holds(a.cmp.a.load(vs), a.cmp.b.load(vs))
				}
				if !ok {
					continue products
				}
			}
			return 1
		}
		return 0
	}
}

// planStep is a condition the key does not make false (for a condition
// with a stretch, its stretch predicate), and how it is left to
// evaluate.
type planStep struct {
	ci  int
	how stepKind
	// Of stepFast and stepStretch: the closure trees of When and of the
	// stretch predicate under the key, nil when the key decides them:
	// whenNever and predNever when it makes them false.
	when, pred           fastNode
	whenNever, predNever bool
	// params: the condition reads p.X, which needs the environment (else
	// holds says why not). The trees look the round-trip windows up as
	// they read them (fastCompiler.win).
	params bool
	// whenGates: the key passes When's gates (holds reads it).
	whenGates bool
}

// stepKind is what a plan leaves to do for a condition. The oracles'
// are the first three: the loop of Evaluator.Eval does them itself.
type stepKind uint8

const (
	// stepTrue: the key makes the condition true.
	stepTrue stepKind = iota
	// stepFast: When, a condition without a stretch, is the closure
	// tree when (nil: false).
	stepFast
	// stepStretch: a condition with a stretch, whose stretch predicate
	// and When are closure trees.
	stepStretch
	// stepHolds: what only the VM can say (Evaluator.holds).
	stepHolds
)

// dispatch is an Evaluator's table of plans.
type dispatch struct {
	schema Schema `snapshot:"shared"` // immutable
	vars   []keyVar
	// table maps a key to 1 + the index of its plan in plans; 0 until the
	// key is first met.
	table []int32
	// plans hold closures, which a snapshot cannot save: a plan never
	// changes once made, and the table restored with a snapshot names
	// only plans made before it.
	plans []plan `snapshot:"shared"`
	// curIdx and prevIdx are the key's variables of each record, and
	// lastCur and lastPrev their values' bits at the last record, whose
	// plan is plans[lastPlan] (−1 before the first).
	curIdx, prevIdx   []int
	lastCur, lastPrev []uint64
	lastPlan          int
	// partial marks the conditions evaluated by the VM with a gate on a
	// variable outside the key: theirs are all tested again at
	// evaluation.
	partial []bool
}

func newDispatch(schema Schema, conds []*Condition) dispatch {
	d := dispatch{schema: schema, partial: make([]bool, len(conds))}
	size := 1
	for ci, c := range conds {
		for _, p := range []*condProg{&c.when, c.while} {
			if p == nil {
				continue
			}
			tests := p.gates
			if p.tree != nil {
				tests = p.tests
			}
			for _, g := range tests {
				if d.keyed(g) {
					continue
				}
				n := len(schema[g.idx].Values)
				if n >= 64 || size*(n+1) > maxKeys {
					d.partial[ci] = true
					continue
				}
				d.vars = append(d.vars, keyVar{kind: g.kind, idx: g.idx, n: n, stride: size})
				size *= n + 1
			}
		}
	}
	d.table = make([]int32, size)
	for _, v := range d.vars {
		if v.kind == opCur {
			d.curIdx = append(d.curIdx, v.idx)
		} else {
			d.prevIdx = append(d.prevIdx, v.idx)
		}
	}
	d.lastCur, d.lastPrev = make([]uint64, len(d.curIdx)), make([]uint64, len(d.prevIdx))
	d.lastPlan = -1
	return d
}

// keyed says whether the key holds the variable that g tests.
func (d *dispatch) keyed(g gate) bool {
	for _, v := range d.vars {
		if v.kind == g.kind && v.idx == g.idx {
			return true
		}
	}
	return false
}

// plan returns the plan of the records cur and prev. The key's variables
// mostly hold at one record what they held at the one before (a flow
// stays in open, its records are ACKs): the same values, the same plan,
// without computing the key.
func (d *dispatch) plan(cur, prev []float64, conds []*Condition, win *rttWindows) *plan {
	// Bits, not floats: one comparison, and the same bits are the same
	// slot (NaN too).
	same := d.lastPlan >= 0
	for j, i := range d.curIdx {
		if x := math.Float64bits(cur[i]); x != d.lastCur[j] {
			d.lastCur[j], same = x, false
		}
	}
	for j, i := range d.prevIdx {
		if x := math.Float64bits(prev[i]); x != d.lastPrev[j] {
			d.lastPrev[j], same = x, false
		}
	}
	if same {
		return &d.plans[d.lastPlan]
	}
	k := 0
	for _, v := range d.vars {
		vals := cur
		if v.kind == opPrev {
			vals = prev
		}
		k += v.slot(vals[v.idx]) * v.stride
	}
	if d.table[k] == 0 {
		d.plans = append(d.plans, d.newPlan(k, conds, win))
		d.table[k] = int32(len(d.plans))
	}
	d.lastPlan = int(d.table[k]) - 1
	return &d.plans[d.lastPlan]
}

// newPlan works out the plan of key k.
func (d *dispatch) newPlan(k int, conds []*Condition, win *rttWindows) plan {
	slots := make([]int, len(d.vars))
	for i, v := range d.vars {
		slots[i] = k / v.stride % (v.n + 1)
	}
	fc := fastCompiler{schema: d.schema, win: win, key: func(kind, idx int) (int, int, bool) {
		for i, v := range d.vars {
			if v.kind == kind && v.idx == idx {
				return slots[i], v.n, true
			}
		}
		return 0, 0, false
	}}
	var pl plan
	for ci, c := range conds {
		// The gates say which conditions run, as holds tests them.
		when := d.pass(c.when.gates, slots)
		in := when
		if c.while != nil {
			in = d.pass(c.while.gates, slots)
		}
		st := planStep{ci: ci, how: stepHolds}
		if c.when.tree != nil && (c.while == nil || c.while.tree != nil) {
			var never bool
			st, never = d.fastStep(&fc, ci, c)
			if !st.params {
				// Closure trees neither fail nor fault: the key says
				// all it decides.
				in = !never
			}
			// A condition reading p.X runs where its gates pass, so that
			// without the environment holds faults it where the gates
			// alone would; where the key makes it false all the same,
			// its step says so (a stepFast without a tree, predNever).
		}
		st.whenGates = when
		switch {
		case in:
			pl.run = append(pl.run, st)
		case c.stretch != nil:
			pl.end = append(pl.end, ci)
		}
	}
	pl.sift(&fc, conds)
	return pl
}

// fastStep is the step of a condition that closures evaluate, compiled
// under the key of fc, and whether the key makes it false (When, for a
// condition without a stretch; else the stretch predicate).
func (d *dispatch) fastStep(fc *fastCompiler, ci int, c *Condition) (planStep, bool) {
	st := planStep{ci: ci, params: len(c.when.param) > 0 || c.while != nil && len(c.while.param) > 0}
	// Every tree compiled before, without a key: it compiles under one.
	when, _ := fc.compile(c.when.tree)
	if when.isConst() {
		st.whenNever = when.c == 0
	} else {
		st.when = when.f
	}
	if c.stretch == nil {
		st.how = stepFast
		if when.isConst() && when.c != 0 {
			st.how = stepTrue
		}
		return st, st.whenNever
	}
	st.how = stepStretch
	if c.while == nil {
		// The stretch predicate is When itself.
		st.pred, st.predNever = st.when, st.whenNever
		st.when, st.whenNever = nil, false
		return st, st.predNever
	}
	pred, _ := fc.compile(c.while.tree)
	if pred.isConst() {
		st.predNever = pred.c == 0
	} else {
		st.pred = pred.f
	}
	return st, st.predNever
}

// pass says whether the keyed gates among gates pass at the key's slots
// (the others are left to evaluation: dispatch.partial).
func (d *dispatch) pass(gates []gate, slots []int) bool {
	for _, g := range gates {
		for i, v := range d.vars {
			if v.kind == g.kind && v.idx == g.idx && !g.passSlot(slots[i], v.n) {
				return false
			}
		}
	}
	return true
}

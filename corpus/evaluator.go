package corpus

import (
	"errors"
	"math"
	"slices"

	"github.com/actfuzz/actfuzz/internal/exprcheck"
	"github.com/actfuzz/actfuzz/netenv"
)

// Evaluator evaluates compiled conditions over a stream of observations.
// At each record, the values of the categorical variables the conditions
// test (ca_state, prev.ca_state, reason…) pick a plan (dispatch.go): the
// conditions that can hold, as closure trees specialised for those values,
// the plain ones behind one sieve. What only expr-lang's VM can say runs
// there, and is re-run only when a variable it reads has changed.
type Evaluator struct {
	// Immutable: shared by a snapshot (see Watcher.Schemas).
	schema Schema       `snapshot:"shared"`
	conds  []*Condition `snapshot:"shared"`
	env    map[string]any
	prev   map[string]any
	first  map[string]any
	p      map[string]any
	ago    map[string]any
	mx     map[string]any
	held   map[string]any
	// win follows the variables read as rtt_ago.X and rtt_max.X (nil
	// when no condition reads them); timeIdx and srttIdx place time and
	// srtt in the schema.
	win              *rttWindows
	fv               fastVals // the fast path's operands, reused
	timeIdx, srttIdx int
	// disp says which conditions can hold at a record, by the values of
	// the variables their gates test.
	disp dispatch
	// fault is the record's first fault while Eval runs (step).
	fault error
	// params are the parameters in force (SetEnv); hasEnv says whether
	// they were set for this simulation.
	params []float64
	hasEnv bool
	when   []progCache
	while  []progCache
	// Per condition with a stretch: whether one is open, and the
	// observation at its first record.
	open     []bool
	firstObs [][]float64
	reach    []reach
	// faulted marks the conditions that failed to run in this
	// simulation: they are not evaluated again until Reset, so that one
	// faulty condition neither repeats its error at every record nor
	// keeps the others from being checked.
	faulted []bool
	faults  int // how many are
}

// progCache remembers an expression's last inputs and result.
type progCache struct {
	last   []float64
	result bool
	seen   bool
	parts  []progCache // the conjuncts' (condProg.conj)
}

// NewEvaluator prepares an evaluator.
func NewEvaluator(schema Schema, conds []*Condition) *Evaluator {
	e := &Evaluator{schema: schema, conds: conds}
	var agoIdx, maxIdx, heldIdx []int
	for _, c := range conds {
		for _, p := range []*condProg{&c.when, c.while} {
			if p != nil {
				agoIdx = append(agoIdx, p.ago...)
				maxIdx = append(maxIdx, p.max...)
				heldIdx = append(heldIdx, p.held...)
			}
		}
	}
	e.timeIdx, e.srttIdx = schema.Index("time"), schema.Index("srtt")
	if len(agoIdx)+len(maxIdx)+len(heldIdx) > 0 && e.timeIdx >= 0 {
		for _, l := range []*[]int{&agoIdx, &maxIdx, &heldIdx} {
			slices.Sort(*l)
			*l = slices.Compact(*l)
		}
		e.win = newRTTWindows(len(schema), agoIdx, maxIdx, heldIdx)
	}
	if e.win != nil {
		// The windows' vectors are allocated once: set them here, and
		// a program reading them only resolves them.
		e.fv[opAgo], e.fv[opMax], e.fv[opHeld] = e.win.agoVals, e.win.maxVals, e.win.heldVals
	}
	e.disp = newDispatch(schema, conds)
	e.when = make([]progCache, len(conds))
	e.while = make([]progCache, len(conds))
	e.open = make([]bool, len(conds))
	e.firstObs = make([][]float64, len(conds))
	e.reach = make([]reach, len(conds))
	e.faulted = make([]bool, len(conds))
	return e
}

// vmEnv makes the maps the VM reads the variables from, the first time a
// condition runs in it: most evaluators never need them (the oracles' run
// as closure trees), and maps of values are what a collector scans.
func (e *Evaluator) vmEnv() {
	e.env = envFor(e.schema)
	e.prev = e.env["prev"].(map[string]any)
	e.first = e.env["first"].(map[string]any)
	e.p = e.env["p"].(map[string]any)
	e.ago = e.env["rtt_ago"].(map[string]any)
	e.mx = e.env["rtt_max"].(map[string]any)
	e.held = e.env["held"].(map[string]any)
}

// SetEnv sets the parameters of P that conditions read as p.X: those in
// force from now on.
func (e *Evaluator) SetEnv(env *netenv.Env) {
	if e.params == nil {
		e.params = make([]float64, netenv.NumParams)
	}
	e.hasEnv = true
	for i := range e.params {
		e.params[i] = env.Get(i)
	}
}

// Reset forgets the previous observation, every open stretch and the
// parameters (start of a new simulation).
func (e *Evaluator) Reset() {
	e.hasEnv = false
	for i := range e.conds {
		e.when[i].forget()
		e.while[i].forget()
		e.open[i] = false
	}
	clear(e.faulted)
	e.faults = 0
	if e.win != nil {
		e.win.reset()
	}
}

func (e *Evaluator) value(i int, x float64) any {
	v := e.schema[i]
	if len(v.Values) > 0 {
		// An index that is not a whole number names no category (as in
		// the fast path's gates).
		if k := int(x); x >= 0 && k < len(v.Values) && float64(k) == x {
			return v.Values[k]
		}
		return "?"
	}
	return x
}

func paramValue(i int, x float64) any {
	p := netenv.ParamAt(i)
	if p.Kind == netenv.Categorical {
		if k := int(x); x >= 0 && k < len(p.Values) && float64(k) == x {
			return p.Values[k]
		}
		return "?"
	}
	return x
}

// run evaluates p on cur, prev and first, or returns the cached result
// when none of the values it reads changed (the common case, on every
// state record: no map is written and nothing runs).
func (e *Evaluator) run(p *condProg, pc *progCache, cur, prev, first []float64) (bool, error) {
	if len(p.param) > 0 && !e.hasEnv {
		return false, errors.New("reads p.X, but the environment is not known (internal: SetEnv was not called)")
	}
	if p.fast != nil {
		// Eval set cur, prev and the parameters for every condition,
		// NewEvaluator the windows.
		if p.windows {
			e.win.resolve()
		}
		e.fv[opFirst] = first
		return p.fast(&e.fv) != 0, nil
	}
	if len(p.conj) > 0 {
		if len(pc.parts) != len(p.conj) {
			pc.parts = make([]progCache, len(p.conj))
		}
		for k := range p.conj {
			if ok, err := e.run(&p.conj[k], &pc.parts[k], cur, prev, first); err != nil || !ok {
				return false, err
			}
		}
		return true, nil
	}
	if e.env == nil {
		e.vmEnv()
	}
	// The kinds of operand (opCur…), in the order of pc.last.
	idx := [numOperandKinds][]int{p.cur, p.prev, p.first, p.param, p.ago, p.max, p.held}
	vals := [numOperandKinds][]float64{cur, prev, first, e.params, nil, nil, nil}
	if e.win != nil && len(p.ago)+len(p.max)+len(p.held) > 0 {
		e.win.resolve()
		vals[opAgo], vals[opMax], vals[opHeld] = e.win.agoVals, e.win.maxVals, e.win.heldVals
	}
	if pc.seen && pc.same(idx, vals) {
		return pc.result, nil
	}
	n := len(p.cur) + len(p.prev) + len(p.first) + len(p.param) + len(p.ago) + len(p.max) + len(p.held)
	if cap(pc.last) < n {
		pc.last = make([]float64, n)
	}
	pc.last = pc.last[:n]
	k := 0
	for g, is := range idx {
		for _, i := range is {
			x := vals[g][i]
			pc.last[k] = x
			k++
			switch g {
			case opCur:
				e.env[e.schema[i].Name] = e.value(i, x)
			case opPrev:
				e.prev[e.schema[i].Name] = e.value(i, x)
			case opFirst:
				e.first[e.schema[i].Name] = e.value(i, x)
			case opParam:
				e.p[netenv.ParamAt(i).Name] = paramValue(i, x)
			case opAgo:
				e.ago[e.schema[i].Name] = e.value(i, x)
			case opMax:
				e.mx[e.schema[i].Name] = x
			default:
				e.held[e.schema[i].Name] = x
			}
		}
	}
	pc.seen = true
	out, err := exprcheck.Run(p.prog, e.env)
	if err != nil {
		pc.seen = false
		return false, err
	}
	pc.result, _ = out.(bool)
	return pc.result, nil
}

// forget drops the cached results (a new simulation).
func (pc *progCache) forget() {
	pc.seen = false
	for k := range pc.parts {
		pc.parts[k].forget()
	}
}

// same says whether the operands hold the values of the last run.
func (pc *progCache) same(idx [numOperandKinds][]int, vals [numOperandKinds][]float64) bool {
	k := 0
	for g, is := range idx {
		for _, i := range is {
			if !same(pc.last[k], vals[g][i]) {
				return false
			}
			k++
		}
	}
	return true
}

// Eval evaluates every condition on the current and previous observations
// (vectors aligned with the schema) and appends the indices of the
// conditions that hold to hits. A condition that fails to run (a type
// error at run time, its memory budget) is returned as a *ConditionFault
// naming it, the first of the call's, and is not evaluated again until
// Reset; the other conditions are evaluated as if it did not exist.
func (e *Evaluator) Eval(cur, prev []float64, hits []int) ([]int, error) {
	if e.win != nil {
		srtt := 0.0
		if e.srttIdx >= 0 {
			srtt = cur[e.srttIdx]
		}
		e.win.observe(cur, cur[e.timeIdx], srtt)
	}
	e.setVals(cur, prev)
	pl := e.disp.plan(cur, prev, e.conds, e.win)
	for _, ci := range pl.end {
		e.open[ci] = false
	}
	steps := pl.run
	if pl.sieve != nil && e.hasEnv && e.faults == 0 {
		// Closure trees evaluate every condition of the sieve (step):
		// when none holds, the others are left.
		if pl.sieve(&e.fv) == 0 {
			steps = pl.rest
		}
	}
	for i := range steps {
		st := &steps[i]
		var ok bool
		if st.how == stepStretch && !st.params {
			ok = e.stretchHolds(st, cur) // the commonest step left
		} else {
			ok = e.step(st)
		}
		if ok {
			hits = append(hits, st.ci)
		}
	}
	if e.fault == nil {
		return hits, nil
	}
	fault := e.fault
	e.fault = nil
	return hits, fault
}

// setVals points the closure trees' operands at cur and prev. A caller
// passes the same vectors at every record (the Watcher's), which are
// then not written again: a pointer written to the heap while the
// collector marks costs a write barrier.
func (e *Evaluator) setVals(cur, prev []float64) {
	if !sameVec(e.fv[opCur], cur) {
		e.fv[opCur] = cur
	}
	if !sameVec(e.fv[opPrev], prev) {
		e.fv[opPrev] = prev
	}
	if !sameVec(e.fv[opParam], e.params) {
		e.fv[opParam] = e.params
	}
}

// sameVec says whether a and b are the same vector.
func sameVec(a, b []float64) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// step evaluates one step of a plan: whether it holds. A fault is left in
// e.fault (the first of the record's).
func (e *Evaluator) step(st *planStep) bool {
	var ok bool
	switch {
	case st.params && (!e.hasEnv || e.faulted[st.ci]) || st.how == stepHolds:
		// Closure trees neither fail nor fault: a condition reading
		// p.X without the environment is left to holds, which says so.
		var err error
		ok, err = e.holdsSlow(st, e.fv[opCur], e.fv[opPrev])
		if err != nil && e.fault == nil {
			e.fault = err
		}
	case st.how == stepTrue:
		ok = true
	case st.how == stepFast:
		ok = st.when != nil && st.when(&e.fv) != 0
	default:
		ok = e.stretchHolds(st, e.fv[opCur])
	}
	return ok
}

// holdsSlow is holds for step st, and the condition's fault if it fails:
// it is then not evaluated again until Reset.
func (e *Evaluator) holdsSlow(st *planStep, cur, prev []float64) (bool, error) {
	ci, c := st.ci, e.conds[st.ci]
	if e.faulted[ci] {
		return false, nil
	}
	ok, err := e.holds(ci, c, st.whenGates, cur, prev)
	if err != nil {
		e.faulted[ci] = true
		e.faults++
		return false, &ConditionFault{Spec: c.ConditionSpec, Err: err}
	}
	return ok, nil
}

// stretchHolds is holds for a condition with a stretch whose stretch
// predicate and When are closure trees (stepStretch).
func (e *Evaluator) stretchHolds(st *planStep, cur []float64) bool {
	ci, c := st.ci, e.conds[st.ci]
	if st.predNever {
		e.open[ci] = false
		return false
	}
	if st.pred != nil {
		if st.pred(&e.fv) == 0 {
			e.open[ci] = false
			return false
		}
	}
	if !e.open[ci] {
		e.open[ci] = true
		e.firstObs[ci] = append(e.firstObs[ci][:0], cur...)
		e.reach[ci].ok = false
	}
	first := e.firstObs[ci]
	if !e.reached(ci, c, cur, first) {
		return false
	}
	switch {
	case c.while == nil:
		return true
	case st.whenNever:
		return false
	case st.when == nil:
		return true
	}
	if !sameVec(e.fv[opFirst], first) {
		e.fv[opFirst] = first
	}
	return st.when(&e.fv) != 0
}

// holds evaluates condition ci, whose gates the plan passed (those of
// its stretch predicate, for a stretch; whenGates: those of When).
func (e *Evaluator) holds(ci int, c *Condition, whenGates bool, cur, prev []float64) (bool, error) {
	all := e.disp.partial[ci]
	if c.stretch == nil {
		return e.check(&c.when, &e.when[ci], all, cur, prev, nil)
	}
	// The stretch predicate: While, else When itself.
	p, pc := &c.when, &e.when[ci]
	if c.while != nil {
		p, pc = c.while, &e.while[ci]
	}
	in, err := e.check(p, pc, all, cur, prev, nil)
	if err != nil || !in {
		e.open[ci] = false
		return false, err
	}
	if !e.open[ci] {
		e.open[ci] = true
		e.firstObs[ci] = append(e.firstObs[ci][:0], cur...)
		e.reach[ci].ok = false
	}
	first := e.firstObs[ci]
	if !e.reached(ci, c, cur, first) {
		return false, nil
	}
	if c.while == nil {
		return true, nil
	}
	if !whenGates {
		return false, nil
	}
	return e.check(&c.when, &e.when[ci], all, cur, prev, first)
}

// check evaluates p on a record that passes the gates of p the dispatch
// key holds; all: p has others, which are tested here.
func (e *Evaluator) check(p *condProg, pc *progCache, all bool, cur, prev, first []float64) (bool, error) {
	if all && !p.gatesPass(cur, prev) {
		return false, nil
	}
	if p.onlyGates {
		return true, nil
	}
	return e.run(p, pc, cur, prev, first)
}

// reached says whether the open stretch of condition ci, which began at
// the record first, has lasted long enough at the record cur. The time a
// stretch has lasted grows with the record's time, and the time it must
// last with srtt (Stretch.nanoseconds): once reached at a time and srtt,
// it is reached at a later time with an srtt no larger, and the rounding
// is left out.
func (e *Evaluator) reached(ci int, c *Condition, cur, first []float64) bool {
	t, srtt := cur[c.timeIdx], 0.0
	if c.srttIdx >= 0 {
		srtt = cur[c.srttIdx]
	}
	r := &e.reach[ci]
	if r.ok && t >= r.t && srtt <= r.srtt {
		return true
	}
	// Times are seconds converted from integer nanoseconds: compare in
	// nanoseconds, so that 0.6 s − 0.2 s is 400 ms.
	if math.Round((t-first[c.timeIdx])*1e9) < c.stretch.nanoseconds(srtt) {
		return false
	}
	*r = reach{ok: true, t: t, srtt: srtt}
	return true
}

// reach is where a stretch was last found long enough (Evaluator.reached).
type reach struct {
	ok      bool
	t, srtt float64
}

func same(a, b float64) bool {
	return a == b || (math.IsNaN(a) && math.IsNaN(b))
}

package symbolic

// A timestamp is a linear expression over the uncertain delays,
//
//	t(x) = c + u·Σ a_i·x_i,
//
// where x_i is delay d_i in units of the resolution R (ns), u = R/D the unit
// of the coefficients (ns) and a_i a small integer. D is 1 for topology
// scenarios; TCP scenarios take the largest power of two dividing R (at most
// maxScale), so that a delay d_i is D·e_i and the RTT estimator's divisions
// by 2, 4 and 8 stay integral for a few samples (rtt.go). The scheduler
// stores, for each queued event, its concrete timestamp At under the run's
// witness w and the interned coefficient vector a; the constant is then
// c = At − u·Σ a_i·w_i. An event inherits the vector of the event that
// scheduled it (the offset the handler added is a constant of this
// execution path, or a linear form rtt.go computed) plus D·e_i when the
// link hook delayed it by d_i.

// maxScale bounds D: RTO forms are shifted by the backoff, and coefficients
// are int32.
const maxScale = 1 << 10

// unitScale is D for a resolution of res ns: the largest power of two that
// divides it, at most maxScale.
func unitScale(res int64) int64 {
	d := int64(1)
	for d < maxScale && res%(2*d) == 0 {
		d *= 2
	}
	return d
}

// vecTable interns coefficient vectors; id 0 is the zero vector.
type vecTable struct {
	unit  int32 // D: the coefficient of one delay
	vecs  [][MaxVars]int32
	index map[[MaxVars]int32]int32
	plus  [][MaxVars]int32 // plus[id][i]: id of vecs[id] + D·e_i, or -1
}

func newVecTable(unit int32) *vecTable {
	t := &vecTable{unit: unit, index: map[[MaxVars]int32]int32{}}
	t.intern([MaxVars]int32{})
	return t
}

func (t *vecTable) intern(v [MaxVars]int32) int32 {
	if id, ok := t.index[v]; ok {
		return id
	}
	id := int32(len(t.vecs))
	t.vecs = append(t.vecs, v)
	t.index[v] = id
	var p [MaxVars]int32
	for i := range p {
		p[i] = -1
	}
	t.plus = append(t.plus, p)
	return id
}

// addUnit returns the id of vecs[id] + D·e_i.
func (t *vecTable) addUnit(id int32, i int) int32 {
	if r := t.plus[id][i]; r >= 0 {
		return r
	}
	v := t.vecs[id]
	v[i] += t.unit
	r := t.intern(v)
	t.plus[id][i] = r
	return r
}

// addVec returns the id of the coefficient vector v + vecs[id], or false
// when a coefficient would overflow.
func (t *vecTable) addVec(id int32, v *[MaxVars]int32) (int32, bool) {
	if *v == ([MaxVars]int32{}) {
		return id, true
	}
	r := t.vecs[id]
	for i := range r {
		s := int64(r[i]) + int64(v[i])
		if s != int64(int32(s)) {
			return 0, false
		}
		r[i] = int32(s)
	}
	return t.intern(r), true
}

// Condition kinds: the two comparisons a Before makes.
const (
	condLT uint8 = iota // t_a − t_b < 0
	condLE              // t_a − t_b ≤ 0
)

// forkRec is one fork of a path: the index of the symbolic condition in the
// run, the constraint the path takes there and the concrete outcome that
// corresponds to it.
type forkRec struct {
	cond  int64
	con   lincon
	taken bool
}

// job is a branch waiting to run: a witness and the forks to replay.
type job struct {
	witness [MaxVars]int64
	prefix  []forkRec
}

// path is the symbolic state of one concolic run: the witness it executes,
// its path condition, and the decisions it replays and makes.
type path struct {
	x      *explorer
	n      int
	res    int64 // u, ns per coefficient unit (R/D)
	w      [MaxVars]int64
	wns    [MaxVars]int64 // w_i·u
	pc     []lincon
	bx     box
	prefix []forkRec
	pi     int
	last   int64 // condition index of the last prefix fork
	cond   int64
	forks  []forkRec
	// fixed paths (brute force, verification) never fork.
	fixed    bool
	diverged bool
	merged   bool // stopped by state hashing (H)
	// concretized: a timer offset that may depend on the delays was
	// taken at its witness value (rtt.go).
	concretized bool
	// paceConcretized: a pacing gap whose rate may depend on the delays
	// was taken at its witness value (abstime.go); the branch is
	// Concretized as for the causes above, kept apart for the report.
	paceConcretized bool
	// statistics of the new (non-replayed) part of the run
	symCmp  uint64 // comparisons of timestamps differing by a non-constant expression
	overlap uint64 // those the interval bounds could not decide
}

func (x *explorer) newPath(j *job, fixed bool) *path {
	p := &path{x: x, n: x.n, res: x.unit, w: j.witness, prefix: j.prefix, fixed: fixed}
	for i := 0; i < p.n; i++ {
		p.wns[i] = p.w[i] * p.res
		if fixed {
			p.bx.lo[i], p.bx.hi[i] = p.w[i], p.w[i]
		} else {
			p.bx.lo[i], p.bx.hi[i] = x.lo[i], x.hi[i]
		}
	}
	if len(j.prefix) > 0 {
		p.last = j.prefix[len(j.prefix)-1].cond
	}
	return p
}

// sides returns the constraints for the true and the false outcome of a
// condition on t_a − t_b = c + u·Σ lin_i·x_i.
func (p *path) sides(kind uint8, lin *[MaxVars]int32, c int64) (t, f lincon) {
	t.a = *lin
	for i := range lin {
		f.a[i] = -lin[i]
	}
	// lin·x ≤ q  ⇔  u·lin·x ≤ u·q, so bounds divide by u rounding down.
	if kind == condLT {
		t.b = floorDiv(-1-c, p.res) // value ≤ −1
		f.b = floorDiv(c, p.res)    // value ≥ 0
	} else {
		t.b = floorDiv(-c, p.res)  // value ≤ 0
		f.b = floorDiv(c-1, p.res) // value ≥ 1
	}
	t.normalize()
	f.normalize()
	return t, f
}

// decide is called for every comparison whose timestamps differ by a
// non-constant expression. outcome is the concrete answer under the witness;
// decide forks when the other answer is feasible too.
func (p *path) decide(kind uint8, lin *[MaxVars]int32, c int64, outcome bool) bool {
	p.cond++
	if p.cond <= p.last {
		// Replaying the prefix: the same conditions in the same order,
		// forking exactly where the parent forked. The replay is exact
		// when every recorded fork is the same constraint with the same
		// answer and every other condition is still implied; otherwise a
		// handler computed an offset from the uncertain delays (a TCP
		// timeout from an RTT sample, say) and the run diverged from the
		// linear model its parent used.
		t, f := p.sides(kind, lin, c)
		take, other := t, f
		if !outcome {
			take, other = f, t
		}
		if p.pi < len(p.prefix) && p.prefix[p.pi].cond == p.cond {
			r := p.prefix[p.pi]
			p.pi++
			if r.taken != outcome || r.con != take {
				p.diverged = true
			}
			p.addPC(r.con)
			p.forks = append(p.forks, r)
		} else if !p.fixed && !p.diverged && p.feasible(&other) {
			p.diverged = true
		}
		return outcome
	}
	p.symCmp++
	if p.fixed {
		return outcome
	}
	t, f := p.sides(kind, lin, c)
	take, other := t, f
	if !outcome {
		take, other = f, t
	}
	if lo, _ := p.bx.rangeOf(&other.a, p.n); lo > other.b {
		return outcome // the other answer is impossible: no fork
	}
	p.overlap++
	cons := append(p.pc[:len(p.pc):len(p.pc)], other)
	w, ok := p.x.solver.point(p.n, &p.bx, cons)
	if !ok {
		return outcome
	}
	p.x.forks++
	child := &job{witness: w, prefix: make([]forkRec, len(p.forks)+1)}
	copy(child.prefix, p.forks)
	child.prefix[len(p.forks)] = forkRec{cond: p.cond, con: other, taken: !outcome}
	p.x.push(child)
	p.forks = append(p.forks, forkRec{cond: p.cond, con: take, taken: outcome})
	p.addPC(take)
	return outcome
}

// feasible reports whether c is satisfiable together with the path
// condition (a query: it never forks).
func (p *path) feasible(c *lincon) bool {
	if lo, _ := p.bx.rangeOf(&c.a, p.n); lo > c.b {
		return false
	}
	cons := append(p.pc[:len(p.pc):len(p.pc)], *c)
	_, ok := p.x.solver.point(p.n, &p.bx, cons)
	return ok
}

func (p *path) addPC(c lincon) {
	p.pc = append(p.pc, c)
	p.bx.propagate(p.n, p.pc)
}

// finishPrefix flags a run that ended before replaying all of its prefix.
func (p *path) finishPrefix() {
	if p.pi < len(p.prefix) {
		p.diverged = true
	}
}

// canBeZero reports whether c + u·Σ lin_i·x_i = 0 has an integer solution
// on this path (a query: it never forks).
func (p *path) canBeZero(lin *[MaxVars]int32, c int64) bool {
	if c%p.res != 0 {
		return false
	}
	var le, ge lincon
	le.a, le.b = *lin, -c/p.res
	for i := range lin {
		ge.a[i] = -lin[i]
	}
	ge.b = c / p.res
	le.normalize()
	ge.normalize()
	if lo, _ := p.bx.rangeOf(&le.a, p.n); lo > le.b {
		return false
	}
	if lo, _ := p.bx.rangeOf(&ge.a, p.n); lo > ge.b {
		return false
	}
	if p.fixed {
		return true // the box is the witness, which the range checks decided
	}
	cons := append(p.pc[:len(p.pc):len(p.pc)], le, ge)
	_, ok := p.x.solver.point(p.n, &p.bx, cons)
	return ok
}

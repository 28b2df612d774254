package corpus

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/vm"

	"github.com/actfuzz/actfuzz/internal/exprcheck"
	"github.com/actfuzz/actfuzz/netenv"
)

// Var is a variable visible to conditions: numeric, or categorical when
// Values is set (its numeric value indexes Values and conditions see the
// string).
type Var struct {
	Name   string
	Values []string
	// Src is where an observation takes the value from: base variable
	// Src of a tcp.StateRecord (BaseVars) when Src < len(BaseVars), else
	// the record's Vars[Src-len(BaseVars)]. SchemaOf sets it, increasing.
	Src int
}

// Schema lists the variables of an observation in order.
type Schema []Var

// Index returns the position of name, or -1.
func (s Schema) Index(name string) int {
	return slices.IndexFunc(s, func(v Var) bool { return v.Name == name })
}

// ConditionSpec is a condition as written in a campaign: a name and an
// expr-lang expression over the current state, the previous state (prev.X)
// and named CCAI variables, and over the parameters of P in force at the
// record's time (p.X, by their names in `actfuzz list`: p.bw in Mbit/s,
// p.delay in ms, p.buffer in packets, p.aqm as a string…), so that a
// condition can be relative to the path: "cwnd above four BDPs" is
// cwnd > 4 * p.bw * 1e6 / 8 / 1448 * 2 * p.delay / 1000.
//
// A condition can also be a property of a stretch of time (For): "goodput
// below a tenth of the link for 5 s", "cwnd grows while the flow is
// application-limited for 4 RTTs". A record alone cannot say that, and
// prev.X sees one record back. With For set, the condition holds at a
// record when
//   - the stretch predicate (While, or When itself when While is empty) has
//     held at every record of the flow since the stretch began: the
//     earliest record after which it never failed;
//   - the stretch has lasted at least For: time − first.time ≥ For, where
//     For is a duration ("5s", "500ms") or a number of round trips ("4rtt":
//     4 × the current record's srtt);
//   - and, when While is set, When holds, with first.X naming the values at
//     the stretch's first record (so When can say how the state moved over
//     the stretch: cwnd > 2 * first.cwnd).
//
// State is constant between records (every change of a state variable
// emits one), so a stretch begins exactly at its first record; a stretch
// that reaches For while nothing changes is seen at the next record.
//
// Only, when set, limits the condition to the flows whose congestion
// control it names (native names, or the subject's own): an oracle of
// CUBIC is checked on a campaign's CUBIC flows and not on its Reno flows.
// Source says where the property comes from (an RFC section, a paper's),
// so a finding can be traced to it; the oracle library sets both.
type ConditionSpec struct {
	Name   string   `yaml:"name" json:"name"`
	When   string   `yaml:"when" json:"when"`
	While  string   `yaml:"while,omitempty" json:"while,omitempty"`
	For    string   `yaml:"for,omitempty" json:"for,omitempty"`
	Only   []string `yaml:"only,omitempty" json:"only,omitempty"`
	Source string   `yaml:"source,omitempty" json:"source,omitempty"`
}

// AppliesTo says whether the condition is checked on a flow running the
// congestion control named own by its subject, native by actfuzz (the
// same name on the native subject).
func (sp ConditionSpec) AppliesTo(own, native string) bool {
	if len(sp.Only) == 0 {
		return true
	}
	for _, n := range sp.Only {
		if strings.EqualFold(n, own) || strings.EqualFold(n, native) {
			return true
		}
	}
	return false
}

// Stretch is a parsed ConditionSpec.For: a duration, or a number of round
// trips at the current srtt.
type Stretch struct {
	Duration time.Duration
	RTTs     float64
}

// ParseStretch parses a For value: "5s", "250ms", "1m" (any
// time.ParseDuration form) or "4rtt". The empty string is no stretch.
func ParseStretch(s string) (Stretch, bool, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Stretch{}, false, nil
	}
	if n, ok := strings.CutSuffix(s, "rtt"); ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(n), 64)
		if err != nil || !(f > 0) || math.IsInf(f, 0) {
			return Stretch{}, false, fmt.Errorf("%q: want a positive number of round trips, such as 4rtt", s)
		}
		return Stretch{RTTs: f}, true, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return Stretch{}, false, fmt.Errorf("%q: want a positive duration (5s, 500ms) or round trips (4rtt)", s)
	}
	return Stretch{Duration: d}, true, nil
}

// nanoseconds is the stretch's length at a record whose srtt is srttMS
// milliseconds.
func (st Stretch) nanoseconds(srttMS float64) float64 {
	if st.RTTs > 0 {
		return math.Round(st.RTTs * srttMS * 1e6)
	}
	return float64(st.Duration)
}

// Check validates the spec's own fields (not its variables, which need a
// schema): the name (CheckName), the expressions' cost (exprcheck.Check:
// no loops, let or ranges, within max_expr_bytes and max_expr_nodes), For
// parses, While comes with For, first.X only in When and only with While.
// Errors name the field.
func (sp ConditionSpec) Check() error {
	if err := CheckName(sp.Name); err != nil {
		return err
	}
	if err := exprcheck.Check(sp.When); err != nil {
		return fmt.Errorf("condition %q: when: %w", sp.Name, err)
	}
	if sp.While != "" {
		if err := exprcheck.Check(sp.While); err != nil {
			return fmt.Errorf("condition %q: while: %w", sp.Name, err)
		}
	}
	_, hasFor, err := ParseStretch(sp.For)
	if err != nil {
		return fmt.Errorf("condition %q: for: %w", sp.Name, err)
	}
	if sp.While != "" && !hasFor {
		return fmt.Errorf("condition %q: while: needs for: (how long it must hold)", sp.Name)
	}
	if readsFirst(sp.While) {
		return fmt.Errorf("condition %q: while: first.X is the stretch's first record; only when: can read it", sp.Name)
	}
	if readsFirst(sp.When) && sp.While == "" {
		return fmt.Errorf("condition %q: when: reads first.X, which needs while: and for: (the stretch it is the first record of)", sp.Name)
	}
	return nil
}

// Spec returns the condition a finding records.
func (f *Finding) Spec() ConditionSpec {
	return ConditionSpec{Name: f.Condition, When: f.When, While: f.While, For: f.For, Only: f.Only, Source: f.Source}
}

// Condition is a compiled condition.
type Condition struct {
	ConditionSpec
	when    condProg
	while   *condProg // the stretch predicate, when it differs from when
	stretch *Stretch  // immutable
	// Schema indices of time and srtt, which a stretch reads.
	timeIdx, srttIdx int
}

// condProg is one compiled expression and the schema indices it reads.
type condProg struct {
	prog  *vm.Program `snapshot:"shared"` // compiled: immutable
	cur   []int       // schema indices referenced as X
	prev  []int       // schema indices referenced as prev.X
	first []int       // schema indices referenced as first.X
	param []int       // parameter table indices referenced as p.X
	ago   []int       // schema indices referenced as rtt_ago.X
	max   []int       // schema indices referenced as rtt_max.X
	held  []int       // schema indices referenced as held.X
	// conj, when the expression is a chain a && b && …, holds each
	// operand compiled on its own: evaluated in order with a cache of
	// its own, the chain stops at the first false one, and an oracle's
	// gate (ca_state == "recovery"), whose inputs rarely change, answers
	// from its cache on most records without running anything.
	conj []condProg
	// fast evaluates the whole expression without the VM (fasteval.go),
	// nil when it holds something only the VM can say.
	fast fastNode
	// gates are the categorical tests the expression requires
	// (fasteval.go): when one fails, the expression is false; onlyGates:
	// when they all pass, it is true (ca_state == "open").
	gates     []gate
	onlyGates bool
}

// gatesPass says whether every gate of p admits the records.
func (p *condProg) gatesPass(cur, prev []float64) bool {
	for _, g := range p.gates {
		vals := cur
		if g.kind == opPrev {
			vals = prev
		}
		if !g.pass(vals) {
			return false
		}
	}
	return true
}

func compileProg(src string, sample map[string]any, schema Schema) (condProg, error) {
	prog, err := expr.Compile(src, append([]expr.Option{expr.Env(sample), expr.AsBool()}, exprcheck.Options()...)...)
	if err != nil {
		return condProg{}, err
	}
	p := condProg{prog: prog}
	root := prog.Node()
	rc := refCollector{schema: schema, p: &p}
	ast.Walk(&root, &rc)
	if rc.err != nil {
		return condProg{}, rc.err
	}
	for _, l := range []*[]int{&p.cur, &p.prev, &p.first, &p.param, &p.ago, &p.max, &p.held} {
		slices.Sort(*l)
		*l = slices.Compact(*l)
	}
	if tree, err := parser.Parse(src); err == nil {
		p.gates, p.onlyGates = gatesOf(tree.Node, schema)
		if p.fast = fastCompile(tree.Node, schema); p.fast != nil {
			return p, nil
		}
	}
	if parts := conjuncts(root); len(parts) > 1 {
		for _, part := range parts {
			cp, err := compileProg(part.String(), sample, schema)
			if err != nil {
				return p, nil // evaluate the chain whole
			}
			p.conj = append(p.conj, cp)
		}
	}
	return p, nil
}

// conjuncts flattens a chain of && (or and) into its operands; any other
// expression is one operand.
func conjuncts(n ast.Node) []ast.Node {
	if b, ok := n.(*ast.BinaryNode); ok && (b.Operator == "&&" || b.Operator == "and") {
		return append(conjuncts(b.Left), conjuncts(b.Right)...)
	}
	return []ast.Node{n}
}

// Compile compiles conditions against a schema. Unknown variables are
// errors naming the condition.
func Compile(specs []ConditionSpec, schema Schema) ([]*Condition, error) {
	sample := envFor(schema)
	out := make([]*Condition, 0, len(specs))
	for i, sp := range specs {
		if sp.Name == "" {
			return nil, fmt.Errorf("conditions[%d]: name is empty", i)
		}
		// Check bounds what compiling and evaluating can cost: before
		// anything is compiled.
		if err := sp.Check(); err != nil {
			return nil, err
		}
		c := &Condition{ConditionSpec: sp, timeIdx: schema.Index("time"), srttIdx: schema.Index("srtt")}
		var err error
		if c.when, err = compileProg(sp.When, sample, schema); err != nil {
			return nil, fmt.Errorf("condition %q: %w", sp.Name, err)
		}
		if refs := slices.Concat(c.when.ago, c.when.max, c.when.held); len(refs) > 0 && c.timeIdx < 0 {
			return nil, fmt.Errorf("condition %q: rtt_ago, rtt_max and held need time, which the subject does not record", sp.Name)
		}
		if st, ok, _ := ParseStretch(sp.For); ok {
			if c.timeIdx < 0 || (st.RTTs > 0 && c.srttIdx < 0) {
				return nil, fmt.Errorf("condition %q: for: the subject records no time or srtt", sp.Name)
			}
			c.stretch = &st
		}
		if sp.While != "" {
			w, err := compileProg(sp.While, sample, schema)
			if err != nil {
				return nil, fmt.Errorf("condition %q: while: %w", sp.Name, err)
			}
			c.while = &w
		}
		out = append(out, c)
	}
	return out, nil
}

// reads lists the schema indices the condition reads, as X, prev.X or
// first.X, in either expression.
func (c *Condition) reads() []int {
	out := slices.Concat(c.when.cur, c.when.prev, c.when.first, c.when.ago, c.when.max, c.when.held)
	if c.while != nil {
		out = append(out, slices.Concat(c.while.cur, c.while.prev, c.while.ago, c.while.max, c.while.held)...)
	}
	if c.stretch != nil {
		out = append(out, c.timeIdx)
		if c.stretch.RTTs > 0 {
			out = append(out, c.srttIdx)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// readsFirst says whether an expression names first.X (a parse error is
// left to Compile).
func readsFirst(src string) bool {
	if src == "" {
		return false
	}
	tree, err := parser.Parse(src)
	if err != nil {
		return false
	}
	found := false
	ast.Find(tree.Node, func(n ast.Node) bool {
		if m, ok := n.(*ast.MemberNode); ok {
			if id, ok := m.Node.(*ast.IdentifierNode); ok && id.Value == "first" {
				found = true
			}
		}
		return found
	})
	return found
}

type refCollector struct {
	schema Schema
	p      *condProg
	err    error
}

func (r *refCollector) Visit(n *ast.Node) {
	switch v := (*n).(type) {
	case *ast.IdentifierNode:
		if i := r.schema.Index(v.Value); i >= 0 {
			r.p.cur = append(r.p.cur, i)
		}
	case *ast.MemberNode:
		if id, ok := v.Node.(*ast.IdentifierNode); ok && id.Value == "p" {
			s, ok := v.Property.(*ast.StringNode)
			i := -1
			if ok {
				i = netenv.ParamIndex(s.Value)
			}
			if i < 0 && r.err == nil {
				name := v.Property.String()
				if ok {
					name = s.Value
				}
				r.err = fmt.Errorf("p.%s: not a parameter (%s)", name, strings.Join(netenv.ParamNames(), ", "))
			}
			if i >= 0 {
				r.p.param = append(r.p.param, i)
			}
		}
		if id, ok := v.Node.(*ast.IdentifierNode); ok {
			if s, ok := v.Property.(*ast.StringNode); ok {
				// prev.X, first.X and the windows' X must be state
				// variables of the schema, as a bare X must (expr-lang's
				// checker lets a missing key of these maps through, to
				// nil at run time: a condition error on every record);
				// rtt_max.X a numeric one (its largest value).
				switch i := r.schema.Index(s.Value); {
				case r.err != nil:
				case i < 0 && slices.Contains([]string{"prev", "first", "rtt_ago", "rtt_max", "held"}, id.Value):
					r.err = fmt.Errorf("unknown name %s in %s.%s: not a state variable of this subject and congestion control", s.Value, id.Value, s.Value)
				case i >= 0 && id.Value == "rtt_max" && len(r.schema[i].Values) > 0:
					r.err = fmt.Errorf("rtt_max.%s: %s is categorical and has no largest value", s.Value, s.Value)
				}
				if i := r.schema.Index(s.Value); i >= 0 {
					switch id.Value {
					case "prev":
						r.p.prev = append(r.p.prev, i)
					case "first":
						r.p.first = append(r.p.first, i)
					case "rtt_ago":
						r.p.ago = append(r.p.ago, i)
					case "rtt_max":
						r.p.max = append(r.p.max, i)
					case "held":
						r.p.held = append(r.p.held, i)
					}
				}
			}
		}
	}
}

func envFor(schema Schema) map[string]any {
	env := map[string]any{}
	prev := map[string]any{}
	first := map[string]any{}
	ago := map[string]any{}
	mx := map[string]any{}
	held := map[string]any{}
	for _, v := range schema {
		var zero any = 0.0
		if len(v.Values) > 0 {
			zero = v.Values[0]
		}
		env[v.Name] = zero
		prev[v.Name] = zero
		first[v.Name] = zero
		ago[v.Name] = zero
		held[v.Name] = 0.0
		if len(v.Values) == 0 {
			mx[v.Name] = zero // a largest value has a meaning for numbers only
		}
	}
	env["prev"] = prev
	env["first"] = first
	env["rtt_ago"] = ago
	env["rtt_max"] = mx
	env["held"] = held
	ps := map[string]any{}
	for _, p := range netenv.Params() {
		var zero any = 0.0
		if p.Kind == netenv.Categorical {
			zero = p.Values[0]
		}
		ps[p.Name] = zero
	}
	env["p"] = ps
	return env
}

// Evaluator evaluates compiled conditions over a stream of observations. It
// re-runs an expression only when a variable it reads has changed.
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
	// faulted marks the conditions that failed to run in this
	// simulation: they are not evaluated again until Reset, so that one
	// faulty condition neither repeats its error at every record nor
	// keeps the others from being checked.
	faulted []bool
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
	e := &Evaluator{schema: schema, conds: conds, env: envFor(schema)}
	e.prev = e.env["prev"].(map[string]any)
	e.first = e.env["first"].(map[string]any)
	e.p = e.env["p"].(map[string]any)
	e.ago = e.env["rtt_ago"].(map[string]any)
	e.mx = e.env["rtt_max"].(map[string]any)
	e.held = e.env["held"].(map[string]any)
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
	e.when = make([]progCache, len(conds))
	e.while = make([]progCache, len(conds))
	e.open = make([]bool, len(conds))
	e.firstObs = make([][]float64, len(conds))
	e.faulted = make([]bool, len(conds))
	return e
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
		// Eval set cur, prev and the parameters for every condition.
		vs := &e.fv
		vs[opFirst] = first
		if e.win != nil && len(p.ago)+len(p.max)+len(p.held) > 0 {
			e.win.resolve()
			vs[opAgo], vs[opMax], vs[opHeld] = e.win.agoVals, e.win.maxVals, e.win.heldVals
		}
		return p.fast(vs) != 0, nil
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
	e.fv[opCur], e.fv[opPrev], e.fv[opParam] = cur, prev, e.params
	var fault error
	for ci, c := range e.conds {
		if e.faulted[ci] {
			continue
		}
		ok, err := e.holds(ci, c, cur, prev)
		if err != nil {
			e.faulted[ci] = true
			if fault == nil {
				fault = &ConditionFault{Spec: c.ConditionSpec, Err: err}
			}
			continue
		}
		if ok {
			hits = append(hits, ci)
		}
	}
	return hits, fault
}

func (e *Evaluator) holds(ci int, c *Condition, cur, prev []float64) (bool, error) {
	if c.stretch == nil {
		if !c.when.gatesPass(cur, prev) {
			return false, nil
		}
		if c.when.onlyGates {
			return true, nil
		}
		return e.run(&c.when, &e.when[ci], cur, prev, nil)
	}
	// The stretch predicate: While, else When itself.
	p, pc := &c.when, &e.when[ci]
	if c.while != nil {
		p, pc = c.while, &e.while[ci]
	}
	in := p.gatesPass(cur, prev)
	var err error
	if in && !p.onlyGates {
		in, err = e.run(p, pc, cur, prev, nil)
	}
	if err != nil || !in {
		e.open[ci] = false
		return false, err
	}
	if !e.open[ci] {
		e.open[ci] = true
		e.firstObs[ci] = append(e.firstObs[ci][:0], cur...)
	}
	first := e.firstObs[ci]
	srtt := 0.0
	if c.srttIdx >= 0 {
		srtt = cur[c.srttIdx]
	}
	// Times are seconds converted from integer nanoseconds: compare in
	// nanoseconds, so that 0.6 s − 0.2 s is 400 ms.
	if math.Round((cur[c.timeIdx]-first[c.timeIdx])*1e9) < c.stretch.nanoseconds(srtt) {
		return false, nil
	}
	if c.while == nil {
		return true, nil
	}
	if !c.when.gatesPass(cur, prev) {
		return false, nil
	}
	if c.when.onlyGates {
		return true, nil
	}
	return e.run(&c.when, &e.when[ci], cur, prev, first)
}

func same(a, b float64) bool {
	return a == b || (math.IsNaN(a) && math.IsNaN(b))
}

// ExprRefs are the names a condition reads: identifiers X, prev.X and
// first.X members, each once in order of appearance.
type ExprRefs struct{ Cur, Prev, First, Params, Window []string }

// Refs lists the state variables a condition expression reads; an
// expression that does not parse is an error. Identifiers that are not
// state variables (let bindings, closures' variables) are listed too: use
// Refs to explain a failed Compile, or for prev.X and first.X, which
// Compile cannot check (they are maps, and a missing key reads as nil).
func Refs(src string) (ExprRefs, error) {
	var r ExprRefs
	tree, err := parser.Parse(src)
	if err != nil {
		return r, err
	}
	ast.Walk(&tree.Node, refNames{&r})
	return r, nil
}

// Refs lists what both of the spec's expressions read; an error names the
// field.
func (sp ConditionSpec) Refs() (ExprRefs, error) {
	r, err := Refs(sp.When)
	if err != nil {
		return r, fmt.Errorf("when: %w", err)
	}
	if sp.While != "" {
		w, err := Refs(sp.While)
		if err != nil {
			return r, fmt.Errorf("while: %w", err)
		}
		for _, l := range [][2]*[]string{{&r.Cur, &w.Cur}, {&r.Prev, &w.Prev}, {&r.Params, &w.Params}, {&r.Window, &w.Window}} {
			for _, n := range *l[1] {
				if !slices.Contains(*l[0], n) {
					*l[0] = append(*l[0], n)
				}
			}
		}
	}
	return r, nil
}

type refNames struct{ r *ExprRefs }

func (r refNames) Visit(n *ast.Node) {
	add := func(l *[]string, s string) {
		if !slices.Contains(*l, s) {
			*l = append(*l, s)
		}
	}
	switch v := (*n).(type) {
	case *ast.IdentifierNode:
		if !slices.Contains([]string{"prev", "first", "p", "rtt_ago", "rtt_max", "held"}, v.Value) {
			add(&r.r.Cur, v.Value)
		}
	case *ast.MemberNode:
		if id, ok := v.Node.(*ast.IdentifierNode); ok {
			if s, ok := v.Property.(*ast.StringNode); ok {
				switch id.Value {
				case "prev":
					add(&r.r.Prev, s.Value)
				case "first":
					add(&r.r.First, s.Value)
				case "p":
					add(&r.r.Params, s.Value)
				case "rtt_ago", "rtt_max", "held":
					add(&r.r.Window, s.Value)
				}
			}
		}
	}
}

// ConditionReads lists the state variables a condition reads (as X, prev.X
// or first.X, in when or while, and time and srtt for a stretch) for flows
// running any of ccas on a subject with capabilities caps, in schema order, without duplicates (unlike Refs, no let bindings
// and no variable a flow lacks).
func ConditionReads(spec ConditionSpec, caps netenv.Capabilities, ccas []string) []string {
	var out []string
	for _, cca := range ccas {
		schema := SchemaOf(caps, cca)
		cs, err := Compile([]ConditionSpec{spec}, schema)
		if err != nil {
			continue // a variable this CCAI lacks (reno has no target)
		}
		for _, i := range cs[0].reads() {
			if !slices.Contains(out, schema[i].Name) {
				out = append(out, schema[i].Name)
			}
		}
	}
	return out
}

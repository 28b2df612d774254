package corpus

import (
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
	// Src of a observe.Record (BaseVars) when Src < len(BaseVars), else
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
	// fast evaluates the expression without the VM (fasteval.go) once
	// its gates passed: the operands of its chain of && that are not
	// gates. Nil when it holds something only the VM can say, or when
	// it is all gates.
	fast fastNode
	// gates are the categorical tests the expression requires
	// (fasteval.go): when one fails, the expression is false; onlyGates:
	// when they all pass, it is true (ca_state == "open").
	gates     []gate
	onlyGates bool
	// windows says whether the expression reads rtt_ago.X or rtt_max.X,
	// which are looked up when it runs.
	windows bool
	// tree is the parsed expression when closures evaluate all of it:
	// dispatch compiles it again under each key (dispatch.go), with tests
	// its categorical tests of the current and previous record, wherever
	// they are, whose variables a key can hold. Immutable.
	tree  ast.Node
	tests []gate
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

func compileProg(src string, sample map[string]any, schema Schema, keepVM bool) (condProg, error) {
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
	p.windows = len(p.ago)+len(p.max) > 0
	if tree, err := parser.Parse(src); err == nil {
		p.gates, p.onlyGates = gatesOf(tree.Node, schema)
		if fastCompile(tree.Node, schema) != nil {
			p.tree, p.tests = tree.Node, categoricalTests(tree.Node, schema)
		}
		if !p.onlyGates {
			p.fast = fastResidual(tree.Node, schema)
		}
		if p.onlyGates || p.fast != nil {
			// The gates and the closures say it all: the VM's
			// program is not run, and not kept (a collector scans
			// what is kept).
			if !keepVM {
				p.prog = nil
			}
			return p, nil
		}
	}
	if parts := conjuncts(root); len(parts) > 1 {
		for _, part := range parts {
			// run runs a part that is all gates in the VM: keep it.
			cp, err := compileProg(part.String(), sample, schema, true)
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
	return compile(specs, schema, false)
}

// compile is Compile; keepVM keeps the VM's programs of the expressions
// that closure trees evaluate, which nothing runs then (the tests that
// turn the trees off run them: VMOnly).
func compile(specs []ConditionSpec, schema Schema, keepVM bool) ([]*Condition, error) {
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
		if c.when, err = compileProg(sp.When, sample, schema, keepVM); err != nil {
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
			w, err := compileProg(sp.While, sample, schema, keepVM)
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

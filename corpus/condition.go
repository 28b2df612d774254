package corpus

import (
	"fmt"
	"math"
	"slices"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/vm"

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
// and named CCAI variables.
type ConditionSpec struct {
	Name string `yaml:"name" json:"name"`
	When string `yaml:"when" json:"when"`
}

// Condition is a compiled condition.
type Condition struct {
	ConditionSpec
	prog *vm.Program `snapshot:"shared"` // compiled: immutable
	cur  []int       // schema indices referenced as X
	prev []int       // schema indices referenced as prev.X
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
		prog, err := expr.Compile(sp.When, expr.Env(sample), expr.AsBool())
		if err != nil {
			return nil, fmt.Errorf("condition %q: %w", sp.Name, err)
		}
		c := &Condition{ConditionSpec: sp, prog: prog}
		root := prog.Node()
		ast.Walk(&root, refCollector{schema, c})
		slices.Sort(c.cur)
		c.cur = slices.Compact(c.cur)
		slices.Sort(c.prev)
		c.prev = slices.Compact(c.prev)
		out = append(out, c)
	}
	return out, nil
}

type refCollector struct {
	schema Schema
	c      *Condition
}

func (r refCollector) Visit(n *ast.Node) {
	switch v := (*n).(type) {
	case *ast.IdentifierNode:
		if i := r.schema.Index(v.Value); i >= 0 {
			r.c.cur = append(r.c.cur, i)
		}
	case *ast.MemberNode:
		if id, ok := v.Node.(*ast.IdentifierNode); ok && id.Value == "prev" {
			if s, ok := v.Property.(*ast.StringNode); ok {
				if i := r.schema.Index(s.Value); i >= 0 {
					r.c.prev = append(r.c.prev, i)
				}
			}
		}
	}
}

func envFor(schema Schema) map[string]any {
	env := map[string]any{}
	prev := map[string]any{}
	for _, v := range schema {
		var zero any = 0.0
		if len(v.Values) > 0 {
			zero = v.Values[0]
		}
		env[v.Name] = zero
		prev[v.Name] = zero
	}
	env["prev"] = prev
	return env
}

// Evaluator evaluates compiled conditions over a stream of observations. It
// re-runs a condition only when a variable it reads has changed.
type Evaluator struct {
	schema Schema
	conds  []*Condition
	env    map[string]any
	prev   map[string]any
	last   [][]float64 // per condition: values of its refs at the last evaluation
	result []bool
	seen   []bool
}

// NewEvaluator prepares an evaluator.
func NewEvaluator(schema Schema, conds []*Condition) *Evaluator {
	e := &Evaluator{schema: schema, conds: conds, env: envFor(schema)}
	e.prev = e.env["prev"].(map[string]any)
	e.last = make([][]float64, len(conds))
	e.result = make([]bool, len(conds))
	e.seen = make([]bool, len(conds))
	return e
}

// Reset forgets the previous observation (start of a new simulation).
func (e *Evaluator) Reset() { clear(e.seen) }

func (e *Evaluator) value(i int, x float64) any {
	v := e.schema[i]
	if len(v.Values) > 0 {
		if k := int(x); x >= 0 && k < len(v.Values) {
			return v.Values[k]
		}
		return "?"
	}
	return x
}

// Eval evaluates every condition on the current and previous observations
// (vectors aligned with the schema) and appends the indices of the
// conditions that hold to hits. A condition that fails to run (for example
// a type error at run time) is reported as an error naming it.
func (e *Evaluator) Eval(cur, prev []float64, hits []int) ([]int, error) {
	for ci, c := range e.conds {
		n := len(c.cur) + len(c.prev)
		key := e.last[ci]
		changed := !e.seen[ci]
		if !changed {
			for k, i := range c.cur {
				if !same(key[k], cur[i]) {
					changed = true
					break
				}
			}
			for k, i := range c.prev {
				if !changed && !same(key[len(c.cur)+k], prev[i]) {
					changed = true
				}
			}
		}
		if changed {
			if cap(key) < n {
				key = make([]float64, n)
			}
			key = key[:n]
			for k, i := range c.cur {
				key[k] = cur[i]
				e.env[e.schema[i].Name] = e.value(i, cur[i])
			}
			for k, i := range c.prev {
				key[len(c.cur)+k] = prev[i]
				e.prev[e.schema[i].Name] = e.value(i, prev[i])
			}
			e.last[ci] = key
			e.seen[ci] = true
			out, err := vm.Run(c.prog, e.env)
			if err != nil {
				return hits, fmt.Errorf("condition %q: %w", c.Name, err)
			}
			e.result[ci], _ = out.(bool)
		}
		if e.result[ci] {
			hits = append(hits, ci)
		}
	}
	return hits, nil
}

func same(a, b float64) bool {
	return a == b || (math.IsNaN(a) && math.IsNaN(b))
}

// Refs lists the state variables a condition expression reads, its
// identifiers X and its prev.X members, each once in order of appearance;
// an expression that does not parse is an error. Identifiers that are not
// state variables (let bindings, closures' variables) are listed too: use
// Refs to explain a failed Compile, or for prev.X, which Compile cannot
// check (prev is a map, and a missing key reads as nil).
func Refs(when string) (cur, prev []string, err error) {
	tree, err := parser.Parse(when)
	if err != nil {
		return nil, nil, err
	}
	ast.Walk(&tree.Node, refNames{&cur, &prev})
	return cur, prev, nil
}

type refNames struct{ cur, prev *[]string }

func (r refNames) Visit(n *ast.Node) {
	add := func(l *[]string, s string) {
		if !slices.Contains(*l, s) {
			*l = append(*l, s)
		}
	}
	switch v := (*n).(type) {
	case *ast.IdentifierNode:
		if v.Value != "prev" {
			add(r.cur, v.Value)
		}
	case *ast.MemberNode:
		if id, ok := v.Node.(*ast.IdentifierNode); ok && id.Value == "prev" {
			if s, ok := v.Property.(*ast.StringNode); ok {
				add(r.prev, s.Value)
			}
		}
	}
}

// ConditionReads lists the state variables condition when reads (as X or
// prev.X) for flows running any of ccas on a subject with capabilities
// caps, in schema order, without duplicates (unlike Refs, no let bindings
// and no variable a flow lacks).
func ConditionReads(when string, caps netenv.Capabilities, ccas []string) []string {
	var out []string
	for _, cca := range ccas {
		schema := SchemaOf(caps, cca)
		cs, err := Compile([]ConditionSpec{{Name: "c", When: when}}, schema)
		if err != nil {
			continue // a variable this CCAI lacks (reno has no target)
		}
		for _, i := range append(slices.Clone(cs[0].cur), cs[0].prev...) {
			if !slices.Contains(out, schema[i].Name) {
				out = append(out, schema[i].Name)
			}
		}
	}
	return out
}

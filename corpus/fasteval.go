package corpus

import (
	"math"
	"slices"

	"github.com/expr-lang/expr/ast"

	"github.com/actfuzz/actfuzz/netenv"
)

// A compiled expression runs in expr-lang's VM, which reads its
// variables from maps: every variable that changed is boxed and written
// before each run. Most conditions, the oracles' all, are arithmetic and
// comparisons over state variables, which a tree of Go closures over the
// observation vectors evaluates without either: fastCompile builds that
// tree for the expressions it can say exactly, and the VM keeps the rest.
// Both see the same AST, type-checked by expr.Compile, so they agree
// (TestFastEvalAgrees).

// operand kinds, the order of condProg's index lists and of run's vals.
const (
	opCur = iota
	opPrev
	opFirst
	opParam
	opAgo
	opMax
	opHeld
	numOperandKinds
)

// fastVals are the vectors an expression reads, by operand kind.
type fastVals [numOperandKinds][]float64

type fastNode func(v *fastVals) float64

// fastCompile returns the closure tree of n over schema, or nil when n
// holds something it does not evaluate (a string value, a call other
// than max, min, abs, floor and ceil, a closure…).
func fastCompile(n ast.Node, schema Schema) fastNode {
	switch v := n.(type) {
	case *ast.IntegerNode:
		c := float64(v.Value)
		return func(*fastVals) float64 { return c }
	case *ast.FloatNode:
		c := v.Value
		return func(*fastVals) float64 { return c }
	case *ast.BoolNode:
		c := b2f(v.Value)
		return func(*fastVals) float64 { return c }
	case *ast.ConstantNode:
		c, ok := number(v.Value)
		if !ok {
			return nil
		}
		return func(*fastVals) float64 { return c }
	case *ast.IdentifierNode, *ast.MemberNode:
		kind, i, _ := operand(n, schema)
		if kind < 0 {
			return nil
		}
		return func(vs *fastVals) float64 { return vs[kind][i] }
	case *ast.UnaryNode:
		x := fastCompile(v.Node, schema)
		if x == nil {
			return nil
		}
		switch v.Operator {
		case "-":
			return func(vs *fastVals) float64 { return -x(vs) }
		case "+":
			return x
		case "!", "not":
			return func(vs *fastVals) float64 { return b2f(x(vs) == 0) }
		}
	case *ast.BinaryNode:
		return fastBinary(v, schema)
	case *ast.BuiltinNode:
		return fastCall(v.Name, v.Arguments, schema)
	case *ast.CallNode:
		if id, ok := v.Callee.(*ast.IdentifierNode); ok {
			return fastCall(id.Value, v.Arguments, schema)
		}
	}
	return nil
}

// operand places a variable reference: its kind (opCur…), its index and
// its categories (nil for a number); kind −1 when n is no variable.
func operand(n ast.Node, schema Schema) (int, int, []string) {
	switch v := n.(type) {
	case *ast.IdentifierNode:
		if i := schema.Index(v.Value); i >= 0 {
			return opCur, i, schema[i].Values
		}
	case *ast.MemberNode:
		id, ok1 := v.Node.(*ast.IdentifierNode)
		prop, ok2 := v.Property.(*ast.StringNode)
		if !ok1 || !ok2 {
			return -1, 0, nil
		}
		if id.Value == "p" {
			if i := netenv.ParamIndex(prop.Value); i >= 0 {
				p := netenv.ParamAt(i)
				if p.Kind == netenv.Categorical {
					return opParam, i, p.Values
				}
				return opParam, i, nil
			}
			return -1, 0, nil
		}
		i := schema.Index(prop.Value)
		if i < 0 {
			return -1, 0, nil
		}
		switch id.Value {
		case "prev":
			return opPrev, i, schema[i].Values
		case "first":
			return opFirst, i, schema[i].Values
		case "rtt_ago":
			return opAgo, i, schema[i].Values
		case "rtt_max":
			if schema[i].Values == nil {
				return opMax, i, nil
			}
		case "held":
			return opHeld, i, nil
		}
	}
	return -1, 0, nil
}

func fastBinary(v *ast.BinaryNode, schema Schema) fastNode {
	// A categorical variable against a name, or a list of names: the
	// names become category indices.
	if kind, i, cats := operand(v.Left, schema); kind >= 0 && cats != nil {
		return fastCategorical(v, kind, i, cats)
	}
	switch v.Operator {
	case "&&", "and", "||", "or":
		return fastChain(v, schema)
	}
	l, r := fastCompile(v.Left, schema), fastCompile(v.Right, schema)
	if l == nil || r == nil {
		return nil
	}
	if f := fastCompare(v.Operator, v.Left, v.Right, schema); f != nil {
		return f
	}
	switch v.Operator {
	case "+":
		return func(vs *fastVals) float64 { return l(vs) + r(vs) }
	case "-":
		return func(vs *fastVals) float64 { return l(vs) - r(vs) }
	case "*":
		return func(vs *fastVals) float64 { return l(vs) * r(vs) }
	case "/":
		return func(vs *fastVals) float64 { return l(vs) / r(vs) }
	case "**", "^":
		return func(vs *fastVals) float64 { return math.Pow(l(vs), r(vs)) }
	case "<":
		return func(vs *fastVals) float64 { return b2f(l(vs) < r(vs)) }
	case "<=":
		return func(vs *fastVals) float64 { return b2f(l(vs) <= r(vs)) }
	case ">":
		return func(vs *fastVals) float64 { return b2f(l(vs) > r(vs)) }
	case ">=":
		return func(vs *fastVals) float64 { return b2f(l(vs) >= r(vs)) }
	case "==":
		return func(vs *fastVals) float64 { return b2f(l(vs) == r(vs)) }
	case "!=":
		return func(vs *fastVals) float64 { return b2f(l(vs) != r(vs)) }
	}
	return nil
}

// fastChain is a chain of && (or of ||) run as one loop over its
// operands, which stops at the first that decides it: one call per
// operand instead of a nest of them.
func fastChain(v *ast.BinaryNode, schema Schema) fastNode {
	and := v.Operator == "&&" || v.Operator == "and"
	var parts []ast.Node
	if and {
		parts = conjuncts(v)
	} else {
		parts = disjuncts(v)
	}
	fs := make([]fastNode, len(parts))
	for k, part := range parts {
		if fs[k] = fastCompile(part, schema); fs[k] == nil {
			return nil
		}
	}
	if and {
		return func(vs *fastVals) float64 {
			for _, f := range fs {
				if f(vs) == 0 {
					return 0
				}
			}
			return 1
		}
	}
	return func(vs *fastVals) float64 {
		for _, f := range fs {
			if f(vs) != 0 {
				return 1
			}
		}
		return 0
	}
}

// disjuncts flattens a chain of || (or or) into its operands.
func disjuncts(n ast.Node) []ast.Node {
	if b, ok := n.(*ast.BinaryNode); ok && (b.Operator == "||" || b.Operator == "or") {
		return append(disjuncts(b.Left), disjuncts(b.Right)...)
	}
	return []ast.Node{n}
}

// fastCompare is a comparison of a numeric variable with a constant, the
// commonest operand of an oracle's chain, read without a call for either
// side; nil for any other comparison.
func fastCompare(op string, left, right ast.Node, schema Schema) fastNode {
	kind, i, cats := operand(left, schema)
	if kind < 0 || cats != nil {
		return nil
	}
	c, ok := constant(right)
	if !ok {
		return nil
	}
	switch op {
	case "<":
		return func(vs *fastVals) float64 { return b2f(vs[kind][i] < c) }
	case "<=":
		return func(vs *fastVals) float64 { return b2f(vs[kind][i] <= c) }
	case ">":
		return func(vs *fastVals) float64 { return b2f(vs[kind][i] > c) }
	case ">=":
		return func(vs *fastVals) float64 { return b2f(vs[kind][i] >= c) }
	case "==":
		return func(vs *fastVals) float64 { return b2f(vs[kind][i] == c) }
	case "!=":
		return func(vs *fastVals) float64 { return b2f(vs[kind][i] != c) }
	}
	return nil
}

// constant is the value of a number literal.
func constant(n ast.Node) (float64, bool) {
	switch v := n.(type) {
	case *ast.IntegerNode:
		return float64(v.Value), true
	case *ast.FloatNode:
		return v.Value, true
	}
	return 0, false
}

// fastCategorical is x == "name", x != "name" or x in ["a", "b"] for a
// categorical variable x. A name that is not one of x's categories never
// matches, as in the VM, where x is then some other string.
func fastCategorical(v *ast.BinaryNode, kind, i int, cats []string) fastNode {
	set, negate, ok := categorySet(v, cats)
	if !ok {
		return nil
	}
	g := gate{kind: kind, idx: i, set: set, negate: negate}
	return func(vs *fastVals) float64 { return b2f(g.pass(vs[kind])) }
}

// categorySet is the set of category indices x == "name", x != "name" or
// x in [names] admits (negate for !=).
func categorySet(v *ast.BinaryNode, cats []string) (set uint64, negate, ok bool) {
	var names []string
	switch r := v.Right.(type) {
	case *ast.StringNode:
		if v.Operator != "==" && v.Operator != "!=" {
			return 0, false, false
		}
		names = []string{r.Value}
	case *ast.ArrayNode:
		if v.Operator != "in" {
			return 0, false, false
		}
		for _, e := range r.Nodes {
			s, ok := e.(*ast.StringNode)
			if !ok {
				return 0, false, false
			}
			names = append(names, s.Value)
		}
	case *ast.ConstantNode:
		// An optimized constant list of names.
		l, ok := r.Value.([]any)
		if !ok || v.Operator != "in" {
			return 0, false, false
		}
		for _, e := range l {
			s, ok := e.(string)
			if !ok {
				return 0, false, false
			}
			names = append(names, s)
		}
	default:
		return 0, false, false
	}
	for _, n := range names {
		if k := slices.Index(cats, n); k >= 0 && k < 64 {
			set |= 1 << k
		}
	}
	return set, v.Operator == "!=", true
}

// A gate is a categorical test of the current or previous record (ca_state
// == "recovery", prev.reason in ["ack", "sack"]) that an expression's
// chain of && requires. Most oracles start with one, and on most records
// it fails: Evaluator.holds tests a condition's gates, a few bit
// operations, before it runs anything (oracle.BenchmarkOracles).
type gate struct {
	kind, idx int // opCur or opPrev, and the schema index
	set       uint64
	negate    bool
}

func (g gate) pass(vals []float64) bool {
	x := vals[g.idx]
	k := int(x)
	in := x >= 0 && k < 64 && float64(k) == x && g.set&(1<<k) != 0
	return in != g.negate
}

// gatesOf lists the gates among the operands of n's chain of &&; all
// says whether they are every operand (the gates decide the expression).
func gatesOf(n ast.Node, schema Schema) (gates []gate, all bool) {
	parts := conjuncts(n)
	for _, part := range parts {
		b, ok := part.(*ast.BinaryNode)
		if !ok {
			continue
		}
		kind, i, cats := operand(b.Left, schema)
		if (kind != opCur && kind != opPrev) || cats == nil {
			continue
		}
		if set, negate, ok := categorySet(b, cats); ok {
			gates = append(gates, gate{kind: kind, idx: i, set: set, negate: negate})
		}
	}
	return gates, len(gates) == len(parts)
}

func fastCall(name string, args []ast.Node, schema Schema) fastNode {
	fs := make([]fastNode, len(args))
	for k, a := range args {
		if fs[k] = fastCompile(a, schema); fs[k] == nil {
			return nil
		}
	}
	one := func(f func(float64) float64) fastNode {
		if len(fs) != 1 {
			return nil
		}
		x := fs[0]
		return func(vs *fastVals) float64 { return f(x(vs)) }
	}
	switch name {
	case "abs":
		return one(math.Abs)
	case "floor":
		return one(math.Floor)
	case "ceil":
		return one(math.Ceil)
	case "max":
		return fold(fs, func(a, b float64) bool { return b > a })
	case "min":
		return fold(fs, func(a, b float64) bool { return b < a })
	}
	return nil
}

// fold keeps the first argument unless a later one replaces it.
func fold(fs []fastNode, replaces func(a, b float64) bool) fastNode {
	if len(fs) == 0 {
		return nil
	}
	return func(vs *fastVals) float64 {
		out := fs[0](vs)
		for _, f := range fs[1:] {
			if y := f(vs); replaces(out, y) {
				out = y
			}
		}
		return out
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func number(x any) (float64, bool) {
	switch v := x.(type) {
	case int:
		return float64(v), true
	case int64:
		return float64(v), true
	case float64:
		return v, true
	case bool:
		return b2f(v), true
	}
	return 0, false
}

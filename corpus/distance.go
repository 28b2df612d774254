package corpus

import (
	"fmt"
	"math"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"

	"github.com/actfuzz/actfuzz/netenv"
)

// Distance is a condition compiled into a branch distance over states, as
// search-based testing does (Korel 1990; Tracey et al. 1998; the
// normalisation is Arcuri's, "It really does matter how you normalize the
// branch distance", 2010): 0 when the condition holds, larger the further
// the state is from making it hold. Directed ACT steers toward
// configurations whose runs got closest (issue 21 item 2).
//
// Rules, with d(x) normalised to x/(x+1) so that terms of different units
// add up comparably:
//
//	a > b    max(0, b − a + ε)      a >= b   max(0, b − a)
//	a < b    max(0, a − b + ε)      a <= b   max(0, a − b)
//	a == b   |a − b| (numbers); 0 or 1 (strings, such as ca_state == "recovery")
//	a != b   0 if they differ, else ε (numbers) or 1 (strings)
//	p && q   d(p) + d(q)            p || q   min(d(p), d(q))
//	!p       pushed into p (De Morgan; a comparison is negated)
//	true, false: 0 and 1
//
// Operands may be numbers, variables of the schema, prev.X, the
// parameters in force p.X (SetEnv), and + − * / % and unary minus over
// them. Anything else (function calls, ?:, in,
// matches, a bare boolean variable) has no useful distance: Compile reports
// it and the condition is left to coverage guidance alone.
type Distance struct {
	Name string
	// root is the compiled tree: immutable. Its p.X operands read
	// params through the slice below, whose backing array a snapshot
	// saves and restores in place.
	root dnode `snapshot:"shared"`
	// params are the parameters in force that p.X reads (SetEnv); NaN
	// before SetEnv, whose distance is that of a state far away.
	params []float64
}

// SetEnv sets the parameters of P in force, which p.X operands read.
func (d *Distance) SetEnv(env *netenv.Env) {
	for i := range d.params {
		d.params[i] = env.Get(i)
	}
}

// distEps is ε: strictness of > and <, and the distance of a numeric !=
// that does not hold.
const distEps = 1e-6

// Eval returns the distance of the state cur (with the previous state prev)
// from making the condition hold.
func (d *Distance) Eval(cur, prev []float64) float64 { return d.root.dist(cur, prev, false) }

// CompileDistance compiles a condition into a distance over schema, or
// returns an error saying why it has none. A condition over a stretch of
// time (For) gets the distance of its stretch predicate (While, else When):
// the search steers toward states where the stretch can begin, and how
// long it lasts and what When says about its first record are left to
// coverage guidance.
func CompileDistance(spec ConditionSpec, schema Schema) (*Distance, error) {
	src := spec.When
	if spec.While != "" {
		src = spec.While
	}
	tree, err := parser.Parse(src)
	if err != nil {
		return nil, err
	}
	d := &Distance{Name: spec.Name, params: make([]float64, netenv.NumParams)}
	for i := range d.params {
		d.params[i] = math.NaN()
	}
	c := &dcompiler{schema: schema, params: d.params}
	n, err := c.boolean(tree.Node)
	if err != nil {
		return nil, fmt.Errorf("condition %q: %w", spec.Name, err)
	}
	d.root = n
	return d, nil
}

// dnode is a boolean sub-expression: its distance, or that of its negation.
type dnode interface {
	dist(cur, prev []float64, neg bool) float64
}

// vnode is a numeric operand; str is set for a categorical one compared as
// a string (the index into the variable's Values, or a constant's).
type vnode struct {
	val    func(cur, prev []float64) float64
	values []string // categorical variable: its values
	str    *string  // string constant
}

type dcompiler struct {
	schema Schema
	params []float64 // the Distance's, which p.X operands read
}

func norm(x float64) float64 {
	if math.IsNaN(x) {
		return 1
	}
	return x / (x + 1)
}

type andNode struct {
	l, r dnode
	or   bool
}

func (n andNode) dist(cur, prev []float64, neg bool) float64 {
	a, b := n.l.dist(cur, prev, neg), n.r.dist(cur, prev, neg)
	if n.or != neg { // p || q, or !(p && q) = !p || !q
		return min(a, b)
	}
	return a + b
}

type notNode struct{ n dnode }

func (n notNode) dist(cur, prev []float64, neg bool) float64 { return n.n.dist(cur, prev, !neg) }

type constNode bool

func (n constNode) dist(_, _ []float64, neg bool) float64 {
	if bool(n) != neg {
		return 0
	}
	return 1
}

type cmpNode struct {
	op   string
	l, r vnode
	str  bool // compare as strings (equality only)
}

func (n cmpNode) dist(cur, prev []float64, neg bool) float64 {
	op := n.op
	if neg {
		op = map[string]string{">": "<=", ">=": "<", "<": ">=", "<=": ">", "==": "!=", "!=": "=="}[op]
	}
	if n.str {
		eq := n.l.text(cur, prev) == n.r.text(cur, prev)
		if eq == (op == "==") {
			return 0
		}
		return 1
	}
	a, b := n.l.val(cur, prev), n.r.val(cur, prev)
	var x float64
	switch op {
	case ">":
		x = max(0, b-a+distEps)
	case ">=":
		x = max(0, b-a)
	case "<":
		x = max(0, a-b+distEps)
	case "<=":
		x = max(0, a-b)
	case "==":
		x = math.Abs(a - b)
	case "!=":
		if a == b {
			x = distEps
		}
	}
	return norm(x)
}

func (v vnode) text(cur, prev []float64) string {
	if v.str != nil {
		return *v.str
	}
	k := int(v.val(cur, prev))
	if k >= 0 && k < len(v.values) {
		return v.values[k]
	}
	return "?"
}

func (c *dcompiler) boolean(n ast.Node) (dnode, error) {
	switch x := n.(type) {
	case *ast.BoolNode:
		return constNode(x.Value), nil
	case *ast.UnaryNode:
		if x.Operator == "!" || x.Operator == "not" {
			in, err := c.boolean(x.Node)
			return notNode{in}, err
		}
	case *ast.BinaryNode:
		switch x.Operator {
		case "&&", "and", "||", "or":
			l, err := c.boolean(x.Left)
			if err != nil {
				return nil, err
			}
			r, err := c.boolean(x.Right)
			if err != nil {
				return nil, err
			}
			return andNode{l, r, x.Operator == "||" || x.Operator == "or"}, nil
		case ">", ">=", "<", "<=", "==", "!=":
			l, err := c.operand(x.Left)
			if err != nil {
				return nil, err
			}
			r, err := c.operand(x.Right)
			if err != nil {
				return nil, err
			}
			ls, rs := l.str != nil || l.values != nil, r.str != nil || r.values != nil
			if ls || rs {
				if !ls || !rs || (x.Operator != "==" && x.Operator != "!=") {
					return nil, fmt.Errorf("%s: a categorical variable is compared only with == or != to a string", x.Operator)
				}
				return cmpNode{op: x.Operator, l: l, r: r, str: true}, nil
			}
			return cmpNode{op: x.Operator, l: l, r: r}, nil
		}
	}
	return nil, fmt.Errorf("no branch distance for %T", n)
}

func (c *dcompiler) variable(name string, prev bool) (vnode, error) {
	i := c.schema.Index(name)
	if i < 0 {
		return vnode{}, fmt.Errorf("unknown variable %q", name)
	}
	v := vnode{values: c.schema[i].Values}
	if prev {
		v.val = func(_, p []float64) float64 { return p[i] }
	} else {
		v.val = func(cur, _ []float64) float64 { return cur[i] }
	}
	return v, nil
}

func (c *dcompiler) operand(n ast.Node) (vnode, error) {
	switch x := n.(type) {
	case *ast.IntegerNode:
		f := float64(x.Value)
		return vnode{val: func(_, _ []float64) float64 { return f }}, nil
	case *ast.FloatNode:
		f := x.Value
		return vnode{val: func(_, _ []float64) float64 { return f }}, nil
	case *ast.StringNode:
		s := x.Value
		return vnode{str: &s}, nil
	case *ast.IdentifierNode:
		return c.variable(x.Value, false)
	case *ast.MemberNode:
		if id, ok := x.Node.(*ast.IdentifierNode); ok && id.Value == "prev" {
			if s, ok := x.Property.(*ast.StringNode); ok {
				return c.variable(s.Value, true)
			}
		}
		if id, ok := x.Node.(*ast.IdentifierNode); ok && id.Value == "p" {
			if s, ok := x.Property.(*ast.StringNode); ok {
				if i := netenv.ParamIndex(s.Value); i >= 0 {
					ps := c.params
					return vnode{val: func(_, _ []float64) float64 { return ps[i] }, values: netenv.ParamAt(i).Values}, nil
				}
			}
		}
	case *ast.UnaryNode:
		if x.Operator == "-" || x.Operator == "+" {
			in, err := c.operand(x.Node)
			if err != nil || in.val == nil || in.values != nil {
				return vnode{}, fmt.Errorf("%s of a non-number", x.Operator)
			}
			if x.Operator == "+" {
				return in, nil
			}
			f := in.val
			return vnode{val: func(cur, prev []float64) float64 { return -f(cur, prev) }}, nil
		}
	case *ast.BinaryNode:
		l, err := c.operand(x.Left)
		if err != nil {
			return vnode{}, err
		}
		r, err := c.operand(x.Right)
		if err != nil {
			return vnode{}, err
		}
		if l.val == nil || r.val == nil || l.values != nil || r.values != nil {
			return vnode{}, fmt.Errorf("%s of a non-number", x.Operator)
		}
		a, b := l.val, r.val
		var f func(cur, prev []float64) float64
		switch x.Operator {
		case "+":
			f = func(cur, prev []float64) float64 { return a(cur, prev) + b(cur, prev) }
		case "-":
			f = func(cur, prev []float64) float64 { return a(cur, prev) - b(cur, prev) }
		case "*":
			f = func(cur, prev []float64) float64 { return a(cur, prev) * b(cur, prev) }
		case "/":
			f = func(cur, prev []float64) float64 { return a(cur, prev) / b(cur, prev) }
		case "%":
			f = func(cur, prev []float64) float64 { return math.Mod(a(cur, prev), b(cur, prev)) }
		default:
			return vnode{}, fmt.Errorf("no branch distance through %q", x.Operator)
		}
		return vnode{val: f}, nil
	}
	return vnode{}, fmt.Errorf("no branch distance for %T", n)
}

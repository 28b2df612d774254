package corpus

import (
	"slices"

	"github.com/expr-lang/expr/ast"

	"github.com/actfuzz/actfuzz/netenv"
)

// A compiled expression runs in expr-lang's VM, which reads its
// variables from maps: every variable that changed is boxed and written
// before each run. Most conditions, the oracles' all, are arithmetic and
// comparisons over state variables, which a tree of Go closures over the
// observation vectors evaluates without either: fastCompiler builds that
// tree for the expressions it can say exactly, and the VM keeps the rest.
// Both see the same AST, type-checked by expr.Compile, so they agree
// (TestFastEvalAgrees, TestOraclesAgree). An Evaluator compiles each
// condition's tree again for each categorical state it meets, where the
// state's tests are constants (dispatch.go).

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
	fc := fastCompiler{schema: schema}
	t, ok := fc.compile(n)
	if !ok {
		return nil
	}
	return t.node()
}

// fastCompiler builds closure trees over one schema. With key set, the
// categorical tests of the variables a dispatch key holds are constants
// (dispatch.go): a plan's trees keep only what its key leaves open, and
// && and || drop the operands that the key decides.
type fastCompiler struct {
	schema Schema
	// key is the slot of a keyed variable under one key and its number
	// of categories (keyVar.slot); ok false for a variable the key does
	// not hold.
	key func(kind, idx int) (slot, n int, ok bool)
	// win, when set, are the windows of the evaluator the trees are
	// for: a tree looks them up as it reads them (rttWindows.resolve).
	win *rttWindows
}

// fastTree is a compiled subexpression: a constant (f nil), or a tree of
// closures, which reads one variable alone when kind ≥ 0 (the shapes of
// fastops.go read such an operand, and constants, without a call).
type fastTree struct {
	f         fastNode
	c         float64
	kind, idx int
	// cmp, when set, is the tree as a comparison of two leaves, which a
	// sieve evaluates without a call (fastAtom).
	cmp *fastCmp
}

func constTree(c float64) fastTree { return fastTree{c: c, kind: -1} }

func (t fastTree) isConst() bool { return t.f == nil }

// node is the tree as a closure, a constant's too.
func (t fastTree) node() fastNode {
	if t.f != nil {
		return t.f
	}
	c := t.c
	return func(*fastVals) float64 { return c }
}

// leaf is the tree as an operand of fastops.go's shapes, if it is one.
func (t fastTree) leaf() (fastLeaf, bool) {
	switch {
	case t.f == nil:
		return fastLeaf{kind: -1, c: t.c}, true
	case t.kind >= 0:
		return fastLeaf{kind: t.kind, idx: t.idx}, true
	}
	return fastLeaf{}, false
}

// compile compiles n; false when it holds something the closures do not
// evaluate.
func (fc *fastCompiler) compile(n ast.Node) (fastTree, bool) {
	switch v := n.(type) {
	case *ast.IntegerNode:
		return constTree(float64(v.Value)), true
	case *ast.FloatNode:
		return constTree(v.Value), true
	case *ast.BoolNode:
		return constTree(b2f(v.Value)), true
	case *ast.ConstantNode:
		c, ok := number(v.Value)
		return constTree(c), ok
	case *ast.IdentifierNode, *ast.MemberNode:
		kind, i, _ := operand(n, fc.schema)
		if kind < 0 {
			return fastTree{}, false
		}
		if w := fc.win; w != nil && (kind == opAgo || kind == opMax) {
			// Looked up when read: most records never get this far.
			vals := w.agoVals
			if kind == opMax {
				vals = w.maxVals
			}
			return fastTree{f: func(*fastVals) float64 { w.resolve(); return vals[i] }, kind: -1}, true
		}
		return fastTree{f: func(vs *fastVals) float64 { return vs[kind][i] }, kind: kind, idx: i}, true
	case *ast.UnaryNode:
		return fc.unary(v)
	case *ast.BinaryNode:
		return fc.binary(v)
	case *ast.BuiltinNode:
		return fc.call(v.Name, v.Arguments)
	case *ast.CallNode:
		if id, ok := v.Callee.(*ast.IdentifierNode); ok {
			return fc.call(id.Value, v.Arguments)
		}
	}
	return fastTree{}, false
}

func (fc *fastCompiler) unary(v *ast.UnaryNode) (fastTree, bool) {
	x, ok := fc.compile(v.Node)
	if !ok {
		return x, false
	}
	switch v.Operator {
	case "-":
		if x.isConst() {
			return constTree(-x.c), true
		}
		f := x.f
		return fastTree{f: func(vs *fastVals) float64 { return -f(vs) }, kind: -1}, true
	case "+":
		return x, true
	case "!", "not":
		if x.isConst() {
			return constTree(b2f(x.c == 0)), true
		}
		f := x.f
		return fastTree{f: func(vs *fastVals) float64 { return b2f(f(vs) == 0) }, kind: -1}, true
	}
	return fastTree{}, false
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

func (fc *fastCompiler) binary(v *ast.BinaryNode) (fastTree, bool) {
	// A categorical variable against a name, or a list of names: the
	// names become category indices.
	if kind, i, cats := operand(v.Left, fc.schema); kind >= 0 && cats != nil {
		return fc.categorical(v, kind, i, cats)
	}
	switch v.Operator {
	case "&&", "and":
		return fc.chain(conjuncts(v), true)
	case "||", "or":
		return fc.chain(disjuncts(v), false)
	}
	l, ok1 := fc.compile(v.Left)
	r, ok2 := fc.compile(v.Right)
	if !ok1 || !ok2 {
		return fastTree{}, false
	}
	return fastOp(v.Operator, l, r)
}

// chain is a chain of && (and true) or of || run as one loop over its
// operands, which stops at the first that decides it: one call per
// operand instead of a nest of them. The operands are booleans (expr-lang
// checks them), 0 or 1, without side effects or errors: an operand the
// key decides either decides the chain or drops out of it.
func (fc *fastCompiler) chain(parts []ast.Node, and bool) (fastTree, bool) {
	decides := 0.0 // the value of an operand that decides the chain
	if !and {
		decides = 1
	}
	var fs []fastNode
	for _, part := range parts {
		t, ok := fc.compile(part)
		if !ok {
			return fastTree{}, false
		}
		switch {
		case !t.isConst():
			fs = append(fs, t.f)
		case t.c == decides:
			// Checked whole (every operand compiles) before it
			// decides, so that a key never makes fast what is not.
			return fc.decided(parts, decides)
		}
	}
	switch len(fs) {
	case 0:
		return constTree(1 - decides), true
	case 1:
		return fastTree{f: fs[0], kind: -1}, true
	}
	if and {
		return fastTree{f: func(vs *fastVals) float64 {
			for _, f := range fs {
				if f(vs) == 0 {
					return 0
				}
			}
			return 1
		}, kind: -1}, true
	}
	return fastTree{f: func(vs *fastVals) float64 {
		for _, f := range fs {
			if f(vs) != 0 {
				return 1
			}
		}
		return 0
	}, kind: -1}, true
}

// decided is a chain one of whose operands the key decides: that value,
// if every operand compiles.
func (fc *fastCompiler) decided(parts []ast.Node, c float64) (fastTree, bool) {
	for _, part := range parts {
		if _, ok := fc.compile(part); !ok {
			return fastTree{}, false
		}
	}
	return constTree(c), true
}

// dnf is n compiled as a disjunction of conjunctions of closure trees,
// from its top-level chains of || and of && (a chain inside another
// operator is one tree): the operands the key makes false leave their
// conjunction out, those it makes true leave their conjunction. n
// compiles (the caller compiled it before).
func (fc *fastCompiler) dnf(n ast.Node) [][]fastAtom {
	var out [][]fastAtom
	for _, d := range disjuncts(n) {
		var p []fastAtom
		never := false
		for _, c := range conjuncts(d) {
			t, _ := fc.compile(c)
			switch {
			case t.cmp != nil:
				p = append(p, fastAtom{cmp: *t.cmp})
			case !t.isConst():
				p = append(p, fastAtom{f: t.f})
			case t.c == 0:
				never = true
			}
		}
		if !never {
			out = append(out, p)
		}
	}
	return out
}

// disjuncts flattens a chain of || (or or) into its operands.
func disjuncts(n ast.Node) []ast.Node {
	if b, ok := n.(*ast.BinaryNode); ok && (b.Operator == "||" || b.Operator == "or") {
		return append(disjuncts(b.Left), disjuncts(b.Right)...)
	}
	return []ast.Node{n}
}

// categorical is x == "name", x != "name" or x in ["a", "b"] for a
// categorical variable x: a constant when the key holds x. A name that
// is not one of x's categories never matches, as in the VM, where x is
// then some other string.
func (fc *fastCompiler) categorical(v *ast.BinaryNode, kind, i int, cats []string) (fastTree, bool) {
	set, negate, ok := categorySet(v, cats)
	if !ok {
		return fastTree{}, false
	}
	g := gate{kind: kind, idx: i, set: set, negate: negate}
	if fc.key != nil {
		if slot, n, ok := fc.key(kind, i); ok {
			return constTree(b2f(g.passSlot(slot, n))), true
		}
	}
	return fastTree{f: func(vs *fastVals) float64 { return b2f(g.pass(vs[kind])) }, kind: -1}, true
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
		k := slices.Index(cats, n)
		if k >= 64 {
			// Beyond the set's bits: the VM says it.
			return 0, false, false
		}
		if k >= 0 {
			set |= 1 << k
		}
	}
	return set, v.Operator == "!=", true
}

// A gate is a categorical test of the current or previous record (ca_state
// == "recovery", prev.reason in ["ack", "sack"]) that an expression's
// chain of && requires. Most oracles start with one, and on most records
// it fails: the dispatch key decides the gates (and, in a closure tree,
// every categorical test of the record), so that a condition whose gate
// fails is not even looked at, and Evaluator.holds tests those of a
// condition the VM runs that the key does not hold.
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

// passSlot is pass for a value in key slot s of a variable of n
// categories (keyVar.slot): slot n, any other value, is in no set.
func (g gate) passSlot(s, n int) bool {
	in := s < n && g.set&(1<<s) != 0
	return in != g.negate
}

// gateOf is the gate that an operand of a chain of && is, if it is one.
func gateOf(part ast.Node, schema Schema) (gate, bool) {
	b, ok := part.(*ast.BinaryNode)
	if !ok {
		return gate{}, false
	}
	kind, i, cats := operand(b.Left, schema)
	if (kind != opCur && kind != opPrev) || cats == nil {
		return gate{}, false
	}
	set, negate, ok := categorySet(b, cats)
	return gate{kind: kind, idx: i, set: set, negate: negate}, ok
}

// gatesOf lists the gates among the operands of n's chain of &&; all
// says whether they are every operand (the gates decide the expression).
func gatesOf(n ast.Node, schema Schema) (gates []gate, all bool) {
	parts := conjuncts(n)
	for _, part := range parts {
		if g, ok := gateOf(part, schema); ok {
			gates = append(gates, g)
		}
	}
	return gates, len(gates) == len(parts)
}

// categoricalTests lists the categorical tests of the current or
// previous record anywhere in n (ca_state == "open" || cwnd < 1 holds
// one): those that a dispatch key decides.
func categoricalTests(n ast.Node, schema Schema) []gate {
	var out []gate
	ast.Find(n, func(n ast.Node) bool {
		b, ok := n.(*ast.BinaryNode)
		if !ok {
			return false
		}
		if g, ok := gateOf(b, schema); ok {
			out = append(out, g)
		}
		return false
	})
	return out
}

// fastResidual is the closure tree of n's operands that are not gates:
// what is left to evaluate once the gates passed (Evaluator.holds tests
// them first, and the VM is not needed to say the rest, which has no
// side effect or error, in any order). Nil when an operand has no closure
// tree, or when every operand is a gate.
func fastResidual(n ast.Node, schema Schema) fastNode {
	var rest []ast.Node
	for _, part := range conjuncts(n) {
		if _, ok := gateOf(part, schema); !ok {
			rest = append(rest, part)
		}
	}
	if len(rest) == 0 {
		return nil
	}
	fc := fastCompiler{schema: schema}
	t, ok := fc.chain(rest, true)
	if !ok {
		return nil
	}
	return t.node()
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

package corpus

//go:generate go run ./gen

import (
	"math"

	"github.com/expr-lang/expr/ast"
)

// The arithmetic and comparisons of a closure tree. Most operands of the
// oracles' are a variable or a constant (cwnd > prev.cwnd, x / 2 + 2):
// shapeOp (fastops_gen.go, go generate) has a closure for each operator
// and each shape of its operands, which reads a variable or constant
// operand itself, saving a call per leaf and a switch per operator. Each
// computes the same operation on the same values as expr-lang's VM
// (TestFastEvalAgrees): only calls are saved.

// fastLeaf is an operand read without a call: vs[kind][idx], or the
// constant c when kind < 0 (max and min read their arguments so).
type fastLeaf struct {
	kind, idx int
	c         float64
}

func (l *fastLeaf) load(vs *fastVals) float64 {
	if l.kind < 0 {
		return l.c
	}
	return vs[l.kind][l.idx]
}

// binOp is an arithmetic or comparison operator.
type binOp uint8

const (
	opAdd binOp = iota
	opSub
	opMul
	opDiv
	opPow
	opLT
	opLE
	opGT
	opGE
	opEQ
	opNE
)

// binOpOf is the operator an expression names.
func binOpOf(name string) (binOp, bool) {
	for op, n := range [...]string{"+", "-", "*", "/", "**", "<", "<=", ">", ">=", "==", "!="} {
		if n == name {
			return binOp(op), true
		}
	}
	if name == "^" {
		return opPow, true
	}
	return 0, false
}

// apply is a op b, for constants (fastOp folds them).
func apply(op binOp, a, b float64) float64 {
	switch op {
	case opAdd:
		return a + b
	case opSub:
		return a - b
	case opMul:
		return a * b
	case opDiv:
		return a / b
	case opPow:
		return math.Pow(a, b)
	case opLT:
		return b2f(a < b)
	case opLE:
		return b2f(a <= b)
	case opGT:
		return b2f(a > b)
	case opGE:
		return b2f(a >= b)
	case opEQ:
		return b2f(a == b)
	}
	return b2f(a != b)
}

// fastOp is l op r: a constant when both are.
func fastOp(name string, l, r fastTree) (fastTree, bool) {
	op, ok := binOpOf(name)
	if !ok {
		return fastTree{}, false
	}
	if l.isConst() && r.isConst() {
		return constTree(apply(op, l.c, r.c)), true
	}
	if op == opPow {
		lf, rf := l.node(), r.node()
		return fastTree{f: func(vs *fastVals) float64 { return math.Pow(lf(vs), rf(vs)) }, kind: -1}, true
	}
	t := fastTree{f: shapeOp(op, l, r), kind: -1}
	a, aLeaf := l.leaf()
	b, bLeaf := r.leaf()
	if op >= opLT && aLeaf && bLeaf {
		t.cmp = &fastCmp{op: op, a: a, b: b}
	}
	return t, true
}

// fastCmp is a comparison of two leaves.
type fastCmp struct {
	op   binOp
	a, b fastLeaf
}

// fastAtom is an operand of a sieve's products: a comparison of leaves
// (f nil), which the sieve's loop evaluates itself, or a closure tree.
type fastAtom struct {
	f   fastNode
	cmp fastCmp
}

// holds says whether x c.op y: inlined in the sieve's loop.
func (c *fastCmp) holds(x, y float64) bool {
	switch c.op {
	case opLT:
		return x < y
	case opLE:
		return x <= y
	case opGT:
		return x > y
	case opGE:
		return x >= y
	case opEQ:
		return x == y
	}
	return x != y
}

// call is abs, floor, ceil, max or min.
func (fc *fastCompiler) call(name string, args []ast.Node) (fastTree, bool) {
	ts := make([]fastTree, len(args))
	allConst := true
	for k, a := range args {
		var ok bool
		if ts[k], ok = fc.compile(a); !ok {
			return fastTree{}, false
		}
		allConst = allConst && ts[k].isConst()
	}
	var f fastNode
	switch name {
	case "abs", "floor", "ceil":
		if len(ts) != 1 {
			return fastTree{}, false
		}
		f = one(name, ts[0])
	case "max", "min":
		if len(ts) == 0 {
			return fastTree{}, false
		}
		f = fold(ts, name == "max")
	default:
		return fastTree{}, false
	}
	if allConst {
		return constTree(f(nil)), true
	}
	return fastTree{f: f, kind: -1}, true
}

// one is a function of one argument, which is read in its closure when it
// is a leaf.
func one(name string, t fastTree) fastNode {
	fn := math.Abs
	switch name {
	case "floor":
		fn = math.Floor
	case "ceil":
		fn = math.Ceil
	}
	if a, ok := t.leaf(); ok {
		return func(vs *fastVals) float64 { return fn(a.load(vs)) }
	}
	x := t.f
	return func(vs *fastVals) float64 { return fn(x(vs)) }
}

// fold is max (or min): the first argument unless a later one is larger
// (smaller), as expr-lang's builtins compare them.
func fold(ts []fastTree, larger bool) fastNode {
	leaves := make([]fastLeaf, len(ts))
	allLeaves := true
	for k, t := range ts {
		var ok bool
		leaves[k], ok = t.leaf()
		allLeaves = allLeaves && ok
	}
	if allLeaves && larger {
		return func(vs *fastVals) float64 {
			out := leaves[0].load(vs)
			for k := 1; k < len(leaves); k++ {
				if y := leaves[k].load(vs); y > out {
					out = y
				}
			}
			return out
		}
	}
	if allLeaves {
		return func(vs *fastVals) float64 {
			out := leaves[0].load(vs)
			for k := 1; k < len(leaves); k++ {
				if y := leaves[k].load(vs); y < out {
					out = y
				}
			}
			return out
		}
	}
	replaces := func(a, b float64) bool { return b < a }
	if larger {
		replaces = func(a, b float64) bool { return b > a }
	}
	fs := make([]fastNode, len(ts))
	for k, t := range ts {
		fs[k] = t.node()
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

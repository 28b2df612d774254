// Package exprcheck bounds what one evaluation of a condition's expr-lang
// expression can cost, before it ever runs.
//
// A condition is evaluated at every state record of every flow, and a
// campaign file or a seed can come from anyone. expr-lang's own limits do
// not bound a run: its memory budget counts ranges and array literals but
// not loops over a range bound once by let, nor strings that let doubles
// (let a = x + x; let b = a + a; …), nor split or replace, and its VM has
// no step budget or deadline, so one evaluation could run for hours
// without returning to the simulator, which alone checks for Ctrl-C.
// Conditions read one record's scalars, so nothing useful needs loops,
// let bindings, ranges or string builders: Check refuses them, and every
// other construct costs at most linear time in the expression's size,
// which MaxBytes and MaxNodes cap. BenchmarkWorstCase measures the most
// expensive expression Check admits.
//
// What is left for run time (a type error: prev.ca_state > 1, or the
// memory budget in case a construct admitted here is ever charged more
// than it is today) is an error of Run, which a campaign records as a
// condition-fault finding naming the condition.
package exprcheck

import (
	"fmt"
	"slices"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/conf"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/vm"
)

// The caps, by the names errors give them (docs/limits.md).
const (
	// MaxBytes (max_expr_bytes) caps an expression's length: the
	// longest oracle has 271 bytes with its placeholders filled
	// (oracle's TestOraclesWithinBudget).
	MaxBytes = 4096
	// MaxNodes (max_expr_nodes) caps its syntax tree: the largest
	// oracle has 55 nodes. The cost of the worst expression admitted
	// grows with the square of its nodes (BenchmarkWorstCase).
	MaxNodes = 500
	// MemoryBudget (max_expr_memory) is expr-lang's allocation budget of
	// one evaluation, in its units (array and map elements). What Check
	// admits allocates at most one unit a node; the budget is there so
	// that a construct charged more by a later expr-lang still fails as
	// a condition fault rather than growing.
	MemoryBudget = 1 << 16
)

// Allowed are the builtin functions a condition may call: each costs time
// linear in its arguments' size and returns a result no larger. The rest
// loop (all, filter, map, reduce, …: they take closures, refused anyway),
// build strings or arrays larger than their arguments (repeat, replace,
// split, join, concat, flatten, toJSON, …) or read the clock (now, date,
// duration), which a replay would not see again.
var Allowed = []string{
	"abs", "bitand", "bitnand", "bitnot", "bitor", "bitshl", "bitshr", "bitushr", "bitxor",
	"ceil", "float", "floor", "hasPrefix", "hasSuffix", "int", "len", "lower", "max", "mean",
	"median", "min", "round", "trim", "trimPrefix", "trimSuffix", "upper",
}

// CapError is a cap that an expression exceeds: Cap names it.
type CapError struct {
	Cap   string // max_expr_bytes, max_expr_nodes
	Limit int
	Got   string // what was measured, in words
}

func (e *CapError) Error() string {
	return fmt.Sprintf("%s, over the cap of %d (%s)", e.Got, e.Limit, e.Cap)
}

// Check parses src and refuses what has no bound on its cost; errors give
// the position (line:column) of the refused construct.
func Check(src string) error {
	if len(src) > MaxBytes {
		return &CapError{Cap: "max_expr_bytes", Limit: MaxBytes, Got: fmt.Sprintf("%d bytes", len(src))}
	}
	cfg := conf.CreateNew()
	cfg.MaxNodes = MaxNodes
	tree, err := parser.ParseWithConfig(src, cfg)
	if err != nil {
		if strings.Contains(err.Error(), "exceeds maximum allowed nodes") {
			return &CapError{Cap: "max_expr_nodes", Limit: MaxNodes, Got: "more nodes"}
		}
		return err
	}
	v := &visitor{}
	ast.Walk(&tree.Node, v)
	if v.bad != nil {
		line, col := position(src, v.bad.Location())
		return fmt.Errorf("%d:%d: %s", line, col, v.why)
	}
	return nil
}

// Options are expr.Compile's options that go with Check.
func Options() []expr.Option { return []expr.Option{expr.MaxNodes(MaxNodes)} }

// Run evaluates a compiled program under MemoryBudget.
func Run(prog *vm.Program, env any) (any, error) {
	m := vm.VM{MemoryBudget: MemoryBudget}
	return m.Run(prog, env)
}

type visitor struct {
	bad ast.Node
	why string
}

// refuse keeps the refused construct that comes first in the source (a
// walk visits a call's closure before the call, whose name says more).
func (v *visitor) refuse(n ast.Node, format string, a ...any) {
	if v.bad == nil || n.Location().From < v.bad.Location().From {
		v.bad, v.why = n, fmt.Sprintf(format, a...)
	}
}

func (v *visitor) Visit(np *ast.Node) {
	switch n := (*np).(type) {
	case *ast.PredicateNode, *ast.PointerNode:
		v.refuse(n, "loops over collections (closures, #) are not allowed in a condition: it reads one record's values")
	case *ast.VariableDeclaratorNode:
		v.refuse(n, "let %s: bindings are not allowed in a condition (write the expression where it is used)", n.Name)
	case *ast.BuiltinNode:
		if !slices.Contains(Allowed, n.Name) {
			v.refuse(n, "%s(…) is not allowed in a condition (allowed: %s)", n.Name, strings.Join(Allowed, ", "))
		}
	case *ast.CallNode:
		v.refuse(n, "%s(…): not a function a condition can call (allowed: %s)", callee(n), strings.Join(Allowed, ", "))
	case *ast.BinaryNode:
		switch {
		case n.Operator == "..":
			v.refuse(n, "ranges (a..b) are not allowed in a condition: write a <= x && x <= b")
		case n.Operator == "matches":
			// A regular expression's match costs its program's size
			// times the string's, and the string can be built from
			// the record's values: compare with == or in [...].
			v.refuse(n, "matches: regular expressions are not allowed in a condition (compare with == or in [...])")
		}
	case *ast.IdentifierNode:
		if n.Value == "$env" {
			v.refuse(n, "$env: read variables by name (cwnd, prev.cwnd, p.bw)")
		}
	}
}

func callee(n *ast.CallNode) string {
	if id, ok := n.Callee.(*ast.IdentifierNode); ok {
		return id.Value
	}
	return "call"
}

// position is the 1-based line and column (in characters) of a node.
func position(src string, loc file.Location) (int, int) {
	line, col := 1, 1
	i := 0
	for _, r := range src {
		if i >= loc.From {
			break
		}
		i++
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

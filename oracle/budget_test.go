package oracle

import (
	"testing"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"

	"github.com/actfuzz/actfuzz/internal/exprcheck"
)

// Oracles run under the conditions' cost budget (internal/exprcheck) like
// any condition, with their placeholders filled for every subject's records;
// the largest stays far below the caps, which leaves users room.
func TestOraclesWithinBudget(t *testing.T) {
	maxBytes, maxNodes := 0, 0
	for _, o := range Library() {
		for _, subject := range []string{"native", "linux", "ns3", "gvisor"} {
			for _, src := range []string{o.Spec.When, o.Spec.While} {
				if src == "" {
					continue
				}
				src = fill(src, 0.7, subject)
				if err := exprcheck.Check(src); err != nil {
					t.Fatalf("%s: %v", o.Name, err)
				}
				tree, err := parser.Parse(src)
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				ast.Find(tree.Node, func(ast.Node) bool { n++; return false })
				maxBytes, maxNodes = max(maxBytes, len(src)), max(maxNodes, n)
			}
		}
	}
	if maxBytes*4 > exprcheck.MaxBytes || maxNodes*4 > exprcheck.MaxNodes {
		t.Errorf("the largest oracle has %d bytes and %d nodes: less than 4 times under the caps (%d, %d)", maxBytes, maxNodes, exprcheck.MaxBytes, exprcheck.MaxNodes)
	}
	t.Logf("largest oracle: %d bytes, %d nodes", maxBytes, maxNodes)
}

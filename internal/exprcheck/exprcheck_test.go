package exprcheck

import (
	"errors"
	"strings"
	"testing"

	"github.com/expr-lang/expr"
)

// Check admits what a condition needs and refuses, at parse time and
// with a position, every construct whose cost has no bound: the hostile
// expressions of issue 48 among them.
func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name, src, err string
	}{
		{"comparison", `cwnd > 1e7`, ""},
		{"oracle-like", `ca_state in ["recovery", "cwr"] && abs(ssthresh - max(floor(0.7 * prior_cwnd), 2)) > 1 + 0.001 * prior_cwnd`, ""},
		{"members and params", `prev.ca_state == "recovery" && cwnd > 4 * p.bw * 1e6 / 8 / 1448 * 2 * p.delay / 1000`, ""},
		{"ternary, nil-coalescing, strings", `(prev.cwnd ?? 0) > 2 ? hasPrefix(lower(reason), "ac") : len(upper(ca_state)) > 3`, ""},
		{"string operators", `reason startsWith "ac" || ca_state contains "ov" || reason endsWith "k"`, ""},
		{"regexp", `reason matches "^a.k$"`, "1:8: matches: regular expressions are not allowed"},
		{"issue 48: nested map over ranges", `len(map(1..999, map(1..999, string(#)))) < 0`, "1:5: map(…) is not allowed"},
		{"issue 48: repeat", `len(repeat("x", 999999) + repeat("y", 999999)) < 0`, "1:5: repeat(…) is not allowed"},
		{"let doubling", `let a = reason + reason; let b = a + a; len(b) > 0`, "1:5: let a: bindings are not allowed"},
		{"loop over a bound range", `count(1..10, # > 5) > 0`, "1:1: count(…) is not allowed"},
		{"range", `cwnd in 1..100`, "1:10: ranges (a..b) are not allowed"},
		{"pointer alone", `# > 1`, "unexpected token"},
		{"replace grows", `len(replace(reason, "", reason)) > 0`, "replace(…) is not allowed"},
		{"clock", `now().Unix() > 0`, "now(…) is not allowed"},
		{"whole environment", `len($env) > 0`, "1:5: $env: read variables by name"},
		{"unknown function", `system("rm -rf /") == 0`, "system(…): not a function"},
		{"second line", "cwnd > 1 &&\n  filter([1], true) == []", "2:3: filter(…) is not allowed"},
		{"syntax", `cwnd >`, "unexpected token"},
		{"bytes capped", strings.Repeat("1+", MaxBytes/2) + "1 > 0", "over the cap of 4096 (max_expr_bytes)"},
		{"nodes capped", strings.Repeat("-", 600) + "1 > 0", "over the cap of 500 (max_expr_nodes)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(tc.src)
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("error %v, want %q", err, tc.err)
			}
			var ce *CapError
			if strings.Contains(tc.err, "(max_") && !errors.As(err, &ce) {
				t.Errorf("%v is not a *CapError", err)
			}
		})
	}
}

// What Check admits compiles with Options and runs under the memory
// budget; a type error the checker cannot see is Run's error.
func TestRun(t *testing.T) {
	env := map[string]any{"cwnd": 3.0, "prev": map[string]any{"ca_state": "open"}}
	for _, tc := range []struct {
		src  string
		want bool
		err  string
	}{
		{`cwnd > 2`, true, ""},
		{`(prev.ca_state ?? 0) > 1`, false, "invalid operation: string > int"},
	} {
		if err := Check(tc.src); err != nil {
			t.Fatal(err)
		}
		prog, err := expr.Compile(tc.src, append([]expr.Option{expr.Env(env), expr.AsBool()}, Options()...)...)
		if err != nil {
			t.Fatal(err)
		}
		out, err := Run(prog, env)
		switch {
		case tc.err == "" && (err != nil || out != tc.want):
			t.Errorf("%s: %v, %v", tc.src, out, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want %q", tc.src, err, tc.err)
		}
	}
}

// worstCases are the most expensive expressions Check admits that this
// benchmark knows of, each at the caps: every + of strings copies what
// came before, so a chain of the record's string values is quadratic in
// its length (the cheapest term, +reason, gives the most terms); calls
// copy their argument; an array literal is charged to the memory budget
// and scanned by max.
func worstCases(tb testing.TB) map[string]string {
	chain := func(term string, maxNodes int) string {
		var b strings.Builder
		b.WriteString("len(reason")
		for n := 3; n+2 <= maxNodes && b.Len()+len(term)+24 < MaxBytes; n += 2 {
			b.WriteString(term)
		}
		b.WriteString(") > 0")
		return b.String()
	}
	calls := "len(" + strings.Repeat("upper(lower(", MaxNodes/2-5) + "reason" + strings.Repeat("))", MaxNodes/2-5) + ") > 0"
	array := "max([" + strings.Repeat("cwnd,", MaxNodes-10) + "cwnd]) > 0"
	out := map[string]string{"concat": chain("+reason", MaxNodes-8), "calls": calls, "array": array}
	for name, src := range out {
		if err := Check(src); err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
	}
	return out
}

// BenchmarkWorstCase measures one evaluation of each of worstCases: the
// bound on what a condition admitted by Check costs at a record.
func BenchmarkWorstCase(b *testing.B) {
	env := map[string]any{"cwnd": 3.0, "reason": "ack"}
	for name, src := range worstCases(b) {
		b.Run(name, func(b *testing.B) {
			prog, err := expr.Compile(src, append([]expr.Option{expr.Env(env), expr.AsBool()}, Options()...)...)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Run(prog, env); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

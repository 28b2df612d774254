package corpus

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/actfuzz/actfuzz/netenv"
)

// TestFastEvalAgrees runs conditions of every shape the closure trees,
// the gates and the dispatch key take (fasteval.go, fastops.go,
// dispatch.go) on random records, once as compiled and once with all of
// them turned off (expr-lang's VM alone: VMOnly), and wants the same hits
// at the same records: the fast path is an optimisation, never a second
// meaning.
func TestFastEvalAgrees(t *testing.T) {
	specs := []ConditionSpec{
		// First, so that the key holds their variables, and then has no
		// room for prev_ca_state (maxKeys): those tests stay in the trees,
		// and a VM condition's gate on it is tested at evaluation.
		{Name: "key-vars", When: `ca_state != "open" && prev.ca_state == "open" && reason != "ack" && prev.reason == "ack" || cwnd > 45`},
		{Name: "unkeyed", When: `prev_ca_state in ["recovery", "loss"] && prev.prev_ca_state != "open" && cwnd > 5`},
		{Name: "vm-partial", When: `prev_ca_state == "cwr" && ca_state == "open" && len(upper(reason)) > 2 && cwnd > 3`},
		{Name: "compare-const", When: `cwnd < 10`},
		{Name: "compare-vars", When: `cwnd >= ssthresh`},
		{Name: "arith", When: `cwnd * 1448 - in_flight / 2 + 3 > ssthresh ** 1`},
		{Name: "gate-eq", When: `ca_state == "recovery" && cwnd > prev.cwnd`},
		{Name: "gate-ne", When: `ca_state != "open" && cwnd < 20`},
		{Name: "gate-in-prev", When: `prev.ca_state in ["recovery", "cwr"] && ca_state in ["open", "disorder"] && cwnd > 5`},
		{Name: "only-gates", When: `ca_state == "loss" && prev.ca_state != "loss"`},
		{Name: "unknown-name", When: `ca_state == "no-such-state" || cwnd > 40`},
		{Name: "or-chain", When: `cwnd < 2 || ssthresh < 3 || in_flight > 45 && ca_state in ["loss"]`},
		{Name: "calls", When: `abs(cwnd - max(ssthresh, 2, in_flight)) > floor(0.3 * ceil(prior_cwnd)) && min(cwnd, 4) < 4`},
		{Name: "not", When: `!(cwnd > 20) and not (in_flight < 3)`},
		{Name: "params", When: `p.link_trace == "none" && cwnd > p.bw / 2`},
		{Name: "windows", When: `reason == "ack" && 2 * (max(rtt_max.in_flight, delivered - rtt_ago.delivered) + 4) < prev.cwnd`},
		{Name: "held", When: `prev.ca_state == "recovery" && ca_state == "open" && held.ca_state < 0.05 || held.cwnd > 0.02`},
		{Name: "stretch-while", While: `ca_state == "open"`, For: "3rtt", When: `cwnd - first.cwnd > 3`},
		{Name: "stretch-gated", While: `ca_state == "open" && cwnd >= ssthresh && reason != "state"`, For: "1ns", When: `cwnd - first.cwnd > (delivered - first.delivered) / 2 + 2`},
		{Name: "stretch-when", When: `ca_state in ["recovery"] && cwnd < 30`, For: "50ms"},
		{Name: "stretch-duration", While: `ca_state == "open" && in_flight > 10`, For: "40ms", When: `cwnd > first.cwnd`},
		{Name: "vm-only", When: `ca_state == "open" && len(upper(reason)) > 3 && cwnd > 2`},
		// Categorical tests anywhere in the tree: the key decides them.
		{Name: "or-gate", When: `cwnd < 5 || ssthresh < 10 && ca_state in ["cwr", "recovery", "loss"]`},
		{Name: "not-gate", When: `!(ca_state == "open") && cwnd > 30`},
		{Name: "nested-gate", When: `(prev.ca_state == "open" || ca_state == "loss") && (cwnd > 25 || reason != "ack")`},
		{Name: "folded", When: `cwnd > 2 * 10 + 0 && max(1, 2) < ssthresh && -abs(-3) < 0`},
		{Name: "leaf-shapes", When: `1 + cwnd > ssthresh - 1 && 40 / (cwnd + 1) < in_flight * 1 && prev.cwnd != cwnd && 3 == floor(3.5)`},
		{Name: "first-cat", While: `cwnd > 5`, For: "20ms", When: `first.ca_state == "open" && ca_state != "open"`},
		{Name: "when-never", While: `ca_state in ["open", "loss"]`, For: "30ms", When: `ca_state == "loss" && cwnd > 1`},
		{Name: "pred-folds", While: `reason == "ack" || ca_state == "loss"`, For: "2rtt", When: `cwnd > prev.cwnd`},
	}
	schema := SchemaOf(netenv.NativeCapabilities(), "cubic")
	fast, err := Compile(specs, schema)
	if err != nil {
		t.Fatal(err)
	}
	slow, _ := CompileVM(specs, schema)
	VMOnly(slow)
	for _, c := range fast {
		if !strings.HasPrefix(c.Name, "vm-") && c.when.tree == nil {
			t.Errorf("%s: no closure tree (the test means to compare one)", c.Name)
		}
	}
	if g := fast[9].when; !g.onlyGates || len(g.gates) != 2 {
		t.Errorf("only-gates: gates %d, onlyGates %v; want 2, true", len(g.gates), g.onlyGates)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	env := netenv.DefaultEnv()
	ef, es := NewEvaluator(schema, fast), NewEvaluator(schema, slow)
	if len(ef.disp.vars) != 4 || !ef.disp.partial[2] {
		t.Errorf("the key holds %d variables (want 4), vm-partial is partial: %v (want true)", len(ef.disp.vars), ef.disp.partial[2])
	}
	ef.SetEnv(&env)
	es.SetEnv(&env)
	cur, prev := make([]float64, len(schema)), make([]float64, len(schema))
	ti, si := schema.Index("time"), schema.Index("srtt")
	hitsOf := map[string]int{}
	for n := range 20000 {
		if n%1000 == 999 {
			// New vectors: the evaluators must read these (setVals).
			cur, prev = slices.Clone(cur), slices.Clone(prev)
		}
		copy(prev, cur)
		for i, v := range schema {
			switch {
			case len(v.Values) > 0:
				// A state a flow stays in for a while, now and then one
				// the schema does not know, or NaN.
				if rng.IntN(8) == 0 {
					cur[i] = float64(rng.IntN(len(v.Values)))
				}
				if rng.IntN(50) == 0 {
					cur[i] = []float64{-1, float64(len(v.Values)), math.NaN(), 0.5}[rng.IntN(4)]
				}
			case rng.IntN(4) == 0:
				cur[i] = float64(rng.IntN(50))
			}
		}
		cur[ti] = float64(n) * 0.01
		cur[si] = 20 + float64(rng.IntN(20))
		if n == 0 {
			copy(prev, cur)
		}
		hf, err := ef.Eval(cur, prev, nil)
		if err != nil {
			t.Fatal(err)
		}
		hs, err := es.Eval(cur, prev, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !equalInts(hf, hs) {
			t.Fatalf("record %d: fast hits %v, VM hits %v", n, names(fast, hf), names(slow, hs))
		}
		for _, i := range hf {
			hitsOf[fast[i].Name]++
		}
	}
	// Each condition must both hold and fail somewhere, or the comparison
	// says nothing about it.
	for _, c := range fast {
		if h := hitsOf[c.Name]; h == 0 || h == 20000 {
			t.Errorf("%s held at %d of 20000 records: the test does not exercise it", c.Name, h)
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func names(conds []*Condition, idx []int) []string {
	var out []string
	for _, i := range idx {
		out = append(out, conds[i].Name)
	}
	return out
}

// TestFastEvalFaultsAgree: without the environment, a condition that
// reads p.X faults at the first record where its gates pass, compiled or
// not (GatedVM); the others go on.
func TestFastEvalFaultsAgree(t *testing.T) {
	specs := []ConditionSpec{
		{Name: "gated", When: `ca_state == "recovery" && cwnd > p.bw`},
		{Name: "nested", When: `(ca_state == "loss" || prev.ca_state == "cwr") && cwnd > p.bw`},
		{Name: "stretch", While: `ca_state == "open" && cwnd > 3`, For: "20ms", When: `(reason == "rto" || ca_state == "loss") && cwnd > p.delay`},
		{Name: "stretch-pred", While: `(ca_state == "disorder" || reason == "idle") && cwnd > p.bw`, For: "10ms", When: `cwnd > 1`},
		{Name: "plain", When: `cwnd > 10 && ca_state != "loss"`},
	}
	schema := SchemaOf(netenv.NativeCapabilities(), "reno")
	fast, err := Compile(specs, schema)
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := CompileVM(specs, schema)
	GatedVM(ref)
	faults := 0
	for run := range 20 {
		rng := rand.New(rand.NewPCG(uint64(run), 9))
		ef, er := NewEvaluator(schema, fast), NewEvaluator(schema, ref)
		cur, prev := make([]float64, len(schema)), make([]float64, len(schema))
		ti, ci, ri, wi := schema.Index("time"), schema.Index("ca_state"), schema.Index("reason"), schema.Index("cwnd")
		for n := range 300 {
			copy(prev, cur)
			cur[ti] = float64(n) * 0.005
			if rng.IntN(6) == 0 {
				cur[ci] = float64(rng.IntN(5))
			}
			cur[ri] = float64(rng.IntN(4))
			cur[wi] = float64(rng.IntN(20))
			hf, errF := ef.Eval(cur, prev, nil)
			hr, errR := er.Eval(cur, prev, nil)
			if !equalInts(hf, hr) || fmt.Sprint(errF) != fmt.Sprint(errR) {
				t.Fatalf("run %d, record %d: hits %v, fault %v; gated VM: %v, %v", run, n, hf, errF, hr, errR)
			}
			if errF != nil {
				faults++
			}
		}
	}
	if faults < 60 {
		t.Errorf("%d faults in 20 runs, want the 4 conditions that read p.X to fault in most", faults)
	}
}

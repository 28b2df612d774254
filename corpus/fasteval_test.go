package corpus

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/actfuzz/actfuzz/netenv"
)

// TestFastEvalAgrees runs conditions of every shape the closure tree and
// the gates take (fasteval.go) on random records, once as compiled and
// once with both turned off (expr-lang's VM alone), and wants the same
// hits at the same records: the fast path is an optimisation, never a
// second meaning.
func TestFastEvalAgrees(t *testing.T) {
	specs := []ConditionSpec{
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
		{Name: "vm-only", When: `ca_state == "open" && len(upper(reason)) > 3 && cwnd > 2`},
	}
	schema := SchemaOf(netenv.NativeCapabilities(), "cubic")
	fast, err := Compile(specs, schema)
	if err != nil {
		t.Fatal(err)
	}
	slow, _ := Compile(specs, schema)
	for _, c := range slow {
		for _, p := range []*condProg{&c.when, c.while} {
			if p != nil {
				p.fast, p.gates, p.onlyGates, p.conj = nil, nil, false, nil
			}
		}
	}
	for _, c := range fast {
		if c.Name != "vm-only" && c.when.fast == nil {
			t.Errorf("%s: no closure tree (the test means to compare one)", c.Name)
		}
	}
	if g := fast[6].when; !g.onlyGates || len(g.gates) != 2 {
		t.Errorf("only-gates: gates %d, onlyGates %v; want 2, true", len(g.gates), g.onlyGates)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	env := netenv.DefaultEnv()
	ef, es := NewEvaluator(schema, fast), NewEvaluator(schema, slow)
	ef.SetEnv(&env)
	es.SetEnv(&env)
	cur, prev := make([]float64, len(schema)), make([]float64, len(schema))
	ti, si := schema.Index("time"), schema.Index("srtt")
	hitsOf := map[string]int{}
	for n := range 20000 {
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

package corpus_test

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/oracle"
)

// flowRecord is one observation of a flow and the one before it.
type flowRecord struct {
	flow      int
	cur, prev []float64
}

// TestOraclesAgree evaluates the oracle library, every congestion control
// of the registry in pairs, once as compiled and once by expr-lang's VM
// alone (VMOnly), over the records of native simulations and over copies
// of them whose values are shaken so that the oracles hold now and then:
// the same hits at every record, the same faults (TestFastEvalAgrees does
// the same for shapes of conditions the library may not have yet).
func TestOraclesAgree(t *testing.T) {
	names := ccai.Names()
	caps := netenv.NativeCapabilities()
	hitsOf := map[string]int{}
	for k := 0; k < len(names); k += 2 {
		ccas := []string{names[k], names[(k+1)%len(names)]}
		env := netenv.DefaultEnv()
		env.Set(netenv.ParamIndex("loss"), []float64{1e-3, 1e-2}[k/2%2])
		env.Set(netenv.ParamIndex("bw"), []float64{10, 5, 50}[k/2%3])
		env.Set(netenv.ParamIndex("delay"), []float64{20, 50}[k/2%2])
		sched := netenv.Schedule{{Env: env}}
		recs, schemas := simRecords(t, caps, ccas, sched, 1<<20)
		specs, _ := oracle.Select(oracle.Choice{}, caps, ccas, ccai.ProfileLinux)
		rng := rand.New(rand.NewPCG(uint64(k), 7))
		for _, stream := range [][]flowRecord{recs, shaken(rng, recs, schemas)} {
			compareStream(t, ccas, schemas, specs, &env, stream, hitsOf)
		}
	}
	t.Logf("hits by oracle: %v", hitsOf)
	if len(hitsOf) < 12 {
		t.Errorf("%d oracles held anywhere: the comparison exercises too few", len(hitsOf))
	}
}

// simRecords runs a native simulation and returns its observations.
func simRecords(t *testing.T, caps netenv.Capabilities, ccas []string, sched netenv.Schedule, bytes uint64) ([]flowRecord, []corpus.Schema) {
	w, err := corpus.NewWatcherFor(caps, ccas, nil)
	if err != nil {
		t.Fatal(err)
	}
	var recs []flowRecord
	last := map[int][]float64{}
	w.OnObservation = func(f int, obs []float64, _ time.Duration) {
		c := slices.Clone(obs)
		p := last[f]
		if p == nil {
			p = c
		}
		recs = append(recs, flowRecord{f, c, p})
		last[f] = c
	}
	w.Start(sched)
	setup := netenv.Setup{CCAI: ccas, Topology: netenv.TopoSingleLink, SACK: true, Bytes: bytes}
	if _, err := netenv.Run(context.Background(), setup.Config(1, sched), w); err != nil {
		t.Fatal(err)
	}
	return recs, w.Schemas
}

// shaken is a copy of recs in which one record in five has some values
// changed: another category, 0, a value scaled up or down, a huge one;
// time and srtt keep their order and sign.
func shaken(rng *rand.Rand, recs []flowRecord, schemas []corpus.Schema) []flowRecord {
	out := make([]flowRecord, len(recs))
	last := map[int][]float64{}
	for i, r := range recs {
		c := slices.Clone(r.cur)
		if rng.IntN(5) == 0 {
			sc := schemas[r.flow]
			for range 1 + rng.IntN(4) {
				j := rng.IntN(len(sc))
				switch v := sc[j]; {
				case v.Name == "time" || v.Name == "srtt":
				case len(v.Values) > 0:
					c[j] = float64(rng.IntN(len(v.Values)))
				default:
					c[j] = []float64{0, c[j] * 2, c[j] / 3, c[j] + 5, 1e10, math.NaN()}[rng.IntN(6)]
				}
			}
		}
		p := last[r.flow]
		if p == nil {
			p = c
		}
		out[i] = flowRecord{r.flow, c, p}
		last[r.flow] = c
	}
	return out
}

// compareStream feeds stream to each flow's conditions, compiled and
// VM-only, and wants the same hits and faults at every record.
func compareStream(t *testing.T, ccas []string, schemas []corpus.Schema, specs []corpus.ConditionSpec, env *netenv.Env, stream []flowRecord, hitsOf map[string]int) {
	t.Helper()
	var fast, slow []*corpus.Evaluator
	var conds [][]*corpus.Condition
	for f, cca := range ccas {
		var mine []corpus.ConditionSpec
		for _, sp := range specs {
			if sp.AppliesTo(cca, cca) {
				mine = append(mine, sp)
			}
		}
		cf, err := corpus.Compile(mine, schemas[f])
		if err != nil {
			t.Fatalf("%s: %v", cca, err)
		}
		cs, _ := corpus.CompileVM(mine, schemas[f])
		corpus.VMOnly(cs)
		ef, es := corpus.NewEvaluator(schemas[f], cf), corpus.NewEvaluator(schemas[f], cs)
		ef.SetEnv(env)
		es.SetEnv(env)
		fast, slow, conds = append(fast, ef), append(slow, es), append(conds, cf)
	}
	for i, r := range stream {
		hf, errF := fast[r.flow].Eval(r.cur, r.prev, nil)
		hs, errS := slow[r.flow].Eval(r.cur, r.prev, nil)
		if !slices.Equal(hf, hs) || (errF == nil) != (errS == nil) {
			t.Fatalf("%v, record %d of flow %d: hits %v (fault %v), VM: %v (fault %v)", ccas, i, r.flow, hf, errF, hs, errS)
		}
		for _, ci := range hf {
			hitsOf[conds[r.flow][ci].Name]++
		}
	}
}

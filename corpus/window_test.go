package corpus

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/actfuzz/actfuzz/ccai"
)

// TestHeld: held.X is the length of the run of X's previous value, read
// on the record that ends it, and the run so far on any other.
func TestHeld(t *testing.T) {
	schema := SchemaFor("reno")
	conds, err := Compile([]ConditionSpec{
		{Name: "short-recovery", When: `prev.ca_state == "recovery" && ca_state != "recovery" && held.ca_state < 0.2`},
		{Name: "long-open", When: `prev.ca_state == "open" && ca_state == "open" && held.ca_state >= 0.3`},
	}, schema)
	if err != nil {
		t.Fatal(err)
	}
	e := NewEvaluator(schema, conds)
	ti, ci := schema.Index("time"), schema.Index("ca_state")
	open, recovery := float64(ccai.StateOpen), float64(ccai.StateRecovery)
	var prev []float64
	for _, tc := range []struct {
		time, state float64
		want        []int
	}{
		{0, open, nil},
		{0.1, open, nil},
		{0.3, open, []int{1}},  // open has held 0.3 s
		{0.35, recovery, nil},  // the open run that ended lasted 0.35 s, but this is recovery
		{0.5, recovery, nil},   // recovery so far: 0.15 s
		{0.52, open, []int{0}}, // recovery lasted 0.17 s < 0.2
		{0.6, recovery, nil},   // open held 0.08 s
		{0.9, open, nil},       // this recovery lasted 0.3 s
		{1.3, open, []int{1}},  // open since 0.9
	} {
		cur := make([]float64, len(schema))
		cur[ti], cur[ci] = tc.time, tc.state
		if prev == nil {
			prev = cur
		}
		hits, err := e.Eval(cur, prev, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !equalInts(hits, tc.want) {
			t.Errorf("t=%v state %v: hits %v, want %v", tc.time, tc.state, hits, tc.want)
		}
		prev = cur
	}
	// A new simulation starts every run afresh.
	e.Reset()
	cur := make([]float64, len(schema))
	cur[ti], cur[ci] = 5, open
	if hits, _ := e.Eval(cur, cur, nil); len(hits) != 0 {
		t.Errorf("first record after Reset: hits %v, want none (held is 0)", hits)
	}
}

// refAgo and refMax are the windows as first written (one list of changes
// per variable, binary searches): the reference TestWindowsAgree holds
// agoTable and maxWindow's look-ups from the last one to.
type refAgo struct {
	pts  []windowPoint
	head int
}

func (w *refAgo) push(t int64, v float64, srttNS int64) {
	if n := len(w.pts); n == w.head || !same(w.pts[n-1].v, v) {
		w.pts = append(w.pts, windowPoint{t, v})
	}
	for w.head+1 < len(w.pts) && w.pts[w.head+1].t <= t-2*srttNS {
		w.head++
	}
}

func (w *refAgo) at(t int64) float64 {
	live := w.pts[w.head:]
	i := sort.Search(len(live), func(i int) bool { return live[i].t > t })
	if i == 0 {
		return live[0].v
	}
	return live[i-1].v
}

type refMax struct {
	pts  []windowPoint
	head int
}

func (w *refMax) push(t int64, v float64, srttNS int64) {
	for len(w.pts) > w.head && w.pts[len(w.pts)-1].v <= v {
		w.pts = w.pts[:len(w.pts)-1]
	}
	w.pts = append(w.pts, windowPoint{t, v})
	for w.head < len(w.pts)-1 && w.pts[w.head].t < t-4*srttNS {
		w.head++
	}
}

func (w *refMax) max(t int64, srttNS int64) float64 {
	live := w.pts[w.head:]
	return live[sort.Search(len(live)-1, func(i int) bool { return live[i].t >= t-2*srttNS })].v
}

// TestWindowsAgree feeds random record streams to the windows and to the
// reference, and wants the same rtt_ago.X and rtt_max.X at every record:
// repeated values, records at the same time, srtt 0, srtt jumping up and
// down, NaN, look-ups skipped for a while (a gate failed), and streams
// long enough to compact.
func TestWindowsAgree(t *testing.T) {
	for _, tc := range []struct {
		name    string
		records int
		step    int64 // largest gap between records, ns
		values  int   // distinct values (few: long runs of one)
		srtts   []int64
	}{
		{"steady", 20000, 2e6, 40, []int64{20e6, 21e6, 22e6}},
		{"runs", 20000, 3e6, 3, []int64{40e6}},
		{"srtt-jumps", 20000, 5e6, 10, []int64{0, 1e6, 50e6, 400e6}},
		{"same-times", 5000, 2, 5, []int64{0, 1, 3}},
		{"no-sample", 500, 1e6, 8, []int64{0}},
		{"long-gaps", 3000, 2e9, 8, []int64{10e6, 300e6}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, uint64(tc.records)))
			idx := []int{0, 2, 3}
			a, mx := agoTable{k: len(idx)}, maxWindow{}
			refs := make([]refAgo, len(idx))
			var rm refMax
			cur := make([]float64, 4)
			var now int64
			for n := range tc.records {
				if n%997 == 0 {
					// A new simulation.
					a.reset()
					mx.reset()
					refs, rm = make([]refAgo, len(idx)), refMax{}
				}
				now += rng.Int64N(tc.step + 1)
				srtt := tc.srtts[rng.IntN(len(tc.srtts))]
				for i := range cur {
					if rng.IntN(3) == 0 {
						cur[i] = float64(rng.IntN(tc.values))
						if rng.IntN(100) == 0 {
							cur[i] = math.NaN()
						}
					}
				}
				a.push(now, now-2*srtt, cur, idx)
				mx.push(now, cur[1], srtt)
				for k, i := range idx {
					refs[k].push(now, cur[i], srtt)
				}
				rm.push(now, cur[1], srtt)
				if rng.IntN(4) == 0 {
					continue // not looked up at this record
				}
				r := a.row(now - srtt)
				for k := range idx {
					if got, want := a.value(r, k), refs[k].at(now-srtt); !same(got, want) {
						t.Fatalf("record %d: rtt_ago of variable %d = %v, reference %v", n, idx[k], got, want)
					}
				}
				if got, want := mx.max(now, srtt), rm.max(now, srtt); !same(got, want) {
					t.Fatalf("record %d: rtt_max = %v, reference %v", n, got, want)
				}
			}
		})
	}
}

package fuzz

import (
	"bytes"
	"context"
	"encoding/binary"
	"path/filepath"
	"slices"
	"testing"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/coverage"
	"github.com/actfuzz/actfuzz/netenv"
)

func smallCampaign(t testing.TB) *act.Campaign {
	t.Helper()
	c, err := act.ParseCampaign("small.yaml", []byte(`
ccai: [cubic]
bytes: 150000
params:
  bw: {min: 0.5, max: 50, step: 0.1}
  delay: {min: 1, max: 200, step: 1}
  loss: {min: 0, max: 0.05, step: 1e-6}
conditions:
  - {name: undo-increase, when: 'prev.ca_state == "recovery" && ca_state == "open" && cwnd > prior_cwnd'}
`))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func regionCounts(st *coverage.Store) []uint64 {
	var out []uint64
	for _, k := range st.Space().Ks() {
		out = append(out, st.VisitedRegions(k))
	}
	return out
}

// The fuzzer is deterministic given the campaign seed, whatever the number
// of workers, and spends exactly its budget.
func TestRunMethodDeterministic(t *testing.T) {
	c := smallCampaign(t)
	var first []uint64
	for _, w := range []int{1, 2, 3} {
		st, sims, err := RunMethod(context.Background(), c, 40, w)
		if err != nil {
			t.Fatal(err)
		}
		if sims != 40 {
			t.Fatalf("%d sims, want 40", sims)
		}
		got := regionCounts(st)
		if first == nil {
			first = got
			if got[0] == 0 {
				t.Fatal("no region visited")
			}
		} else if !slices.Equal(first, got) {
			t.Fatalf("workers=%d: regions %v, workers=1: %v", w, got, first)
		}
	}
}

func TestRunFeedbacks(t *testing.T) {
	c := smallCampaign(t)
	code, err := Run(context.Background(), c, Options{Budget: 40, Initial: 8})
	if err != nil {
		t.Fatal(err)
	}
	if code.Corpus == 0 || code.Corpus > 40 || code.Edges == 0 || code.Features < code.Edges {
		t.Fatalf("code feedback: corpus %d, edges %d, features %d", code.Corpus, code.Edges, code.Features)
	}
	reg, err := Run(context.Background(), c, Options{Budget: 40, Initial: 8, Feedback: FeedbackRegions, K: 4})
	if err != nil {
		t.Fatal(err)
	}
	if reg.Method != "fuzz-regions" || reg.Corpus == 0 {
		t.Fatalf("region feedback: %+v", reg)
	}
	if _, err := Run(context.Background(), c, Options{Budget: 1, Feedback: "nope"}); err == nil {
		t.Fatal("unknown feedback accepted")
	}
	// Outside a -cover build, Go coverage feedback is refused, not faked.
	if GoCoverAvailable() != nil {
		if _, err := Run(context.Background(), c, Options{Budget: 1, Feedback: FeedbackGoCover}); err == nil {
			t.Fatal("gocover feedback ran without coverage counters")
		}
	}
}

// Seeds are run first, as given.
func TestRunSeeds(t *testing.T) {
	c := smallCampaign(t)
	seed := Encode(c, Decode(c, []byte{9, 9, 9}))
	a, err := Run(context.Background(), c, Options{Budget: 1, Seeds: [][]byte{seed}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRunner(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out := r.Run(context.Background(), Decode(c, seed)); out.Err != nil {
		t.Fatal(out.Err)
	}
	b, _ := coverage.NewStore(c.Space, coverage.Options{})
	b.AddBatch(r.Batch(), 0)
	if !slices.Equal(regionCounts(a.Store), regionCounts(b)) {
		t.Fatalf("seeded run %v, direct run %v", regionCounts(a.Store), regionCounts(b))
	}
}

func TestRegionStorePersists(t *testing.T) {
	c := smallCampaign(t)
	path := filepath.Join(t.TempDir(), "w", "regions.bin")
	r, err := NewRunner(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := OpenRegionStore(path, c.Space, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := OpenRegionStore(path, c.Space, 1) // a second fuzzing process
	if err != nil {
		t.Fatal(err)
	}
	env := netenv.DefaultEnv()
	env.Loss = 0.01
	one := r.Run(context.Background(), act.Config{Seed: 1, Schedule: netenv.Constant(env)})
	if one.Err != nil {
		t.Fatal(one.Err)
	}
	if m := a.Add(r.Batch()); !a.New(m) {
		t.Fatalf("first run found no new region at k=%d: %v", a.K, m)
	}
	if m := a.Add(r.Batch()); m != 0 {
		t.Fatalf("the same states again found %v", m)
	}
	env.BW, env.Delay, env.Loss = 3, 100, 0.02
	r.Run(context.Background(), act.Config{Seed: 2, Schedule: netenv.Constant(env)})
	b.Add(r.Batch())
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	union, _ := coverage.NewStore(c.Space, regionStoreOptions(1))
	for _, st := range []*coverage.Store{a.Store(), b.Store()} {
		if err := union.Merge(st); err != nil {
			t.Fatal(err)
		}
	}
	d, err := OpenRegionStore(path, c.Space, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(regionCounts(d.Store()), regionCounts(union)) || !slices.Equal(regionCounts(b.Store()), regionCounts(union)) {
		t.Fatalf("file %v, last writer %v, union %v", regionCounts(d.Store()), regionCounts(b.Store()), regionCounts(union))
	}
	// Another state space is refused.
	sp := c.Space.With(coverage.Var{Name: "cwnd", Min: 1, Max: 64, Step: 1})
	if _, err := OpenRegionStore(path, sp, 1); err == nil {
		t.Fatal("opened a store over another space")
	}
}

// parseCounters reads the counter-data format of runtime/coverage (here a
// hand-made file in both flavors).
func TestParseCounters(t *testing.T) {
	for _, flavor := range []byte{1, 2} {
		var b bytes.Buffer
		hdr := make([]byte, 32)
		copy(hdr, []byte{0, 'c', 'w', 'm'})
		binary.LittleEndian.PutUint32(hdr[4:], 1)
		hdr[24] = flavor
		b.Write(hdr)
		seg := make([]byte, 16)
		binary.LittleEndian.PutUint64(seg, 2)        // functions
		binary.LittleEndian.PutUint32(seg[8:], 4)    // string table
		binary.LittleEndian.PutUint32(seg[12:], 4)   // args
		b.Write(append(seg, 0, 0, 0, 0, 0, 0, 0, 0)) // tables skipped
		put := func(v uint32) {
			if flavor == 1 {
				b.Write(binary.LittleEndian.AppendUint32(nil, v))
			} else {
				b.Write(binary.AppendUvarint(nil, uint64(v)))
			}
		}
		for _, fn := range [][]uint32{{3, 1, 7, 0, 5, 300}, {1, 2, 9, 1}} { // nctrs, pkg, func, counters
			for _, v := range fn {
				put(v)
			}
		}
		feats, err := parseCounters(b.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		if len(feats) != 3 {
			t.Fatalf("flavor %d: %d features, want 3", flavor, len(feats))
		}
		buckets := map[uint32]bool{}
		for _, f := range feats {
			buckets[f&15] = true
		}
		if !buckets[1] || !buckets[4] || !buckets[8] {
			t.Fatalf("flavor %d: buckets %v, want 1 (1 hit), 4 (5 hits), 8 (300 hits)", flavor, buckets)
		}
		if _, err := parseCounters(b.Bytes()[:b.Len()-1]); err == nil {
			t.Fatalf("flavor %d: truncated data accepted", flavor)
		}
	}
}

package coverage

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
)

// wideSpace needs two words per key.
func wideSpace() Space {
	return Space{Vars: []Var{
		{Name: "a", Min: 0, Max: 1 << 20, Step: 1},
		{Name: "b", Min: -5, Max: 1<<20 - 5, Step: 1},
		{Name: "c", Min: 0, Max: 1 << 21, Step: 2},
		{Name: "s", Values: []string{"x", "y", "z"}},
	}}
}

// TestWideSpace runs counts, queries, checkpoint and merge on multi-word keys.
func TestWideSpace(t *testing.T) {
	sp := wideSpace()
	rng := rand.New(rand.NewPCG(31, 32))
	full := mustStore(t, sp, Options{Seed: 1})
	if full.ly.w != 2 {
		t.Fatalf("wide space uses %d words", full.ly.w)
	}
	parts := []*Store{mustStore(t, sp, Options{Seed: 2}), mustStore(t, sp, Options{Seed: 3})}
	m := newModel(sp)
	for i := range 600 {
		st := randomState(rng, sp)
		if i%2 == 0 { // cluster
			st[0], st[1] = float64(rng.IntN(64)), float64(rng.IntN(64)-5)
		}
		if i%50 == 0 {
			st[2] = -1 // outside
		}
		v := Visit{Config: uint64(i), At: int64(i)}
		full.Add(st, v)
		parts[i%2].Add(st, v)
		m.add(st)
	}
	for l := 0; l <= sp.MaxLevel(); l++ {
		if got, want := full.VisitedRegions(1<<l), uint64(len(m.regions[l])); got != want {
			t.Fatalf("visited(%d) = %d, want %d", 1<<l, got, want)
		}
	}
	full.initScratch()
	for range 30 {
		star := full.State(nthRef(full, rng.IntN(full.Len())))
		star[rng.IntN(3)] = randomState(rng, sp)[0]
		if !sp.InRange(star) {
			continue
		}
		full.ly.encode(star, full.scr.star)
		full.levelLines()
		for _, l := range []int{0, 3, 10, 20} {
			for j := range sp.Vars {
				want := m.line(star, j, l)
				if got := full.line(full.scr.star, j, l, nil); !slices.Equal(got, want) {
					t.Fatalf("line var %d k=2^%d: %v, want %v", j, l, got, want)
				}
			}
		}
		if _, ok := full.SearchEstimation(rng, star); !ok {
			t.Fatalf("no estimation for %v", star)
		}
	}
	var buf bytes.Buffer
	if _, err := full.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := ReadStore(&buf)
	if err != nil {
		t.Fatal(err)
	}
	sameStore(t, full, back)
	merged := mustStore(t, sp, Options{Seed: 1})
	for _, p := range parts {
		if err := merged.Merge(p); err != nil {
			t.Fatal(err)
		}
	}
	ka, kb := regionKeys(full), regionKeys(merged)
	for l := range ka {
		if !slices.Equal(ka[l], kb[l]) {
			t.Fatalf("merged regions differ at k=2^%d", l)
		}
	}
	if a, b := full.Snapshot("", 0), merged.Snapshot("", 0); !slices.Equal(a.Visited, b.Visited) || a.OutOfRange != b.OutOfRange {
		t.Fatalf("merged %v/%d, full %v/%d", b.Visited, b.OutOfRange, a.Visited, a.OutOfRange)
	}
}

// TestMergePoolSizes: stores with different pool sizes do not merge (a
// pool's length is min(count, PoolSize), which a smaller pool would break).
func TestMergePoolSizes(t *testing.T) {
	a := mustStore(t, smallSpace(), Options{PoolSize: 2})
	b := mustStore(t, smallSpace(), Options{PoolSize: 5})
	if err := a.Merge(b); err == nil {
		t.Error("merge of pool sizes 2 and 5 accepted")
	}
}

package act

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// A campaign whose store outgrows a small memory budget coarsens, and its
// results still do not depend on the worker count or on a resume: the
// coarsening happens at the same merge, from the same data, in every run.
func TestBudgetedCampaignDeterministic(t *testing.T) {
	c := smallCampaign(t)
	// The budget below is calibrated on the paper's schedule and no directed
	// step: the adaptive schedule reaches more states in 384 simulations
	// (its own determinism is TestRunIndependentOfWorkers' and
	// TestResumeAfterCrash's).
	c.Schedule, c.Directed = SchedulePaper, "off"
	const budget = 384
	const memory = 3 << 20 // the store keeps to 2.25 MiB; unbudgeted it needs 3.0 MB
	type outcome struct {
		regions []uint64
		floor   int
		pool    int
		finds   int
	}
	get := func(rep *Report) outcome {
		o := outcome{floor: rep.Store.FloorK(), pool: rep.Store.PoolK(), finds: len(rep.Findings)}
		for _, k := range c.Space.Ks() {
			o.regions = append(o.regions, rep.Store.VisitedRegions(k))
		}
		return o
	}
	var ref outcome
	for i, w := range []int{1, 2, 3} {
		rep, err := Run(context.Background(), c, Options{Budget: budget, Workers: w, Memory: memory})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Store.Coarsenings() == 0 {
			t.Fatalf("no coarsening under a %d-byte budget (%d bytes)", memory, rep.Store.Bytes())
		}
		if b := rep.Store.Bytes(); b > memory/4*3 || rep.Store.OverBudget() {
			t.Errorf("store %d bytes over its budget", b)
		}
		o := get(rep)
		if i == 0 {
			ref = o
			t.Logf("exact from k=%d, pools at k=%d, regions %v", o.floor, o.pool, o.regions)
			continue
		}
		if o.floor != ref.floor || o.pool != ref.pool || o.finds != ref.finds || len(o.regions) != len(ref.regions) {
			t.Fatalf("workers=%d: %+v, want %+v", w, o, ref)
		}
		for l := range o.regions {
			if o.regions[l] != ref.regions[l] {
				t.Fatalf("workers=%d: k=%d has %d regions, want %d", w, 1<<l, o.regions[l], ref.regions[l])
			}
		}
	}
	// Cut and resumed: the checkpoint holds the coarsened store and the
	// configuration log.
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	if _, err := Run(ctx, c, Options{Budget: budget, Workers: 2, Memory: memory, Out: dir, CheckpointEvery: 1,
		Progress: func(st Status) {
			if st.Sims >= 192 {
				cancel()
			}
		}}); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), c, Options{Budget: budget, Workers: 1, Memory: memory, Out: dir, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if o := get(rep); o.floor != ref.floor || o.pool != ref.pool || o.finds != ref.finds {
		t.Fatalf("resumed: %+v, want %+v", o, ref)
	} else {
		for l := range o.regions {
			if o.regions[l] != ref.regions[l] {
				t.Fatalf("resumed: k=%d has %d regions, want %d", 1<<l, o.regions[l], ref.regions[l])
			}
		}
	}
	fi, err := os.Stat(filepath.Join(dir, "coverage", "configs-act.log"))
	if err != nil || fi.Size() == 0 {
		t.Fatalf("configuration log: %v", err)
	}
}

// The configuration log gives back what was appended, across blocks and a
// reopen that keeps a prefix.
func TestConfigLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "configs.log")
	l, err := openConfigLog(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	c := smallCampaign(t)
	sel := &selector{c: c, method: "ran", src: newSource(1, "ran"), log: l}
	sel.rng = rand.New(sel.src)
	var want []Config
	for range 300 {
		g := sel.nextBatch(nil, 1)[0]
		if len(want)%7 == 0 { // some multi-phase schedules
			g.Schedule = append(g.Schedule, g.Schedule[0])
			g.Schedule[0].Until = 12345678
		}
		want = append(want, g)
		if err := l.append(g); err != nil {
			t.Fatal(err)
		}
	}
	check := func(l *configLog, n int) {
		t.Helper()
		if l.len() != n {
			t.Fatalf("log has %d records, want %d", l.len(), n)
		}
		for _, i := range []int{0, 63, 64, 65, 200, 7, n - 1, 128} {
			if i >= n {
				continue
			}
			g, err := l.get(i)
			if err != nil {
				t.Fatal(err)
			}
			if g.Seed != want[i].Seed || g.Step != want[i].Step || len(g.Schedule) != len(want[i].Schedule) ||
				g.Schedule[0] != want[i].Schedule[0] || g.Schedule[len(g.Schedule)-1] != want[i].Schedule[len(g.Schedule)-1] {
				t.Fatalf("record %d = %+v, want %+v", i, g, want[i])
			}
		}
	}
	check(l, 300)
	if err := l.close(); err != nil {
		t.Fatal(err)
	}
	l, err = openConfigLog(path, 150)
	if err != nil {
		t.Fatal(err)
	}
	check(l, 150)
	l.close()
	if _, err := openConfigLog(path, 151); err == nil {
		t.Fatal("reopening with more records than the log has: no error")
	}
}

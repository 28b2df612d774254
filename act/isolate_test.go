package act

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/internal/race"
)

// outcome is what must not depend on where simulations ran: the regions at
// every k and the finding groups (a fault's kind mapped by kinds).
func outcome(rep *Report, kinds map[string]string) string {
	var b strings.Builder
	for _, k := range rep.Store.Space().Ks() {
		fmt.Fprintf(&b, "k=%d:%d ", k, rep.Store.VisitedRegions(k))
	}
	for _, g := range rep.Findings {
		f := g.Seed.Finding
		kind := f.Kind
		if m, ok := kinds[kind]; ok {
			kind = m
		}
		fmt.Fprintf(&b, "\n%s %s seed=%d ×%d t=%d", kind, f.Condition, g.Seed.Seed, g.Count, f.TimeNS)
	}
	return b.String()
}

// Isolated workers give the results of in-process ones, at any worker count.
func TestIsolatedMatchesInProcess(t *testing.T) {
	c := smallCampaign(t)
	const budget = 192
	ref, err := Run(context.Background(), c, Options{Budget: budget, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := outcome(ref, nil)
	for _, w := range workerCounts() {
		rep, err := Run(context.Background(), c, Options{Budget: budget, Workers: w, Isolate: true})
		if err != nil {
			t.Fatalf("%d workers: %v", w, err)
		}
		if got := outcome(rep, nil); got != want {
			t.Fatalf("%d isolated workers:\n%s\nin-process:\n%s", w, got, want)
		}
	}
	t.Logf("%d sims, identical: %s", budget, want)
}

func workerCounts() []int {
	if testing.Short() {
		return []int{2}
	}
	return []int{1, 2, 3}
}

// A CCAI that hangs, allocates without bound or crashes its process on a
// few configurations does not stop an isolated campaign: each such
// configuration becomes a fault finding of its kind, and the campaign
// covers exactly what the same campaign covers when those configurations
// fail without states (test-panic on the lost-on-fault subject, in
// process). The fault's seed replays as that fault. A fault that only
// state left in the process by an earlier configuration causes (a
// process marked for death, memory kept for good) is charged to none:
// the campaign is the one of a CCAI that never fails (Reno). All of this
// holds on a loaded machine too: the watchdog runs on unstarved time,
// and a fault is charged only to the first configuration of a fresh
// process.
func TestIsolatedFaults(t *testing.T) {
	if race.Enabled {
		t.Skip("under -race: the same concurrent code: isolated workers' supervision, as TestIsolatedMatchesInProcess and TestIsolatedResume run under -race, with a hang killed by its watchdog in TestDurationStopsMidBatch")
	}
	const budget = 128
	ref, err := Run(context.Background(), campaignWith(t, "test-panic"), Options{Budget: budget, Workers: 2, Subject: lostOnFault{}})
	if err != nil {
		t.Fatal(err)
	}
	faults := 0
	for _, g := range ref.Findings {
		if g.Seed.Finding.Kind == "panic" {
			faults = g.Count
		}
	}
	t.Logf("%d of %d configurations fault", faults, budget)
	if faults == 0 || faults > budget/4 {
		t.Fatalf("the faulty configurations are %d of %d; the test wants a few", faults, budget)
	}
	clean, err := Run(context.Background(), campaignWith(t, "test-reno"), Options{Budget: budget, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range append([]faultCase{
		{"hang", "test-hang", corpus.FaultHang, "watchdog"},
		{"oom", "test-oom", corpus.FaultOOM, "memory limit"},
		{"crash", "test-crash", corpus.FaultCrash, "test-crash: a panic on another goroutine"},
		{"test-poison", "test-poison", "", ""},
		{"test-retain", "test-retain", "", ""},
	}, platformFaults...) {
		t.Run(tc.name, func(t *testing.T) {
			c := campaignWith(t, tc.cca)
			want := outcome(ref, map[string]string{"panic": tc.kind})
			if tc.kind == "" {
				want = outcome(clean, nil)
			}
			iso := IsolateOptions{Watchdog: 1500 * time.Millisecond, WorkerMemory: 512 << 20}
			for i, w := range workerCounts() {
				opt := Options{Budget: budget, Workers: w, Isolate: true, IsolateOptions: iso, Logger: slog.New(slog.NewTextHandler(t.Output(), nil))}
				// Not for the CCAIs whose state outlives a simulation:
				// the outputs replay conditions' seeds in this process.
				if i == 0 && tc.kind != "" {
					opt.Out = t.TempDir()
				}
				start := time.Now()
				rep, err := Run(context.Background(), c, opt)
				if err != nil {
					t.Fatalf("%d workers: %v", w, err)
				}
				t.Logf("%s, %d workers: %d sims in %v", tc.name, w, rep.Sims, time.Since(start).Round(time.Millisecond))
				if got := outcome(rep, nil); got != want {
					t.Fatalf("%d workers:\n%s\nwant (the reference):\n%s", w, got, want)
				}
				if opt.Out == "" || tc.kind == "" {
					continue
				}
				i := slices.IndexFunc(rep.Findings, func(g *FindingGroup) bool { return g.Seed.Finding.Kind == tc.kind })
				g := rep.Findings[i]
				if !strings.Contains(g.Seed.Finding.Detail, tc.detail) {
					t.Errorf("detail %q lacks %q", g.Seed.Finding.Detail, tc.detail)
				}
				if filepath.Base(filepath.Dir(g.Path)) != "fault-"+tc.kind {
					t.Errorf("seed written to %s", g.Path)
				}
				seed, err := corpus.ReadSeed(g.Path)
				if err != nil {
					t.Fatal(err)
				}
				f, err := ReplayIsolated(context.Background(), seed, iso)
				if err != nil {
					t.Fatal(err)
				}
				if f == nil || f.Kind != tc.kind {
					t.Fatalf("replay of %s: fault %+v, want %s", g.Path, f, tc.kind)
				}
			}
		})
	}
}

// faultCase is a CCAI of TestIsolatedFaults and the fault kind charged
// where test-panic panics (none: charged to none).
type faultCase struct{ name, cca, kind, detail string }

// platformFaults are the cases of this platform's own (faults_linux_test.go).
var platformFaults []faultCase

// An isolated campaign stopped part-way (its workers killed mid-batch)
// resumes, in process, to the uninterrupted result.
func TestIsolatedResume(t *testing.T) {
	c := smallCampaign(t)
	const budget = 320
	full, err := Run(context.Background(), c, Options{Budget: budget, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := Run(ctx, c, Options{Budget: budget, Out: dir, Workers: 2, Isolate: true, CheckpointEvery: 1,
		Progress: func(st Status) {
			if st.Sims >= 128 {
				cancel()
			}
		}}); err != nil {
		t.Fatal(err)
	}
	resumed, err := Run(context.Background(), c, Options{Budget: budget, Out: dir, Workers: 1, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := outcome(full, nil), outcome(resumed, nil); a != b {
		t.Fatalf("uninterrupted:\n%s\nresumed:\n%s", a, b)
	}
}

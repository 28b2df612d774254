package act

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/internal/race"
)

// A campaign whose every simulation hangs ends within Duration plus one
// watchdog (and the time it takes to write its outputs), with the hang of
// each configuration of the merged prefix charged, and a checkpoint of
// what it merged. Without the drain it ran until every configuration of
// its batch had hung, one watchdog each per worker. Nothing here assumes
// a machine speed: the time of a campaign of the same shape that does not
// hang, measured now, stands for the work around the simulations (the
// campaign's setup, a worker's start and its setup of the campaign, which
// a loaded machine stretches); Duration leaves room for it twice before
// the first watchdog, and the bound adds it three times to Duration and
// the watchdog.
func TestDurationEndsHangingCampaign(t *testing.T) {
	if race.Enabled {
		t.Skip("under -race: the same concurrent code: the drain at the end of Duration with isolated workers, as TestDurationStopsMidBatch runs under -race (and in process TestDurationEndsHangingCampaignInProcess)")
	}
	iso := IsolateOptions{Watchdog: 2 * time.Second, WorkerMemory: 512 << 20}
	const budget, workers = 64, 2
	start := time.Now()
	if _, err := Run(context.Background(), campaignWith(t, "test-reno"), Options{Budget: budget, Workers: workers, Isolate: true, IsolateOptions: iso, Out: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	overhead := time.Since(start)
	// test-block sleeps: its unstarved time is its wall time at any load.
	// The bound holds at every try. A hang is charged only when its
	// worker started and slept one watchdog before Duration plus one
	// watchdog: the room the overhead measured above leaves for the
	// worker's start can be too little when the load rises between the
	// two runs (measured: none charged with Duration 14.2 s at load 48),
	// so a try that charged none is made again with twice the room; the
	// bound moves with it.
	var rep *Report
	var dir string
	hangs := 0
	for try := 1; try <= 3 && hangs == 0; try++ {
		room := time.Duration(1<<(try-1)) * overhead
		d := iso.Watchdog + 2*room + time.Second
		dir = t.TempDir()
		start = time.Now()
		var err error
		rep, err = Run(context.Background(), campaignWith(t, "test-block"), Options{Budget: budget, Workers: workers, Isolate: true, IsolateOptions: iso,
			Duration: d, Out: dir, Logger: slog.New(slog.NewTextHandler(t.Output(), nil))})
		took := time.Since(start)
		if err != nil {
			t.Fatal(err)
		}
		bound := d + iso.Watchdog + 2*time.Second + 3*room
		t.Logf("try %d: --duration %v, watchdog %v: ended after %v (bound %v: a campaign that does not hang took %v); %d simulations merged",
			try, d.Round(time.Millisecond), iso.Watchdog, took.Round(time.Millisecond), bound.Round(time.Millisecond), overhead.Round(time.Millisecond), rep.Sims)
		if took > bound {
			t.Errorf("ended after %v, beyond %v", took, bound)
		}
		for _, g := range rep.Findings {
			if k := g.Seed.Finding.Kind; k != corpus.FaultHang {
				t.Errorf("a %s finding", k)
			}
			hangs += g.Count
		}
		if hangs != rep.Sims {
			t.Errorf("%d hangs charged for %d simulations merged", hangs, rep.Sims)
		}
	}
	if hangs == 0 {
		t.Errorf("no hang charged in 3 tries: configuration 0 (a worker's first) hangs one watchdog after its worker's setup")
	}
	cp, err := ReadCheckpoint(dir, "act")
	if err != nil {
		t.Fatal(err)
	}
	if cp.Sims != rep.Sims {
		t.Errorf("the checkpoint has %d simulations, the report %d", cp.Sims, rep.Sims)
	}
}

// In process, a simulation that ignores its context (asleep in its
// CCAI) is abandoned one watchdog after Duration: the campaign still
// ends, with nothing merged.
func TestDurationEndsHangingCampaignInProcess(t *testing.T) {
	const budget, workers = 64, 2
	start := time.Now()
	if _, err := Run(context.Background(), campaignWith(t, "test-reno"), Options{Budget: budget, Workers: workers}); err != nil {
		t.Fatal(err)
	}
	overhead := time.Since(start)
	const d, wd = 500 * time.Millisecond, time.Second
	start = time.Now()
	rep, err := Run(context.Background(), campaignWith(t, "test-block"), Options{Budget: budget, Workers: workers, Duration: d,
		IsolateOptions: IsolateOptions{Watchdog: wd}})
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	bound := d + wd + 2*time.Second + 3*overhead
	t.Logf("--duration %v, watchdog %v, in process: ended after %v (bound %v)", d, wd, took.Round(time.Millisecond), bound.Round(time.Millisecond))
	if took > bound {
		t.Errorf("ended after %v, beyond %v", took, bound)
	}
	if rep.Sims != 0 || len(rep.Findings) != 0 {
		t.Errorf("%d simulations merged, %d findings: want none", rep.Sims, len(rep.Findings))
	}
}

// A run stopped as by the end of Duration merges the prefix of its batch
// that has results, exactly: here configurations 0–2 (configuration 3
// hangs, and a fault after other configurations of a process is charged
// only once the configuration ran alone, which nothing starts after the
// stop). Resumed, the campaign is the uninterrupted one: the rest of the
// batch is merged before what follows it.
func TestDurationStopsMidBatch(t *testing.T) {
	const budget = 128
	ref, err := Run(context.Background(), campaignWith(t, "test-panic"), Options{Budget: budget, Workers: 2, Subject: lostOnFault{}})
	if err != nil {
		t.Fatal(err)
	}
	want := outcome(ref, map[string]string{"panic": corpus.FaultHang})
	// Asleep, the hang takes its watchdog's wall time at any load.
	c := campaignWith(t, "test-stall")
	iso := IsolateOptions{Watchdog: 1500 * time.Millisecond, WorkerMemory: 512 << 20}
	dir := t.TempDir()
	rep, err := Run(context.Background(), c, Options{Budget: budget, Workers: 2, Isolate: true, IsolateOptions: iso, Out: dir,
		stopAfter: func(idx int) bool { return idx == 2 }})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sims != 3 {
		t.Fatalf("%d simulations merged, want 3 (0–2)", rep.Sims)
	}
	if cp, err := ReadCheckpoint(dir, "act"); err != nil || cp.Sims != 3 {
		t.Fatalf("checkpoint: %+v, %v", cp, err)
	}
	resumed, err := Run(context.Background(), c, Options{Budget: budget, Workers: 3, Isolate: true, IsolateOptions: iso, Out: dir, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := outcome(resumed, nil); got != want {
		t.Fatalf("resumed:\n%s\nwant (the reference):\n%s", got, want)
	}
}

// In process too, a run stopped mid-batch merges a prefix and resumes to
// the uninterrupted campaign, wherever the stop falls.
func TestDurationStopsMidBatchInProcess(t *testing.T) {
	c := smallCampaign(t)
	const budget = 320
	full, err := Run(context.Background(), c, Options{Budget: budget, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rep, err := Run(context.Background(), c, Options{Budget: budget, Workers: 2, Out: dir, stopAfter: func(idx int) bool { return idx == 150 }})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stopped after %d simulations", rep.Sims)
	// Result 150 may come while batch 1 (64–127) waits for a result.
	if rep.Sims < 64 || rep.Sims >= budget {
		t.Fatalf("%d simulations merged: want at least batch 0, and not all", rep.Sims)
	}
	resumed, err := Run(context.Background(), c, Options{Budget: budget, Workers: 1, Out: dir, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := outcome(full, nil), outcome(resumed, nil); a != b {
		t.Fatalf("uninterrupted:\n%s\nresumed:\n%s", a, b)
	}
}

// Unstarved time: what a process ran or slept, not what it waited for a
// CPU; several threads waiting leave it the CPU time it got; a thread
// that started since the reference counts whole.
func TestUnstarvedOver(t *testing.T) {
	tt := func(run, wait int64) threadTimes {
		return threadTimes{run: run * int64(time.Millisecond), wait: wait * int64(time.Millisecond)}
	}
	ms := time.Millisecond
	for _, tc := range []struct {
		name      string
		ref, seen map[int]threadTimes
		pending   map[int]time.Duration
		want      time.Duration
	}{
		{"starved", map[int]threadTimes{1: tt(0, 0)}, map[int]threadTimes{1: tt(10, 90)}, nil, 10 * ms},
		{"asleep", map[int]threadTimes{1: tt(5, 5)}, map[int]threadTimes{1: tt(5, 5)}, nil, 100 * ms},
		{"running", map[int]threadTimes{1: tt(0, 0)}, map[int]threadTimes{1: tt(100, 0)}, nil, 100 * ms},
		{"two starved", map[int]threadTimes{1: tt(0, 0), 2: tt(0, 0)}, map[int]threadTimes{1: tt(10, 90), 2: tt(10, 90)}, nil, 20 * ms},
		{"new thread", map[int]threadTimes{1: tt(0, 0)}, map[int]threadTimes{1: tt(0, 0), 2: tt(10, 60)}, nil, 40 * ms},
		{"waiting now", map[int]threadTimes{1: tt(0, 0)}, map[int]threadTimes{1: tt(10, 20)}, map[int]time.Duration{1: 60 * ms}, 20 * ms},
		{"two running", map[int]threadTimes{1: tt(0, 0), 2: tt(0, 0)}, map[int]threadTimes{1: tt(100, 0), 2: tt(100, 0)}, nil, 100 * ms},
		// Asleep, with a watcher thread that ran 20 µs and waited 95 ms:
		// its wait counts for 200 × 20 µs, 4 ms.
		{"asleep, a watcher waiting", map[int]threadTimes{1: tt(5, 5), 2: tt(0, 0)},
			map[int]threadTimes{1: tt(5, 5), 2: {run: 20_000, wait: 95 * int64(ms)}}, nil, 96 * ms},
		// The same watcher runnable and not run since the last sample.
		{"asleep, a watcher waiting now", map[int]threadTimes{1: tt(5, 5), 2: tt(0, 0)},
			map[int]threadTimes{1: tt(5, 5), 2: {run: 20_000, wait: 35 * int64(ms)}}, map[int]time.Duration{2: 60 * ms}, 96 * ms},
		// A starved simulation at a share of 0.5% still counts whole.
		{"starved to 0.5%", map[int]threadTimes{1: tt(0, 0)}, map[int]threadTimes{1: {run: 500_000, wait: 99_500_000}}, nil, 500 * time.Microsecond},
	} {
		if got := unstarvedOver(100*time.Millisecond, tc.ref, tc.seen, tc.pending); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

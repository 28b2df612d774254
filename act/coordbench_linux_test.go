package act

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The coordinator benchmark (issue 52, item 1): a campaign's worker results
// are recorded once, then fed back to the coordinator (Run) as fast as it
// takes them, through the Executor seam (Options.Executor): zero-cost
// workers, so the process's CPU is the coordinator's. The replayed run
// must reach exactly the recorded run's coverage and findings.
// bench/coord.sh runs it with a CPU profile and splits the coordinator's
// time into selection, merge, conditions/oracles, checkpoint and I/O.

// recording is the Results of one campaign, by configuration index, with
// the configurations they are of, and the worker's CPU time per simulation.
type recording struct {
	configs []Config
	results []Result
	workCPU time.Duration // the simulations' thread CPU time, summed
}

// resultRecorder is an Executor that runs each configuration on one goroutine
// of this process (a worker of its own, as a worker process runs it) and
// keeps its Result.
type resultRecorder struct {
	c    *Campaign
	jobs chan job
	res  chan Result
	fail chan error
	done chan struct{}
	mu   sync.Mutex
	rec  *recording
}

func newRecorder(c *Campaign, rec *recording) *resultRecorder {
	x := &resultRecorder{c: c, jobs: make(chan job, 1<<16), res: make(chan Result, 2*batchSize), fail: make(chan error, 1),
		done: make(chan struct{}), rec: rec}
	go x.work()
	return x
}

func (x *resultRecorder) work() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	wk := newWorker(x.c, x.c.Space, nil, nil)
	for {
		select {
		case j := <-x.jobs:
			t0 := threadCPU()
			r := wk.run(context.Background(), j)
			m, err := r.message(0)
			spent := threadCPU() - t0
			if err != nil {
				x.fail <- err
				return
			}
			x.mu.Lock()
			for len(x.rec.results) <= j.idx {
				x.rec.results = append(x.rec.results, Result{})
				x.rec.configs = append(x.rec.configs, Config{})
			}
			x.rec.results[j.idx], x.rec.configs[j.idx] = m, j.g
			x.rec.workCPU += spent
			x.mu.Unlock()
			select {
			case x.res <- m:
			case <-x.done:
				return
			}
		case <-x.done:
			return
		}
	}
}

func (x *resultRecorder) Dispatch(base int, gs []Config) {
	for i, g := range gs {
		x.jobs <- job{idx: base + i, g: g}
	}
}
func (x *resultRecorder) Results() <-chan Result { return x.res }
func (x *resultRecorder) Failed() <-chan error   { return x.fail }
func (x *resultRecorder) Merged(int)             {}
func (x *resultRecorder) Close()                 { close(x.done) }

// replayer is an Executor whose workers cost nothing: each dispatched
// configuration's recorded Result is delivered at once. A configuration
// that is not the recorded one fails the campaign (the replay would not
// be the recorded run's).
type replayer struct {
	rec  *recording
	res  chan Result
	fail chan error
}

func newReplayer(rec *recording) *replayer {
	return &replayer{rec: rec, res: make(chan Result, len(rec.results)), fail: make(chan error, 1)}
}

func (x *replayer) Dispatch(base int, gs []Config) {
	for i, g := range gs {
		idx := base + i
		if idx >= len(x.rec.results) || !reflect.DeepEqual(g, x.rec.configs[idx]) {
			select {
			case x.fail <- fmt.Errorf("configuration %d was not recorded: the replay left the recorded run", idx):
			default:
			}
			return
		}
		x.res <- x.rec.results[idx]
	}
}
func (x *replayer) Results() <-chan Result { return x.res }
func (x *replayer) Failed() <-chan error   { return x.fail }
func (x *replayer) Merged(int)             {}
func (x *replayer) Close()                 {}

// threadCPU is the calling thread's CPU time.
func threadCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// processCPU is the process's CPU time (every thread, the collector's too).
func processCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// replayed is what a replay must reproduce of a run: the existing outcome
// (coverage at every k, finding groups) and the store's states and visits.
func replayed(rep *Report) string {
	return fmt.Sprintf("sims=%d states=%d visits=%d %s", rep.Sims, rep.Store.Len(), rep.Store.Visits(), outcome(rep, nil))
}

// coordBudget is the benchmark's campaign length (COORD_SIMS, default 320).
func coordBudget() int {
	if n, err := strconv.Atoi(os.Getenv("COORD_SIMS")); err == nil && n > 0 {
		return n
	}
	return 5 * batchSize
}

// BenchmarkCoordinatorReplay is the coordinator's rate with zero-cost
// workers on the default campaign, young (from simulation 0): the recorded
// run's results replayed. It reports simulations per coordinator CPU
// second and that divided by one worker's rate (sims per worker CPU
// second): how many worker cores one coordinator core feeds.
func BenchmarkCoordinatorReplay(b *testing.B) {
	c := DefaultCampaign()
	budget := coordBudget()
	rec := &recording{}
	recDir := b.TempDir()
	recorded, err := Run(context.Background(), c, Options{Budget: budget, Out: recDir,
		Executor: func(context.Context, CampaignHeader) (Executor, error) { return newRecorder(c, rec), nil }})
	if err != nil {
		b.Fatal(err)
	}
	want := replayed(recorded)
	// The recorded run is a real run: the in-process executor gives it too.
	real, err := Run(context.Background(), c, Options{Budget: budget, Workers: 2})
	if err != nil {
		b.Fatal(err)
	}
	if got := replayed(real); got != want {
		b.Fatalf("the recording executor's run differs from an in-process run:\n got %s\nwant %s", want, got)
	}
	workerRate := float64(budget) / rec.workCPU.Seconds()
	b.Logf("recorded %d simulations: %s; one worker: %.1f sims per CPU second", budget, want, workerRate)
	var cpu time.Duration
	sims := 0
	// COORD_PROFILE names a CPU profile of the replays only.
	if path := os.Getenv("COORD_PROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			b.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	b.ResetTimer()
	for b.Loop() {
		cpu0 := processCPU()
		rep, err := Run(context.Background(), c, Options{Budget: budget, Out: b.TempDir(),
			Executor: func(context.Context, CampaignHeader) (Executor, error) { return newReplayer(rec), nil }})
		cpu += processCPU() - cpu0
		if err != nil {
			b.Fatal(err)
		}
		if got := replayed(rep); got != want {
			b.Fatalf("replay differs from the recorded run:\n got %s\nwant %s", got, want)
		}
		sims += rep.Sims
	}
	perCore := float64(sims) / cpu.Seconds()
	b.ReportMetric(perCore, "sims/coord-cpu-s")
	b.ReportMetric(workerRate, "sims/worker-cpu-s")
	b.ReportMetric(perCore/workerRate, "worker-cores/coord-core")
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(sims), "coord-cpu-ms/sim")
}

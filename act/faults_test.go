package act

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

// TestMain makes the test binary its own worker process: the supervisor
// starts os.Executable() with the argument "worker", which only a worker
// gets, so the test-only CCAIs below exist in the workers too.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "worker" {
		os.Exit(WorkerMain(context.Background(), os.Args[2:], os.Stdin, os.Stdout, os.Stderr, openTestSubject))
	}
	os.Exit(m.Run())
}

func openTestSubject(name string) (netenv.Subject, error) {
	if name == "lost-on-fault" {
		return lostOnFault{}, nil
	}
	return netenv.Native{}, nil
}

// Test-only CCAIs: Reno, until the flow has run a second with a smoothed RTT
// of at least faultyRTT (a property of a few configurations: long
// propagation delays); then each misbehaves its own way. test-panic panics
// on the simulating goroutine (the subject's "panic" fault): the reference
// for the other three, which only an isolated worker survives.
const faultyRTT = 1500 * time.Millisecond

type faulty struct {
	ccai.Reno
	misbehave func()
}

func (f *faulty) CongAvoid(s *ccai.Sock, acked uint32) {
	if s.Now >= time.Second && s.SRTT >= faultyRTT {
		f.misbehave()
	}
	f.Reno.CongAvoid(s, acked)
}

var sink [][]byte

// Test-only CCAIs whose faults come from state a simulation leaves in its
// worker process, so that only a later simulation of the same process
// fails, while each configuration alone runs like Reno: no configuration
// caused the fault, and none may be charged with it. test-poison marks
// the process on its trigger, and the next simulation that starts there
// dies (a panic on another goroutine); test-retain keeps retainSize
// bytes of heap for good on its trigger, so that a process's second
// trigger takes it over the test's 512 MB limit.
var (
	poisoned atomic.Bool
	retained [][]byte
)

const retainSize = 300 << 20

// once is Reno that misbehaves once, at the first CongAvoid after the
// faulty trigger (see faulty), or at start (onInit).
type once struct {
	ccai.Reno
	misbehave func()
	onInit    func()
	done      bool
}

func (o *once) Init(s *ccai.Sock) {
	if o.onInit != nil {
		o.onInit()
	}
	o.Reno.Init(s)
}

func (o *once) CongAvoid(s *ccai.Sock, acked uint32) {
	if !o.done && o.misbehave != nil && s.Now >= time.Second && s.SRTT >= faultyRTT {
		o.done = true
		o.misbehave()
	}
	o.Reno.CongAvoid(s, acked)
}

func crashProcess() {
	go func() { panic("a panic on another goroutine") }()
	time.Sleep(time.Hour)
}

func init() {
	for name, misbehave := range map[string]func(){
		"test-hang": func() {
			for {
			}
		},
		"test-oom": func() {
			for {
				sink = append(sink, make([]byte, 1<<20))
			}
		},
		"test-crash": func() {
			go func() { panic("test-crash: a panic on another goroutine") }()
			time.Sleep(time.Hour)
		},
		"test-panic": func() { panic("test-panic: the reference fault") },
		// test-stall hangs asleep: no CPU time, which unstarved time
		// (not CPU time) sees passing at any load.
		"test-stall": func() { time.Sleep(time.Hour) },
	} {
		ccai.Register(ccai.Info{Name: name, Description: "test only: " + name, New: func() ccai.Algorithm { return &faulty{misbehave: misbehave} }})
	}
	ccai.Register(ccai.Info{Name: "test-poison", Description: "test only: test-poison", New: func() ccai.Algorithm {
		return &once{misbehave: func() { poisoned.Store(true) }, onInit: func() {
			if poisoned.Load() {
				crashProcess()
			}
		}}
	}})
	ccai.Register(ccai.Info{Name: "test-retain", Description: "test only: test-retain", New: func() ccai.Algorithm {
		return &once{misbehave: func() { retained = append(retained, make([]byte, retainSize)) }}
	}})
	// test-reno is Reno under a test name: the campaign of the two above
	// when nothing is charged (the oracles a campaign checks depend on
	// the CCAI's name).
	ccai.Register(ccai.Info{Name: "test-reno", Description: "test only: test-reno", New: func() ccai.Algorithm { return &once{} }})
	// test-block hangs every simulation from its start, asleep: no CPU
	// time, which only unstarved time, not CPU time, sees passing.
	ccai.Register(ccai.Info{Name: "test-block", Description: "test only: test-block", New: func() ccai.Algorithm {
		return &once{onInit: func() { time.Sleep(time.Hour) }}
	}})
}

// lostOnFault is the native subject, except that a run that faults shows
// none of its states: what an isolated campaign knows of a run whose
// process was killed.
type lostOnFault struct{ netenv.Native }

func (lostOnFault) Name() string { return "lost-on-fault" }

func (l lostOnFault) Run(ctx context.Context, cfg netenv.Config, obs observe.Observer) (netenv.Result, error) {
	var recs []observe.Record
	res, err := l.Native.Run(ctx, cfg, recorder{&recs})
	if err != nil {
		return res, err
	}
	if obs != nil {
		for i := range recs {
			obs.Observe(&recs[i])
		}
	}
	return res, nil
}

type recorder struct{ recs *[]observe.Record }

func (r recorder) Observe(rec *observe.Record) {
	c := *rec
	c.Vars = append([]float64(nil), rec.Vars...)
	*r.recs = append(*r.recs, c)
}

// refusing is the native subject, except that it refuses configurations
// with more than one phase, as ns-3 refuses a change of queue discipline.
type refusing struct{ netenv.Native }

func (refusing) Name() string { return "refusing" }

func (r refusing) Run(ctx context.Context, cfg netenv.Config, obs observe.Observer) (netenv.Result, error) {
	if len(cfg.Schedule) > 1 {
		return netenv.Result{}, errors.New("cannot change phases")
	}
	return r.Native.Run(ctx, cfg, obs)
}

// A configuration the subject refuses mid-campaign is a "refused" fault
// finding, not a run that silently observed nothing.
func TestRefusedConfigurationIsAFinding(t *testing.T) {
	c := smallCampaign(t)
	rep, err := Run(context.Background(), c, Options{Budget: 448, Workers: 2, Subject: refusing{}})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, g := range rep.Findings {
		if g.Seed.Finding.Kind == "refused" {
			found = true
			if !strings.Contains(g.Seed.Finding.Detail, "cannot change phases") || len(g.Seed.Schedule) < 2 {
				t.Fatalf("refused finding: %+v, %d phases", g.Seed.Finding, len(g.Seed.Schedule))
			}
		}
	}
	if !found {
		t.Fatal("no refused finding: the refusals went unrecorded (or concatenation never ran)")
	}
}

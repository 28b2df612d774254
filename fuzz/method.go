package fuzz

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/coverage"
	"github.com/actfuzz/actfuzz/netenv"
)

// Feedback chooses what makes a mutated input interesting enough to keep in
// the fuzzer's corpus.
type Feedback string

const (
	// FeedbackCode keeps inputs that reach new code-coverage features (the
	// AFL-style edge proxy described in edges.go). This is the "fuzz"
	// method of `actfuzz compare`: a plain code-coverage-guided fuzzer.
	FeedbackCode Feedback = "code"
	// FeedbackRegions keeps inputs that reach a new region of S at size
	// Options.K: the same mutation loop steered by ACT's state-region
	// feedback instead (an ablation: same mutator, other feedback).
	FeedbackRegions Feedback = "regions"
)

// Options configure a fuzzing run.
type Options struct {
	Budget   int      // simulations (0: the campaign's budget)
	Workers  int      // parallel simulations (0: GOMAXPROCS); results do not depend on it
	Feedback Feedback // FeedbackCode (default), FeedbackGoCover or FeedbackRegions
	// K is the region size of FeedbackRegions (default 16).
	K int
	// Initial is the number of random inputs evaluated before mutation
	// starts (default 64); Seeds, if given, are evaluated first.
	Initial int
	Seeds   [][]byte
	// Subject runs the simulations (netenv.Native{} by default).
	Subject netenv.Subject
	// Progress, if set, is called after every batch.
	Progress func(sims int, store *coverage.Store)
}

// Report is the outcome of a fuzzing run.
type Report struct {
	Method   string // "fuzz", "fuzz-gocover" or "fuzz-regions"
	Store    *coverage.Store
	Series   *coverage.Series
	Sims     int
	Corpus   int // inputs kept
	Edges    int // code-coverage features seen (Go coverage blocks for FeedbackGoCover, the proxy's otherwise)
	Features int // (feature, hit-count bucket) pairs seen
	Findings int // runs with a condition hit or a subject fault
}

// batchSize is fixed so that results do not depend on the worker count: a
// batch of inputs is mutated from the corpus as it stands, simulated in
// parallel and merged in input order.
const batchSize = 16

// RunMethod runs the code-coverage-guided fuzzer on campaign c for budget
// simulations and returns the region store it reached (the measure that
// `actfuzz compare` reports for every method) and the number of simulations
// run. It is deterministic given c.Seed, whatever the number of workers.
func RunMethod(ctx context.Context, c *act.Campaign, budget int, workers int) (*coverage.Store, int, error) {
	rep, err := Run(ctx, c, Options{Budget: budget, Workers: workers})
	if rep == nil {
		return nil, 0, err
	}
	return rep.Store, rep.Sims, err
}

type entry struct {
	data   []byte
	weight float64
}

type fuzzResult struct {
	batch    *coverage.Batch
	features []uint32
	finding  bool
	err      error
}

// Run runs the mutation loop of a coverage-guided fuzzer over Decode's byte
// inputs. Every simulation's states go into a region store, which measures
// the method; only the feedback selected by opt decides what is kept.
func Run(ctx context.Context, c *act.Campaign, opt Options) (*Report, error) {
	opt = opt.withDefaults(c)
	method, err := feedbackMethod(opt.Feedback)
	if err != nil {
		return nil, err
	}
	store, err := coverage.NewStore(c.Space, coverage.Options{Seed: c.Seed})
	if err != nil {
		return nil, fmt.Errorf("state space: %w", err)
	}
	kLevel, ok := c.Space.Level(min(opt.K, c.Space.MaxK()))
	if !ok {
		return nil, fmt.Errorf("fuzz: K = %d is not a region size of S", opt.K)
	}
	// Check the runner can be built before starting goroutines.
	if _, err := NewRunner(c, opt.Subject); err != nil {
		return nil, err
	}

	h := fnv.New64a()
	h.Write([]byte(method))
	rng := rand.New(rand.NewPCG(c.Seed, h.Sum64()))
	l := &fuzzLoop{
		opt: opt, store: store, kLevel: kLevel, rng: rng,
		mut: &mutator{rng: rng, maxLen: MaxInputLen},
		rep: &Report{Method: method, Store: store, Series: coverage.NewSeries(method, c.Space)},
	}

	jobs := make(chan fuzzJob)
	results := make(chan fuzzJobResult, batchSize)
	var wg sync.WaitGroup
	for w := 0; w < opt.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fuzzWorker(ctx, c, opt, jobs, results)
		}()
	}
	defer func() { close(jobs); wg.Wait() }()

	pending := make([]fuzzResult, batchSize)
	inputs := make([][]byte, batchSize)
	for l.rep.Sims < opt.Budget && ctx.Err() == nil {
		n := min(batchSize, opt.Budget-l.rep.Sims)
		l.fillInputs(inputs[:n])
		go func(in [][]byte) {
			for i := range in {
				jobs <- fuzzJob{idx: i, data: in[i]}
			}
		}(inputs[:n])
		for i := 0; i < n; i++ {
			r := <-results
			pending[r.idx] = r.r
		}
		if err := l.merge(ctx, inputs[:n], pending[:n]); err != nil {
			return l.rep, err
		}
		inputs = make([][]byte, batchSize) // kept entries alias the old slice's elements
		l.rep.Series.Record(int64(l.rep.Sims), store)
		if opt.Progress != nil {
			opt.Progress(l.rep.Sims, store)
		}
	}
	l.rep.Corpus = len(l.queue)
	l.rep.Edges = l.virgin.edges
	l.rep.Features = l.virgin.feats
	if err := ctx.Err(); err != nil && !errors.Is(err, context.Canceled) {
		return l.rep, err
	}
	return l.rep, nil
}

// withDefaults fills the options left zero: the campaign's budget, a
// worker per processor, code feedback, K = 16, 64 random inputs, and the
// native subject.
func (opt Options) withDefaults(c *act.Campaign) Options {
	if opt.Budget <= 0 {
		opt.Budget = c.Budget
	}
	if opt.Workers <= 0 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	if opt.Feedback == "" {
		opt.Feedback = FeedbackCode
	}
	if opt.K <= 0 {
		opt.K = 16
	}
	if opt.Initial <= 0 {
		opt.Initial = 64
	}
	if opt.Subject == nil {
		opt.Subject = netenv.Native{}
	}
	return opt
}

// feedbackMethod is the method name a feedback reports under (and seeds its
// PRNG stream with); Go-coverage feedback needs a coverage-instrumented
// binary.
func feedbackMethod(f Feedback) (string, error) {
	switch f {
	case FeedbackCode:
		return "fuzz", nil
	case FeedbackRegions:
		return "fuzz-regions", nil
	case FeedbackGoCover:
		if err := GoCoverAvailable(); err != nil {
			return "", err
		}
		return "fuzz-gocover", nil
	}
	return "", fmt.Errorf("fuzz: feedback %q: want %q, %q or %q", f, FeedbackCode, FeedbackGoCover, FeedbackRegions)
}

// fuzzJob is one input of a batch, at its index, for a worker to simulate.
type fuzzJob struct {
	idx  int
	data []byte
}

// fuzzJobResult is a worker's result for the input at idx.
type fuzzJobResult struct {
	idx int
	r   fuzzResult
}

// fuzzWorker simulates the inputs it takes from jobs until jobs is closed,
// tracing code-coverage features as opt's feedback asks.
func fuzzWorker(ctx context.Context, c *act.Campaign, opt Options, jobs <-chan fuzzJob, results chan<- fuzzJobResult) {
	run, _ := NewRunner(c, opt.Subject)
	tr := newEdgeTracer(len(c.CCAI))
	run.Extra = tr
	for j := range jobs {
		tr.reset()
		g := Decode(c, j.data)
		var out Outcome
		var res fuzzResult
		if opt.Feedback == FeedbackGoCover {
			res.features, res.err = goCoverRun(func() { out = run.Run(ctx, g) })
		} else {
			out = run.Run(ctx, g)
		}
		res.finding = out.Finding()
		if res.err == nil {
			res.err = out.Err
		}
		if res.err == nil {
			if opt.Feedback != FeedbackGoCover {
				res.features = tr.finish(&out.Result)
			}
			res.batch = run.TakeBatch()
		}
		results <- fuzzJobResult{j.idx, res}
	}
}

// fuzzLoop is the mutation loop's state: the corpus of kept inputs with
// their weights, the features seen, and the report being filled. Only the
// loop's goroutine touches it, in input order, so results do not depend on
// the worker count.
type fuzzLoop struct {
	opt    Options
	store  *coverage.Store
	kLevel int
	rng    *rand.Rand
	mut    *mutator
	rep    *Report
	virgin edgeVirgin
	queue  []entry
	totalW float64
}

// pick draws a kept input with probability proportional to its weight.
func (l *fuzzLoop) pick() []byte {
	x := l.rng.Float64() * l.totalW
	for _, e := range l.queue {
		if x < e.weight {
			return e.data
		}
		x -= e.weight
	}
	return l.queue[len(l.queue)-1].data
}

// fillInputs chooses the next batch: the given seeds first, then Initial
// random inputs (or more while nothing is kept), then mutations of kept
// inputs, a quarter of them spliced with a second one.
func (l *fuzzLoop) fillInputs(inputs [][]byte) {
	for i := range inputs {
		switch k := l.rep.Sims + i; {
		case k < len(l.opt.Seeds):
			inputs[i] = l.opt.Seeds[k]
		case k < len(l.opt.Seeds)+l.opt.Initial || len(l.queue) == 0:
			inputs[i] = randomInput(l.rng)
		default:
			var other []byte
			if l.rng.IntN(4) == 0 {
				other = l.pick()
			}
			inputs[i] = l.mut.mutate(l.pick(), other)
		}
	}
}

// merge takes a batch's results in input order: each run's states go into
// the store, and an input that gained what the feedback counts is kept,
// weighted by the log of its gain. A failed run ends the loop with its
// error, unless ctx was cancelled (then the rest of the batch is dropped).
func (l *fuzzLoop) merge(ctx context.Context, inputs [][]byte, pending []fuzzResult) error {
	for i := range pending {
		r := pending[i]
		pending[i] = fuzzResult{}
		if r.err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("fuzz: input %d: %w", l.rep.Sims, r.err)
		}
		_, levels := l.store.AddBatch(r.batch, uint64(l.rep.Sims))
		newFeat := l.virgin.add(r.features)
		var gain int
		switch l.opt.Feedback {
		case FeedbackCode, FeedbackGoCover:
			gain = newFeat
		case FeedbackRegions:
			// New regions at K and above (regions nest, so a new
			// region at 2K is also new at K).
			gain = (levels >> uint(l.kLevel)).Count()
		}
		if gain > 0 {
			w := 1 + math.Log2(1+float64(gain))
			l.queue = append(l.queue, entry{data: inputs[i], weight: w})
			l.totalW += w
		}
		if r.finding {
			l.rep.Findings++
		}
		l.rep.Sims++
	}
	return nil
}

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
	method := "fuzz"
	switch opt.Feedback {
	case FeedbackCode:
	case FeedbackRegions:
		method = "fuzz-regions"
	case FeedbackGoCover:
		method = "fuzz-gocover"
		if err := GoCoverAvailable(); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("fuzz: feedback %q: want %q, %q or %q", opt.Feedback, FeedbackCode, FeedbackGoCover, FeedbackRegions)
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
	if _, err := NewRunnerFor(c, opt.Subject); err != nil {
		return nil, err
	}

	h := fnv.New64a()
	h.Write([]byte(method))
	rng := rand.New(rand.NewPCG(c.Seed, h.Sum64()))
	mut := &mutator{rng: rng, maxLen: MaxInputLen}
	rep := &Report{Method: method, Store: store, Series: coverage.NewSeries(method, c.Space)}
	var virgin edgeVirgin
	var queue []entry
	var totalW float64

	type job struct {
		idx  int
		data []byte
	}
	jobs := make(chan job)
	results := make(chan struct {
		idx int
		r   fuzzResult
	}, batchSize)
	var wg sync.WaitGroup
	for w := 0; w < opt.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run, _ := NewRunnerFor(c, opt.Subject)
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
				results <- struct {
					idx int
					r   fuzzResult
				}{j.idx, res}
			}
		}()
	}
	defer func() { close(jobs); wg.Wait() }()

	pick := func() []byte {
		x := rng.Float64() * totalW
		for _, e := range queue {
			if x < e.weight {
				return e.data
			}
			x -= e.weight
		}
		return queue[len(queue)-1].data
	}
	pending := make([]fuzzResult, batchSize)
	inputs := make([][]byte, batchSize)
	for rep.Sims < opt.Budget && ctx.Err() == nil {
		n := min(batchSize, opt.Budget-rep.Sims)
		for i := 0; i < n; i++ {
			switch k := rep.Sims + i; {
			case k < len(opt.Seeds):
				inputs[i] = opt.Seeds[k]
			case k < len(opt.Seeds)+opt.Initial || len(queue) == 0:
				inputs[i] = randomInput(rng)
			default:
				var other []byte
				if rng.IntN(4) == 0 {
					other = pick()
				}
				inputs[i] = mut.mutate(pick(), other)
			}
		}
		go func(in [][]byte) {
			for i := range in {
				jobs <- job{idx: i, data: in[i]}
			}
		}(inputs[:n])
		for i := 0; i < n; i++ {
			r := <-results
			pending[r.idx] = r.r
		}
		for i := 0; i < n; i++ {
			r := pending[i]
			pending[i] = fuzzResult{}
			if r.err != nil {
				if ctx.Err() != nil {
					break
				}
				return rep, fmt.Errorf("fuzz: input %d: %w", rep.Sims, r.err)
			}
			_, levels := store.AddBatch(r.batch, uint64(rep.Sims))
			newFeat := virgin.add(r.features)
			var gain int
			switch opt.Feedback {
			case FeedbackCode, FeedbackGoCover:
				gain = newFeat
			case FeedbackRegions:
				// New regions at K and above (regions nest, so a new
				// region at 2K is also new at K).
				gain = (levels >> uint(kLevel)).Count()
			}
			if gain > 0 {
				w := 1 + math.Log2(1+float64(gain))
				queue = append(queue, entry{data: inputs[i], weight: w})
				totalW += w
			}
			if r.finding {
				rep.Findings++
			}
			rep.Sims++
		}
		inputs = make([][]byte, batchSize) // kept entries alias the old slice's elements
		rep.Series.Record(int64(rep.Sims), store)
		if opt.Progress != nil {
			opt.Progress(rep.Sims, store)
		}
	}
	rep.Corpus = len(queue)
	rep.Edges = virgin.edges
	rep.Features = virgin.feats
	if err := ctx.Err(); err != nil && !errors.Is(err, context.Canceled) {
		return rep, err
	}
	return rep, nil
}

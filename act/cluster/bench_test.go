package cluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/coverage"
	"github.com/nats-io/nats.go/jetstream"
)

// recorder is an act.Executor that runs simulations in this process and
// keeps each result's message: real results for the coordinator benchmark.
type recorder struct {
	r      *act.Runner
	space  coverage.Space
	out    chan act.Result
	bodies [][]byte
}

func (x *recorder) Dispatch(base int, gs []act.Config) {
	for i, g := range gs {
		b, _ := coverage.NewBatch(x.space)
		o := x.r.Run(context.Background(), g, b)
		states, _ := b.MarshalBinary()
		m := act.Result{BatchID: uint64(base), Index: base + i, States: states, Mean: o.Mean, Best: o.Best, BestAt: o.BestAt, Hits: o.Hits, Fault: o.Fault, Capped: o.Capped}
		body, _ := act.EncodeMessage(m)
		x.bodies = append(x.bodies, body)
		x.out <- m
	}
}
func (x *recorder) Results() <-chan act.Result { return x.out }
func (x *recorder) Failed() <-chan error       { return nil }
func (x *recorder) Merged(int)                 {}
func (x *recorder) Close()                     {}

var (
	benchOnce   sync.Once
	benchBodies [][]byte
	benchSpace  coverage.Space
)

// benchResults runs ACTFUZZ_BENCH_SIMS (default 640) simulations of the
// bench campaign (bench/cluster.sh's: CUBIC and Reno, the paper's P and S)
// once and returns their result messages.
func benchResults(b *testing.B) ([][]byte, coverage.Space) {
	benchOnce.Do(func() {
		c, err := act.ParseCampaign("bench.yaml", []byte("ccai: [cubic, reno]\nwindow: 500\n"))
		if err != nil {
			b.Fatal(err)
		}
		r, err := act.NewRunner(c, nil, c.Space)
		if err != nil {
			b.Fatal(err)
		}
		sims := 640
		if n, err := strconv.Atoi(os.Getenv("ACTFUZZ_BENCH_SIMS")); err == nil && n > 0 {
			sims = n
		}
		x := &recorder{r: r, space: c.Space, out: make(chan act.Result, sims+64)}
		if _, err := act.Run(context.Background(), c, act.Options{Budget: sims, Lag: 8,
			Executor: func(context.Context, act.CampaignHeader) (act.Executor, error) { return x, nil }}); err != nil {
			b.Fatal(err)
		}
		benchBodies, benchSpace = x.bodies, c.Space
	})
	return benchBodies, benchSpace
}

// cpuTime is the process's user and system CPU time so far: a cost that
// other processes on a loaded machine change less than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// mergeAll decodes the result messages and merges their states into
// store 64 simulations at a time, as Run does, reusing the batches once
// merged as Run recycles them; add, if set, merges each 64 instead of
// AddBatches.
func mergeAll(b *testing.B, store *coverage.Store, bodies [][]byte, add func([]*coverage.Batch, []uint64)) {
	if add == nil {
		add = func(bs []*coverage.Batch, ids []uint64) { store.AddBatches(bs, ids) }
	}
	free := make([]*coverage.Batch, 64)
	for i := range free {
		free[i], _ = coverage.NewBatch(store.Space()) // as the executor makes them
	}
	var bs []*coverage.Batch
	var ids []uint64
	for i, body := range bodies {
		m, err := act.DecodeMessage(body)
		if err != nil {
			b.Fatal(err)
		}
		bt := free[len(bs)]
		if err := bt.UnmarshalBinary(m.(act.Result).States); err != nil {
			b.Fatal(err)
		}
		bs, ids = append(bs, bt), append(ids, uint64(i))
		if len(bs) == 64 || i == len(bodies)-1 {
			add(bs, ids)
			for _, x := range bs {
				x.Reset()
			}
			bs, ids = bs[:0], ids[:0]
		}
	}
}

// BenchmarkCoordinatorMerge times what a coordinator does with each result
// message, as the cluster executor and Run do it: decode the message,
// decode its states (once: the executor hands the batch to Run), and
// merge them into the store 64 simulations at a time, from an empty store
// through the recorded simulations. It reports the CPU (all cores) and
// the bytes per simulation.
//
//	go test ./act/cluster -run '^$' -bench CoordinatorMerge -benchtime 3x
func BenchmarkCoordinatorMerge(b *testing.B) {
	bodies, space := benchResults(b)
	bytes := 0
	for _, body := range bodies {
		bytes += len(body)
	}
	var cpu time.Duration
	for b.Loop() {
		store, err := coverage.NewStore(space, coverage.Options{Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		c0 := cpuTime()
		mergeAll(b, store, bodies, nil)
		cpu += cpuTime() - c0
	}
	n := float64(b.N * len(bodies))
	b.ReportMetric(float64(cpu.Microseconds())/1000/n, "cpu-ms/sim")
	b.ReportMetric(float64(bytes)/float64(len(bodies)), "bytes/sim")
}

// BenchmarkCoordinatorDecode times the decoding part of
// BenchmarkCoordinatorMerge alone: a result message and its states, per
// simulation.
//
//	ACTFUZZ_BENCH_SIMS=64 go test ./act/cluster -run '^$' -bench CoordinatorDecode
func BenchmarkCoordinatorDecode(b *testing.B) {
	bodies, space := benchResults(b)
	bt, _ := coverage.NewBatch(space)
	for i := 0; b.Loop(); i++ {
		m, err := act.DecodeMessage(bodies[i%len(bodies)])
		if err != nil {
			b.Fatal(err)
		}
		if err := bt.UnmarshalBinary(m.(act.Result).States); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCoordinatorRevisit splits the store's merge (AddBatches alone,
// no decoding) into its two costs, to size a store split over processes
// (package doc, "What a coordinator costs"): the recorded simulations are
// merged into an empty store (first: visits and new regions) and then
// again (again: the same visits, no new region: the work per visit that
// every simulation costs however old the campaign). Their difference over
// the states the first pass found new is the cost of a new state.
//
//	ACTFUZZ_BENCH_SIMS=640 go test ./act/cluster -run '^$' -bench CoordinatorRevisit -benchtime 3x
func BenchmarkCoordinatorRevisit(b *testing.B) {
	bodies, space := benchResults(b)
	// merge adds every recorded simulation to store and returns the CPU
	// of AddBatches alone and the states it found new.
	merge := func(store *coverage.Store) (cpu time.Duration, news, visits int) {
		mergeAll(b, store, bodies, func(bs []*coverage.Batch, ids []uint64) {
			for _, bt := range bs {
				visits += bt.Len()
			}
			c0 := cpuTime()
			for _, r := range store.AddBatches(bs, ids) {
				news += r.NewStates
			}
			cpu += cpuTime() - c0
		})
		return cpu, news, visits
	}
	var first, again time.Duration
	var news, visits, newsAgain int
	for b.Loop() {
		store, err := coverage.NewStore(space, coverage.Options{Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		c, n, v := merge(store)
		first, news, visits = first+c, news+n, visits+v
		c, n, _ = merge(store)
		again, newsAgain = again+c, newsAgain+n
	}
	if newsAgain != 0 {
		b.Fatalf("the second pass found %d new states", newsAgain)
	}
	sims := float64(b.N * len(bodies))
	b.ReportMetric(float64(first.Microseconds())/1000/sims, "first-ms/sim")
	b.ReportMetric(float64(again.Microseconds())/1000/sims, "again-ms/sim")
	b.ReportMetric(float64(news)/sims, "new/sim")
	b.ReportMetric(float64(visits)/sims, "visits/sim")
	if news > 0 {
		b.ReportMetric(float64((first-again).Nanoseconds())/float64(news), "ns/new-state")
	}
}

// BenchmarkCoordinatorParts sizes the store split into parts and an index
// (coverage/parts.go) on the same simulations: the coordinator keeps the
// index, store processes the parts. The recorded simulations are merged
// 64 at a time, from an empty store (first) and again into that store,
// when no state is new (again), as in BenchmarkCoordinatorRevisit. It
// reports the CPU per simulation of:
//
//   - whole: AddBatches into a whole store, the coordinator's merge today;
//
//   - index: the index's merge of the parts' news, decoded from their
//     encoding (what the coordinator would do);
//
//   - parts: every part's merge of its shares, decoded from their
//     encoding (the store processes' work, summed over parts), and
//     part-max, the busiest part's; parts-decode, the decoding of the
//     shares, which is in parts;
//
//   - share: splitting each simulation's states into shares and encoding
//     them (a worker host's extra work).
//
//     ACTFUZZ_BENCH_SIMS=640 go test ./act/cluster -run '^$' -bench CoordinatorParts -benchtime 2x
func BenchmarkCoordinatorParts(b *testing.B) {
	bodies, space := benchResults(b)
	for _, parts := range []int{2, 4} {
		b.Run(strconv.Itoa(parts), func(b *testing.B) {
			var whole, index, partSum, share, decode [2]time.Duration
			var partMax [2][]time.Duration
			for i := range partMax {
				partMax[i] = make([]time.Duration, parts)
			}
			var news [2]int
			for b.Loop() {
				ws, err := coverage.NewStore(space, coverage.Options{Seed: 1})
				if err != nil {
					b.Fatal(err)
				}
				ps := make([]*coverage.Store, parts)
				for j := range ps {
					if ps[j], err = coverage.NewPart(space, coverage.Options{Seed: 1}, j, parts); err != nil {
						b.Fatal(err)
					}
				}
				idx, err := coverage.NewIndex(space, coverage.Options{Seed: 1}, parts, coverage.Parts(ps))
				if err != nil {
					b.Fatal(err)
				}
				shareBuf, _ := coverage.NewBatch(space)
				var pos []uint32
				for pass := range 2 {
					mergeAll(b, ws, bodies, func(bs []*coverage.Batch, ids []uint64) {
						c0 := cpuTime()
						want := ws.AddBatches(bs, ids)
						whole[pass] += cpuTime() - c0
						all := make([][]coverage.PartNews, len(bs))
						for j, p := range ps {
							c0 = cpuTime()
							encs := make([][]byte, len(bs))
							poss := make([][]uint32, len(bs))
							for i, bt := range bs {
								pos = bt.Share(shareBuf, pos, j, parts, coverage.DefaultShards)
								encs[i], _ = shareBuf.MarshalBinary()
								poss[i] = append([]uint32(nil), pos...)
							}
							share[pass] += cpuTime() - c0
							c0 = cpuTime()
							shares := make([]*coverage.Batch, len(bs))
							for i := range shares {
								shares[i] = p.NewBatch()
								if err := shares[i].UnmarshalBinary(encs[i]); err != nil {
									b.Fatal(err)
								}
							}
							decode[pass] += cpuTime() - c0
							got, err := p.AddShares(shares, poss, ids)
							if err != nil {
								b.Fatal(err)
							}
							var encNews [][]byte
							for i := range got {
								e, _ := got[i].AppendBinary(nil)
								encNews = append(encNews, e)
							}
							d := cpuTime() - c0
							partSum[pass] += d
							partMax[pass][j] += d
							c0 = cpuTime()
							for i, e := range encNews {
								var n coverage.PartNews
								if err := n.UnmarshalBinary(e); err != nil {
									b.Fatal(err)
								}
								all[i] = append(all[i], n)
							}
							index[pass] += cpuTime() - c0
						}
						c0 = cpuTime()
						res, err := idx.AddNews(all, ids)
						index[pass] += cpuTime() - c0
						if err != nil {
							b.Fatal(err)
						}
						for i := range res {
							if res[i].NewStates != want[i].NewStates {
								b.Fatalf("simulation %d: %d new states, the whole store %d", ids[i], res[i].NewStates, want[i].NewStates)
							}
							news[pass] += res[i].NewStates
						}
					})
				}
			}
			if news[1] != 0 {
				b.Fatalf("the second pass found %d new states", news[1])
			}
			sims := float64(b.N * len(bodies))
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / sims }
			for pass, name := range []string{"first", "again"} {
				b.ReportMetric(ms(whole[pass]), name+"-whole-ms/sim")
				b.ReportMetric(ms(index[pass]), name+"-index-ms/sim")
				b.ReportMetric(ms(partSum[pass]), name+"-parts-ms/sim")
				b.ReportMetric(ms(slices.Max(partMax[pass])), name+"-part-max-ms/sim")
				b.ReportMetric(ms(share[pass]), name+"-share-ms/sim")
				b.ReportMetric(ms(decode[pass]), name+"-parts-decode-ms/sim")
			}
			b.ReportMetric(float64(news[0])/sims, "new/sim")
		})
	}
}

// BenchmarkPartReload is a store process loading its part again, as at
// each of the coordinator's recoveries: the peak of the process's heap
// objects during the load (runtime/metrics, sampled every 100 µs), and
// the heap live after the first load (the part, and this process's
// embedded NATS server). A process that held the old part while it read
// the new one peaked higher (bench/results/chaos-20261125.md).
func BenchmarkPartReload(b *testing.B) {
	s := startServer(b, b.TempDir(), -1)
	nc := connect(b, s.ClientURL())
	st, err := NewStore(nc, StoreOptions{Part: 1})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	obs, err := partsStore(ctx, nc, st.js, true)
	if err != nil {
		b.Fatal(err)
	}
	var req partRequest
	{
		_, blobs, err := coverage.SplitEncoded(randomStore(b, 3, 100, 20000, 1<<20), 2)
		if err != nil {
			b.Fatal(err)
		}
		open := func() io.ReadCloser { return io.NopCloser(bytes.NewReader(blobs[1])) }
		if _, err := putObject(ctx, nc, obs, jetstream.ObjectMeta{Name: "c/1"}, 1<<20, open, nil); err != nil {
			b.Fatal(err)
		}
		sum := sha256.Sum256(blobs[1])
		req = partRequest{Op: opLoad, Object: "c/1", Sum: sum[:], Parts: 2}
	}
	p := &partState{s: st, id: "c", part: 1}
	if err := p.load(ctx, req); err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	heap := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	held := heap()
	var peak atomic.Uint64
	b.ResetTimer()
	for range b.N {
		done := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			for {
				if h := heap(); h > peak.Load() {
					peak.Store(h)
				}
				select {
				case <-done:
					return
				case <-time.After(100 * time.Microsecond):
				}
			}
		})
		if err := p.load(ctx, req); err != nil {
			b.Fatal(err)
		}
		close(done)
		wg.Wait()
	}
	b.ReportMetric(float64(held)/1e6, "held-MB")
	b.ReportMetric(float64(peak.Load())/1e6, "peak-MB")
	b.ReportMetric(float64(p.store.Len()), "states")
}

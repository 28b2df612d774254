package cluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/coverage"
)

type chunk struct {
	// id is the chunk's BatchID: its first index, or retryBit|index for
	// a configuration retried alone after its chunk was a dead letter.
	id       uint64
	first, n int
	sum      string
	seq      uint64 // work stream sequence, once published
	body     []byte
	// items are the chunk's configurations, kept until merged: a dead
	// letter publishes those without a result again, one a chunk.
	items []act.WorkItem
	// of is, for a configuration retried alone, the chunk that was a
	// dead letter (for the crash fault's detail).
	of *chunk
	// attempt counts, for a configuration published again alone after
	// its results were rejected for their content (spoiled.go), the
	// times it was: its message id differs from the last one's, which
	// the server would drop as a duplicate.
	attempt int
	again   bool // published even though its configurations have results: their shares are lost (redeliver.go)
}

// retryBit marks the BatchID of a configuration retried alone
// (retryBit|index). Indices stay below 2^62 (the executor rejects others),
// so no chunk of a batch has such an id, and a retry's id, like its sum,
// depends only on the configuration: a resumed coordinator recognizes its
// predecessor's retries.
const retryBit = uint64(1) << 62

// single returns the chunk that retries configuration i alone, registering
// it, built from the chunk of a batch that holds i; nil if none does (e.mu
// held).
func (e *Executor) single(i int) (*chunk, error) {
	id := retryBit | uint64(i)
	if c := e.chunks[id]; c != nil {
		return c, nil
	}
	var of *chunk
	for _, c := range e.chunks {
		if c.id&retryBit == 0 && i >= c.first && i < c.first+c.n {
			of = c
			break
		}
	}
	if of == nil {
		return nil, nil
	}
	w := act.Work{Proto: act.ProtocolVersion, Campaign: e.header, BatchID: id, Items: []act.WorkItem{of.items[i-of.first]}}
	body, err := act.EncodeMessage(w)
	if err != nil {
		return nil, err
	}
	c := &chunk{id: id, first: i, n: 1, sum: workSum(w), body: body, items: w.Items, of: of}
	e.chunks[id] = c
	return c, nil
}

// lookup returns the chunk of BatchID id: one published, or the retry of
// a configuration of one (e.mu held).
func (e *Executor) lookup(id uint64) *chunk {
	if c := e.chunks[id]; c != nil || id&retryBit == 0 || id >= retryBit<<1 {
		return c
	}
	c, _ := e.single(int(id &^ retryBit))
	return c
}

// Executor is the coordinator's side: an act.Executor that publishes
// chunks of configurations to the campaign's work stream and delivers the
// validated results of its results stream.
type Executor struct {
	opt     Options
	ctx     context.Context
	cancel  context.CancelFunc
	nc      *nats.Conn
	js      jetstream.JetStream
	kv      jetstream.KeyValue
	work    jetstream.Stream
	results jetstream.Stream
	res     jetstream.Consumer
	space   coverage.Space
	conds   map[string]bool
	header  act.CampaignHeader // without the trace files' content (light)
	full    act.CampaignHeader // with it
	log     *slog.Logger

	out  chan act.Result
	fail chan error
	pubq chan *chunk
	wg   sync.WaitGroup
	subs []*nats.Subscription

	mu     sync.Mutex
	chunks map[uint64]*chunk // by BatchID
	bySeq  map[uint64]*chunk // by work stream sequence
	got    map[int]acker     // received, not merged: the message(s) to ack once merged (nil: dead letter)
	parts  map[int]*partial  // results arriving in parts, by configuration index
	// spoiled are the configurations without a result, one of whose
	// results was rejected for its content (spoiled.go).
	spoiled map[int]*spoiled
	// resSeq is the highest results stream sequence received.
	resSeq uint64
	// holderChanged[j] is closed when store part j's lease changes hands
	// (watchLeases), and made again.
	holderChanged []chan struct{}
	// lease is the coordinator's on its campaign (holdCampaign).
	lease *lease
	partB int // bytes held in parts
	// partLimit bounds partB (4×MaxResult): the first part of another
	// result waits (deferPart) while it is reached.
	partLimit int
	merged    int // configurations below are merged
	stats     Stats
	// poolInFlight counts the pool requests in flight, since poolSince
	// (Stats.PoolWait).
	poolInFlight int
	poolSince    time.Time
	start        sync.Once
	free         chan *coverage.Batch // merged batches, for reuse (Recycle)
	epoch        int64                // this executor's start: publications of another are not duplicates
	// On resume: the results in the stream at the start, and how many
	// messages were received since.
	pending0, seen uint64
	lastDispatch   time.Time
	// partSeq is the number of merges of the store parts since they were
	// loaded (Run's goroutine only).
	partSeq uint64
	// rejected is, by reason, the logging of rejected results
	// (noteRejected).
	rejected map[string]*rejectLog
}

// rejectLog is the logging of one reason's rejected results.
type rejectLog struct {
	last  time.Time // the last line
	since int       // rejected since, not logged
}

// rejectLogEvery is the least time between two lines of one reason's
// rejected results.
const rejectLogEvery = time.Minute

// noteRejected logs a result rejected for reason: the first at once, then
// a line a reason at most every rejectLogEvery, with how many came since.
// A coordinator that continued from its checkpoint after losing a store
// part met hundreds of results of its predecessor's chunks ("unknown
// batch"; bench/cluster-chaos.sh), a warning each. Stats counts them all.
func (e *Executor) noteRejected(reason string, bytes int) {
	e.mu.Lock()
	if e.rejected == nil {
		e.rejected = map[string]*rejectLog{}
	}
	r := e.rejected[reason]
	if r == nil {
		r = &rejectLog{}
		e.rejected[reason] = r
	}
	now := time.Now()
	if !r.last.IsZero() && now.Sub(r.last) < rejectLogEvery {
		r.since++
		e.mu.Unlock()
		return
	}
	since := r.since
	r.last, r.since = now, 0
	e.mu.Unlock()
	if since == 0 {
		e.log.Warn("result rejected", "reason", reason, "bytes", bytes, "next_line_after", rejectLogEvery)
		return
	}
	e.log.Warn("result rejected", "reason", reason, "bytes", bytes, "also_rejected_since_last_line", since)
}

// NewExecutor sets up the campaign's streams, consumers and KV entry on
// nc's JetStream and returns the executor; c is the campaign and h its
// header (act.Options.Executor's argument).
func NewExecutor(ctx context.Context, nc *nats.Conn, c *act.Campaign, h act.CampaignHeader, opt Options) (*Executor, error) {
	opt.defaults()
	if err := ValidID(opt.ID); err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	if _, err := coverage.NewBatch(c.Space); err != nil {
		return nil, err
	}
	if opt.Parts < 0 || opt.Parts > coverage.DefaultShards {
		return nil, fmt.Errorf("%d store parts: want 0 to %d", opt.Parts, coverage.DefaultShards)
	}
	ctx, cancel := context.WithCancel(ctx)
	e := &Executor{opt: opt, ctx: ctx, cancel: cancel, nc: nc, js: js, space: c.Space, header: light(h), full: h, log: opt.Logger.With("campaign", opt.ID),
		out: make(chan act.Result, 1024), fail: make(chan error, 1), pubq: make(chan *chunk, 1<<16),
		chunks: map[uint64]*chunk{}, bySeq: map[uint64]*chunk{}, got: map[int]acker{}, parts: map[int]*partial{}, spoiled: map[int]*spoiled{}, partLimit: 4 * opt.MaxResult,
		conds: map[string]bool{}, stats: Stats{Rejected: map[string]int{}}, free: make(chan *coverage.Batch, 1024), epoch: time.Now().UnixNano()}
	for _, cs := range c.Checks() {
		e.conds[cs.Name] = true
	}
	if err := e.setup(ctx); err != nil {
		cancel()
		if e.lease != nil {
			e.lease.release(false)
		}
		return nil, err
	}
	return e, nil
}

func (e *Executor) setup(ctx context.Context) error {
	id := e.opt.ID
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := e.holdCampaign(sctx); err != nil {
		return err
	}
	if !e.opt.Resume {
		for _, s := range []string{workStream(id), resultsStream(id), statesStream(id)} {
			if err := e.js.DeleteStream(sctx, s); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
				return fmt.Errorf("deleting stream %s: %w", s, err)
			}
		}
	}
	var err error
	// The stream takes this coordinator's subject alone from here on:
	// the fence against a predecessor stopped past its lease (coordlease.go).
	e.work, err = e.js.CreateOrUpdateStream(sctx, jetstream.StreamConfig{Name: workStream(id), Subjects: []string{workSubject(id, e.epoch)},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage, MaxMsgSize: maxWork,
		Description: "actfuzz: configuration chunks of campaign " + id})
	if err != nil {
		return fmt.Errorf("work stream: %w", err)
	}
	// Chunks of a coordinator that died: this one publishes again
	// whatever its checkpoint did not merge.
	if err := e.work.Purge(sctx); err != nil {
		return fmt.Errorf("purging the work stream: %w", err)
	}
	e.results, err = e.js.CreateOrUpdateStream(sctx, jetstream.StreamConfig{Name: resultsStream(id), Subjects: []string{resultSubject(id)},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage, MaxMsgSize: int32(e.opt.MaxResult + partHeadroom),
		Description: "actfuzz: results of campaign " + id})
	if err != nil {
		return fmt.Errorf("results stream: %w", err)
	}
	if _, err := e.js.CreateOrUpdateConsumer(sctx, workStream(id), jetstream.ConsumerConfig{Durable: workersConsumer,
		AckPolicy: jetstream.AckExplicitPolicy, AckWait: e.opt.AckWait, MaxDeliver: e.opt.MaxDeliver, MaxAckPending: -1,
		Description: "actfuzz worker hosts"}); err != nil {
		return fmt.Errorf("workers consumer: %w", err)
	}
	// A fresh consumer: the results an earlier coordinator held unacked
	// (received, not merged) are delivered again at once. Its AckWait
	// redelivers a result whose delivery was lost (a server restart); a
	// result held unmerged longer comes again, and is a duplicate.
	if err := deleteCoordinatorConsumers(sctx, e.results); err != nil {
		return fmt.Errorf("results consumer: %w", err)
	}
	e.res, err = e.results.CreateOrUpdateConsumer(sctx, jetstream.ConsumerConfig{Durable: coordinatorConsumerOf(e.epoch),
		AckPolicy: jetstream.AckExplicitPolicy, AckWait: e.opt.AckWait, MaxAckPending: -1, DeliverPolicy: jetstream.DeliverAllPolicy,
		Description: "actfuzz coordinator"})
	if err != nil {
		return fmt.Errorf("results consumer: %w", err)
	}
	if e.opt.Resume {
		e.pending0 = e.res.CachedInfo().NumPending
	}
	if e.opt.Parts > 0 {
		if err := e.setupParts(sctx); err != nil {
			return err
		}
	}
	e.kv, err = campaigns(sctx, e.js, true)
	if err != nil {
		return fmt.Errorf("KV bucket %s: %w", Bucket, err)
	}
	rec, err := encodeRecord(record{Proto: act.ProtocolVersion, Header: e.header, Chunk: e.opt.Chunk, MaxResult: e.opt.MaxResult,
		Parts: e.opt.Parts, Shards: coverage.DefaultShards})
	if err != nil {
		return err
	}
	// The record is one message (the trace files are not in it: only
	// the campaign file could make it too large).
	if limit := min(maxRecord, int(e.nc.MaxPayload())); len(rec) > limit {
		return fmt.Errorf("%w: %d bytes (campaign file %s: %d bytes), the limit is %d (the server's max_payload %d, at most %d)",
			ErrHeaderTooLarge, len(rec), e.header.Path, len(e.header.Source), limit, e.nc.MaxPayload(), maxRecord)
	}
	// The trace files go first: a worker host that sees the record finds
	// them.
	if len(e.full.LinkTraces) > 0 {
		obs, err := traces(sctx, e.js, true)
		if err != nil {
			return fmt.Errorf("object store %s: %w", TraceBucket, err)
		}
		for i, f := range e.full.LinkTraces {
			open := func() io.ReadCloser { return io.NopCloser(bytes.NewReader(f.Gzip)) }
			if _, err := putObject(sctx, e.nc, obs, jetstream.ObjectMeta{Name: traceObject(id, i), Description: f.Name + " (gzip)"},
				e.payload(), open, nil); err != nil {
				return fmt.Errorf("object store %s: trace file %s: %w", TraceBucket, f.Name, err)
			}
		}
	}
	if _, err := e.kv.Put(sctx, id, rec); err != nil {
		return fmt.Errorf("KV bucket %s: %w", Bucket, err)
	}
	sub, err := e.nc.Subscribe(refusedSubject(id), func(m *nats.Msg) {
		text := string(m.Data[:min(len(m.Data), 1024)])
		e.mu.Lock()
		e.stats.Refusals++
		e.mu.Unlock()
		e.log.Error("a worker host refused the campaign", "why", text)
	})
	if err != nil {
		return err
	}
	e.subs = append(e.subs, sub)
	sub, err = e.nc.Subscribe("$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES."+workStream(id)+"."+workersConsumer, e.deadLetter)
	if err != nil {
		return err
	}
	e.subs = append(e.subs, sub)
	// Chunks are published by several goroutines at once: each waits for
	// its publication's ack, a round trip to the server, and one alone
	// publishes a chunk a round trip (8 for a batch of 64), a bound on
	// the campaign's rate when the coordinator is away from the server
	// (bench/cluster-latency.sh with COORD_MS). The work stream's order
	// may then differ from the dispatch's; results do not depend on it.
	e.wg.Add(publishers + 2)
	for range publishers {
		go e.publish()
	}
	go e.watchSpoiled()
	go e.holdResults()
	return nil
}

// publishers is the number of goroutines that publish chunks.
const publishers = 4

// Dispatch cuts configurations base… into chunks and queues them for
// publication.
func (e *Executor) Dispatch(base int, gs []act.Config) {
	var cs []*chunk
	for lo := 0; lo < len(gs); lo += e.opt.Chunk {
		w := act.Work{Proto: act.ProtocolVersion, Campaign: e.header, BatchID: uint64(base + lo)}
		for i := lo; i < min(lo+e.opt.Chunk, len(gs)); i++ {
			w.Items = append(w.Items, act.WorkItem{Index: base + i, Config: gs[i]})
		}
		body, err := act.EncodeMessage(w)
		if err != nil {
			e.failWith(err)
			return
		}
		cs = append(cs, &chunk{id: w.BatchID, first: base + lo, n: len(w.Items), sum: workSum(w), body: body, items: w.Items})
	}
	e.mu.Lock()
	for _, c := range cs {
		e.chunks[c.id] = c
	}
	e.lastDispatch = time.Now()
	e.mu.Unlock()
	for _, c := range cs {
		select {
		case e.pubq <- c:
		case <-e.ctx.Done():
			return
		}
	}
	e.start.Do(func() {
		e.wg.Add(1)
		go e.consume()
	})
}

func (e *Executor) failWith(err error) {
	select {
	case e.fail <- err:
	default:
	}
}

// publish publishes queued chunks (in order, but at once with the other
// publishers), retrying through server restarts.
func (e *Executor) publish() {
	defer e.wg.Done()
	drained := e.pending0 == 0
	for {
		var c *chunk
		select {
		case c = <-e.pubq:
		case <-e.ctx.Done():
			return
		}
		if !drained {
			// Resuming: read the results already in the stream first
			// (for at most 10 s), and publish only the chunks that
			// still miss some.
			for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && e.ctx.Err() == nil; {
				e.mu.Lock()
				done := e.seen >= e.pending0
				e.mu.Unlock()
				if done {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			drained = true
		}
		e.mu.Lock()
		have := true
		for i := c.first; i < c.first+c.n && have; i++ {
			_, ok := e.got[i]
			have = ok || i < e.merged
		}
		have = have && !c.again
		if have {
			e.stats.Skipped++
		}
		e.mu.Unlock()
		if have {
			continue
		}
		m := &nats.Msg{Subject: workSubject(e.opt.ID, e.epoch), Header: nats.Header{}, Data: c.body}
		m.Header.Set(hdrCampaign, e.opt.ID)
		var ack *jetstream.PubAck
		err := retry(e.ctx, func() error {
			if !e.acting() {
				return errLeaseLost // the lease lost or closing: e.ctx has ended
			}
			pctx, cancel := context.WithTimeout(e.ctx, 10*time.Second)
			defer cancel()
			var err error
			// The message id makes a retried publication (a lost ack)
			// land once.
			id := fmt.Sprintf("%s-%d-%d-%s", e.opt.ID, e.epoch, c.id, c.sum[:16])
			if c.attempt > 0 {
				id += fmt.Sprintf("-again%d", c.attempt)
			}
			ack, err = e.js.PublishMsg(pctx, m, jetstream.WithMsgID(id))
			if errors.Is(err, nats.ErrMaxPayload) {
				// It can never go: retrying would hang the campaign.
				e.failWith(fmt.Errorf("chunk of configurations %d–%d: %d bytes, over the NATS server's max_payload of %d", c.first, c.first+c.n-1, len(c.body), e.nc.MaxPayload()))
				e.cancel()
				return err
			}
			if err != nil {
				e.log.Warn("publishing a chunk", "first", c.first, "err", err)
			}
			return err
		})
		if err != nil {
			return // closing
		}
		e.mu.Lock()
		c.seq, c.body = ack.Sequence, nil
		e.bySeq[ack.Sequence] = c
		e.stats.Published++
		e.mu.Unlock()
	}
}

// batch returns a batch for decoding a result's states.
func (e *Executor) batch() *coverage.Batch {
	select {
	case b := <-e.free:
		return b
	default:
		b, _ := coverage.NewBatch(e.space) // the space was checked in NewExecutor
		return b
	}
}

// Recycle implements act.BatchRecycler: Run has merged b.
func (e *Executor) Recycle(b *coverage.Batch) {
	select {
	case e.free <- b:
	default:
	}
}

// Results implements act.Executor.
func (e *Executor) Results() <-chan act.Result { return e.out }

// Failed implements act.Executor.
func (e *Executor) Failed() <-chan error { return e.fail }

// Merged acks the results of the configurations below upto: Run has
// merged them.
func (e *Executor) Merged(upto int) {
	// Each ack once the lease is fresh; none once it is lost: the
	// results are the new holder's.
	ack := func(a acker) {
		if e.acting() {
			_ = a.Ack()
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for i := e.merged; i < upto; i++ {
		if m := e.got[i]; m != nil {
			ack(m)
		}
		delete(e.got, i)
		// Parts of a result that came whole too (a redelivery).
		if p := e.parts[i]; p != nil {
			ack(p.msgs)
			e.partB -= p.size
			delete(e.parts, i)
		}
	}
	for id, c := range e.chunks {
		if c.first+c.n <= upto {
			delete(e.chunks, id)
			if e.bySeq[c.seq] == c {
				delete(e.bySeq, c.seq)
			}
		}
	}
	e.merged = max(e.merged, upto)
}

// Stats returns the counts so far.
func (e *Executor) Stats() Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.stats
	s.Rejected = maps.Clone(s.Rejected)
	return s
}

// Close stops publishing and consuming and takes the campaign's header
// out of the KV bucket (worker hosts leave it). The streams stay for a
// --resume, results not merged unacked in them, unless every chunk
// dispatched was merged: then they are deleted.
func (e *Executor) Close() {
	e.cancel()
	for _, s := range e.subs {
		_ = s.Unsubscribe()
	}
	e.wg.Wait()
	if e.lease != nil {
		// Released last, once the campaign's header and streams are
		// settled, and only if they are still this coordinator's.
		defer e.lease.release(false)
	}
	if !e.stillHeld() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.kv.Delete(ctx, e.opt.ID); err != nil {
		e.log.Warn("removing the campaign header", "err", err)
	}
	if len(e.full.LinkTraces) > 0 {
		if obs, err := traces(ctx, e.js, false); err == nil {
			for i := range e.full.LinkTraces {
				if err := obs.Delete(ctx, traceObject(e.opt.ID, i)); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
					e.log.Warn("removing a trace file", "object", traceObject(e.opt.ID, i), "err", err)
				}
			}
		}
	}
	if e.opt.Parts > 0 {
		if obs, err := partsStore(ctx, e.nc, e.js, false); err == nil {
			for j := range e.opt.Parts {
				for _, name := range []string{loadObject(e.opt.ID, j), snapObject(e.opt.ID, j)} {
					if err := obs.Delete(ctx, name); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
						e.log.Warn("removing a store part's object", "object", name, "err", err)
					}
				}
			}
		}
	}
	// Everything dispatched was merged (the budget is spent): nothing to
	// resume from, so the streams go.
	e.mu.Lock()
	finished := len(e.chunks) == 0
	e.mu.Unlock()
	if finished {
		for _, s := range []string{workStream(e.opt.ID), resultsStream(e.opt.ID), statesStream(e.opt.ID)} {
			if err := e.js.DeleteStream(ctx, s); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
				e.log.Warn("deleting a finished campaign's stream", "stream", s, "err", err)
			}
		}
	}
	st := e.Stats()
	e.log.Info("cluster executor closed", "chunks", st.Published, "results", st.Results, "duplicates", st.Duplicates, "redelivered", st.Redelivered,
		"stale", st.Stale, "rejected", st.RejectedTotal(), "refusals", st.Refusals, "dead_letters", st.DeadLetter, "reissued", st.Reissued, "states_dropped", st.Dropped,
		"deferred_parts", st.Deferred, "part_merges", st.PartMerges, "part_merge_wait", st.PartMergeWait,
		"pool_requests", st.PoolRequests, "pool_states", st.PoolStates, "pool_wait", st.PoolWait)
}

// validShares: one SHA-256 per part.
func validShares(sums [][]byte, parts int) bool {
	if len(sums) != parts {
		return false
	}
	for _, s := range sums {
		if len(s) != sha256.Size {
			return false
		}
	}
	return true
}

// setupParts makes the states stream, a consumer per part, and the object
// store of parts.
func (e *Executor) setupParts(ctx context.Context) error {
	id := e.opt.ID
	if _, err := e.js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: statesStream(id), Subjects: []string{"actfuzz." + id + ".states.*"},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage, MaxMsgSize: int32(e.payload() + partHeadroom),
		Description: "actfuzz: the shares of the store parts of campaign " + id}); err != nil {
		return fmt.Errorf("states stream: %w", err)
	}
	for j := range e.opt.Parts {
		// A fresh consumer: what a store process held unmerged for an
		// earlier coordinator is delivered again at once.
		if err := e.remakePartConsumer(ctx, j); err != nil {
			return err
		}
	}
	if _, err := partsStore(ctx, e.nc, e.js, true); err != nil {
		return fmt.Errorf("object store %s: %w", PartsBucket, err)
	}
	// The coordinator makes the leases bucket: store processes may not
	// make streams (package doc, "What is trusted").
	leases, err := leasesBucket(ctx, e.js, true)
	if err != nil {
		return fmt.Errorf("KV bucket %s: %w", LeasesBucket, err)
	}
	w, err := leases.Watch(e.ctx, id+".*")
	if err != nil {
		return fmt.Errorf("KV bucket %s: watching the leases: %w", LeasesBucket, err)
	}
	e.holderChanged = make([]chan struct{}, e.opt.Parts)
	for j := range e.holderChanged {
		e.holderChanged[j] = make(chan struct{})
	}
	e.wg.Add(1)
	go e.watchLeases(w)
	return nil
}

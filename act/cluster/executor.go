package cluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/coverage"
)

// Options configure a coordinator's executor.
type Options struct {
	// ID names the campaign's streams (see ValidID, CampaignID).
	ID string
	// Resume keeps the results stream of an earlier coordinator of the
	// campaign (act.Options.Resume); otherwise its streams start empty.
	Resume bool
	// Chunk is the configurations per Work message (default 8).
	Chunk int
	// AckWait is how long a chunk may go without an ack or a heartbeat
	// before it is redelivered (default 30 s); MaxDeliver bounds its
	// deliveries before it is a dead letter (default 5).
	AckWait    time.Duration
	MaxDeliver int
	// MaxResult bounds a result message in bytes (default 8 MiB); the
	// server's max_payload must allow it.
	MaxResult int
	// Parts, when not 0, splits the coverage store into that many parts
	// kept by store processes (`actfuzz store --part J`): hosts send each
	// result's states to them, and the Executor is an act.StoreParts
	// (act.Options.StoreParts must be the same).
	Parts int
	// Memory is the campaign's memory budget given to the coordinator
	// (act.Campaign.GivenMemory; 0: none). A store process without a cap
	// of its own (StoreOptions.Memory) caps its part at the store's share
	// of it, as Run caps the coordinator's index (act.ErrIndexCapped):
	// every process of the campaign keeps to the budget.
	Memory int64
	// PartTimeout is how long the coordinator waits for a store part that
	// does not answer, or for shares its part lacks, before it stops the
	// campaign with an error naming the part (default 2 min).
	PartTimeout time.Duration
	// Lease is how long the coordinator's lease on its campaign may stay
	// unrenewed before another coordinator takes the campaign over
	// (default DefaultLease; lease.go).
	Lease  time.Duration
	Logger *slog.Logger
}

func (o *Options) defaults() {
	if o.Chunk <= 0 {
		o.Chunk = 8
	}
	if o.AckWait <= 0 {
		o.AckWait = 30 * time.Second
	}
	if o.MaxDeliver <= 0 {
		o.MaxDeliver = 5
	}
	if o.MaxResult <= 0 {
		o.MaxResult = 8 << 20
	}
	if o.PartTimeout <= 0 {
		o.PartTimeout = 2 * time.Minute
	}
	if o.Lease <= 0 {
		o.Lease = DefaultLease
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// maxWork bounds a Work message (a chunk of configurations and the
// campaign header).
const maxWork = 4 << 20

// Stats counts what the coordinator's executor received.
type Stats struct {
	Published  int // Work messages (chunks)
	Skipped    int // chunks not published again on resume: their results were in the stream
	Results    int // results accepted
	Assembled  int // of which results that came in parts (over the server's max_payload)
	Duplicates int // results of a configuration already received (redeliveries)
	// Redelivered counts the result messages delivered to the coordinator
	// again: one held unmerged past AckWait, a part deferred (Deferred),
	// or a delivery lost on its way (the server or the coordinator away).
	Redelivered int
	Stale       int            // results of configurations merged before (a resume)
	Rejected    map[string]int // by reason: never merged
	Refusals    int            // worker hosts that refused the campaign
	DeadLetter  int            // chunks given up after MaxDeliver deliveries
	Retried     int            // configurations of dead letters published again alone
	Crashes     int            // configurations charged a crash fault: alone, they reached MaxDeliver
	// HolderChanges counts the store parts' leases that changed hands
	// (a standby took a part over, or its holder stopped).
	HolderChanges int
	Remade        int // part consumers made again: a merge's shares stayed missing (redeliver.go)
	// Reissued counts the configurations published again alone because
	// a result of theirs was rejected for its content after its host
	// acked its chunk (a host's bug), or none came (a result lost;
	// spoiled.go).
	Reissued int
	Dropped  int // results accepted without their states: over MaxResult (capped)
	Deferred int // parts naked to come again: the parts held were at the limit
	// PartMerges counts the merges of the store parts and PartMergeWait
	// the time Run waited for them (the parts merging and answering):
	// a campaign's rate is bounded by batches over that wait.
	PartMerges    int
	PartMergeWait time.Duration
	// PoolRequests counts the selector's requests to the store parts
	// for pools (to draw a visit, ACT Method 1 line 8), PoolStates the
	// states they asked for, and PoolWait the time the selection waited
	// for their answers (requests to different parts overlap): with the
	// parts across a network, each request is a round trip on the
	// selection's path.
	PoolRequests int
	PoolStates   int
	PoolWait     time.Duration
}

// RejectedTotal is the number of rejected messages.
func (s Stats) RejectedTotal() int {
	n := 0
	for _, v := range s.Rejected {
		n += v
	}
	return n
}

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
	e.work, err = e.js.CreateOrUpdateStream(sctx, jetstream.StreamConfig{Name: workStream(id), Subjects: []string{workSubject(id)},
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
	if err := e.results.DeleteConsumer(sctx, coordinatorConsumer); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return fmt.Errorf("results consumer: %w", err)
	}
	e.res, err = e.results.CreateOrUpdateConsumer(sctx, jetstream.ConsumerConfig{Durable: coordinatorConsumer,
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
		m := &nats.Msg{Subject: workSubject(e.opt.ID), Header: nats.Header{}, Data: c.body}
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

// consume receives results until the executor closes.
func (e *Executor) consume() {
	defer e.wg.Done()
	// Run dispatches the batches it has chosen one after the other at
	// the start (a resume: all those the checkpoint had not merged); the
	// results of an earlier coordinator in the stream are for them, and
	// would be rejected as of unknown batches if read before. Wait until
	// the dispatches pause.
	for e.ctx.Err() == nil {
		e.mu.Lock()
		quiet := time.Since(e.lastDispatch) >= 20*time.Millisecond
		e.mu.Unlock()
		if quiet {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	// One pull subscription for the executor's life (nats.go's Messages),
	// not a Fetch after another: Fetch waits for the server's answer on a
	// timer of its own (500 ms + 1 s here) and then unsubscribes, and a
	// result the server delivered to it meanwhile (a loaded coordinator
	// or server) would be lost to the coordinator until AckWait (30 s)
	// redelivered it, the merge waiting for it meanwhile. A subscription
	// receives whatever the server delivers to it, however late.
	for e.ctx.Err() == nil {
		it, err := e.res.Messages(jetstream.PullMaxMessages(256))
		if err != nil {
			e.log.Warn("receiving results", "err", err)
			select {
			case <-time.After(250 * time.Millisecond):
			case <-e.ctx.Done():
			}
			continue
		}
		for {
			m, err := it.Next(jetstream.NextContext(e.ctx))
			if err != nil {
				if e.ctx.Err() == nil {
					e.log.Warn("receiving results", "err", err)
				}
				break
			}
			if !e.acting() {
				break // e.ctx has ended
			}
			md, mdErr := m.Metadata()
			e.receive(m)
			if mdErr == nil {
				e.mu.Lock()
				if md.NumDelivered > 1 {
					e.stats.Redelivered++
				}
				e.resSeq = max(e.resSeq, md.Sequence.Stream)
				e.mu.Unlock()
			}
		}
		it.Stop()
		select { // the consumer gone, or the server away: do not spin
		case <-time.After(250 * time.Millisecond):
		case <-e.ctx.Done():
		}
	}
}

// acker acknowledges what a result came in: one message, or its parts.
type acker interface {
	Ack() error
	// InProgress tells the server the message is still being worked on:
	// a result held unmerged (the lag's batches wait for their merge)
	// is not delivered again after AckWait (holdResults).
	InProgress() error
}

// acks acknowledges the parts of a result.
type acks []jetstream.Msg

func (a acks) Ack() error {
	var err error
	for _, m := range a {
		err = errors.Join(err, m.Ack())
	}
	return err
}

func (a acks) InProgress() error {
	var err error
	for _, m := range a {
		err = errors.Join(err, m.InProgress())
	}
	return err
}

// holdResults tells the server, every AckWait/3, that the results the
// coordinator holds unmerged are in progress. Without it a result held
// past AckWait (a campaign whose lag of 8 batches takes longer than that
// to merge) came again, a duplicate: 201 of 1,500 results in a run of
// examples/make-run.yaml (1,500 simulations, 2 parts, a host of 2 slots),
// none with it.
func (e *Executor) holdResults() {
	defer e.wg.Done()
	tick := time.NewTicker(max(e.opt.AckWait/3, time.Millisecond))
	defer tick.Stop()
	var held []acker
	for {
		select {
		case <-e.ctx.Done():
			return
		case <-tick.C:
		}
		held = held[:0]
		e.mu.Lock()
		for _, m := range e.got {
			if m != nil {
				held = append(held, m)
			}
		}
		for _, p := range e.parts {
			held = append(held, p.msgs)
		}
		e.mu.Unlock()
		for _, m := range held {
			if !e.acting() {
				return
			}
			_ = m.InProgress() // a message already acked (merged meanwhile) answers nothing
		}
	}
}

// partial is a result arriving in parts.
type partial struct {
	n     int
	parts [][]byte
	msgs  acks
	have  int
	size  int
}

// deferPart is assemble's answer for a part that must come again later:
// the parts held are at the coordinator's limit.
const deferPart = "deferred"

// deferFor is how long a deferred part waits before it is redelivered.
const deferFor = 500 * time.Millisecond

// receive validates one message of the results stream.
func (e *Executor) receive(m jetstream.Msg) {
	var r act.Result
	var reason string
	var ack acker = m
	data, part := m.Data(), -1
	if m.Headers().Get(hdrPart) != "" {
		var parts acks
		if data, part, parts, reason = e.assemble(m); reason == "" && data == nil {
			return // more parts to come
		}
		if reason == deferPart && e.acting() {
			_ = m.NakWithDelay(deferFor)
		}
		if reason == deferPart {
			return
		}
		if parts != nil {
			ack = parts
		}
	}
	if reason == "" {
		r, reason = e.validate(data, m.Headers(), ack, part)
	}
	if reason != "" {
		if reason != "duplicate" && reason != "stale" {
			e.noteRejected(reason, len(data))
		}
		if e.acting() {
			_ = ack.Ack()
		}
		return
	}
	select {
	case e.out <- r:
	case <-e.ctx.Done():
	}
}

// assemble keeps a part of a result; once it has them all, it returns the
// result's body, its index (the parts') and its messages.
func (e *Executor) assemble(m jetstream.Msg) ([]byte, int, acks, string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.seen++
	var f [4]uint64
	fields := strings.Split(m.Headers().Get(hdrPart), "/")
	ok := len(fields) == 4
	for i := 0; ok && i < 4; i++ {
		var err error
		bits := 62
		if i == 0 {
			bits = 64 // a batch id may carry retryBit
		}
		f[i], err = strconv.ParseUint(fields[i], 10, bits)
		ok = err == nil
	}
	idx, i, n := int(f[1]), int(f[2]), int(f[3])
	var c *chunk
	if ok {
		c = e.lookup(f[0])
	}
	data := m.Data()
	reason := ""
	switch {
	case m.Headers().Get(hdrCampaign) != e.opt.ID:
		reason = "another campaign"
	case !ok || n < 2 || i >= n || n > e.opt.MaxResult/1024+1:
		reason = "malformed part"
	case c == nil && idx < e.merged:
		reason = "stale"
	case c == nil:
		reason = "unknown batch"
	case idx < c.first || idx >= c.first+c.n:
		reason = "index outside its batch"
	case m.Headers().Get(hdrWork) != c.sum:
		reason = "configuration does not match its batch"
	}
	if _, dup := e.got[idx]; reason == "" && (dup || idx < e.merged) {
		reason = "duplicate"
	}
	p := e.parts[idx]
	switch {
	case reason != "":
	case p == nil && e.partB+len(data) > e.partLimit:
		// Genuine results' parts may come interleaved from many hosts:
		// this one comes again later, when those held are complete
		// (theirs are always taken, so they complete).
		e.stats.Deferred++
		return nil, 0, nil, deferPart
	case p == nil:
		p = &partial{n: n, parts: make([][]byte, n)}
		e.parts[idx] = p
	case p.n != n:
		reason = "malformed part"
	case p.parts[i] != nil:
		reason = "duplicate"
	}
	if reason == "" && p.size+len(data) > e.opt.MaxResult {
		reason = "oversized"
	}
	if reason != "" {
		e.countRejected(reason)
		return nil, 0, nil, reason
	}
	p.parts[i], p.msgs = data, append(p.msgs, m)
	p.have++
	p.size += len(data)
	e.partB += len(data)
	if p.have < p.n {
		return nil, 0, nil, ""
	}
	delete(e.parts, idx)
	e.partB -= p.size
	e.stats.Assembled++
	return bytes.Join(p.parts, nil), idx, p.msgs, ""
}

// countRejected counts a message rejected for reason (e.mu held).
func (e *Executor) countRejected(reason string) {
	switch reason {
	case "duplicate":
		e.stats.Duplicates++
	case "stale":
		e.stats.Stale++
	default:
		e.stats.Rejected[reason]++
	}
}

// validate checks a result's message, or the result of configuration
// part put together from parts (assemble counted their messages; -1 for
// one message), and records ack as what to acknowledge once it is merged.
func (e *Executor) validate(data []byte, hdr nats.Header, ack acker, part int) (act.Result, string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if part < 0 {
		e.seen++
	}
	reject := func(reason string) (act.Result, string) {
		e.countRejected(reason)
		return act.Result{}, reason
	}
	if len(data) > e.opt.MaxResult {
		return reject("oversized")
	}
	if hdr.Get(hdrCampaign) != e.opt.ID {
		return reject("another campaign")
	}
	msg, err := act.DecodeMessage(data)
	if err != nil {
		return reject("malformed")
	}
	r, ok := msg.(act.Result)
	if !ok {
		return reject("not a result")
	}
	if r.BatchID >= retryBit<<1 || r.Index < 0 {
		return reject("unknown batch")
	}
	if part >= 0 && r.Index != part {
		return reject("parts of another configuration")
	}
	c := e.lookup(r.BatchID)
	switch {
	case c == nil && r.Index < e.merged:
		return reject("stale")
	case c == nil:
		return reject("unknown batch")
	case r.Index < c.first || r.Index >= c.first+c.n:
		return reject("index outside its batch")
	case hdr.Get(hdrWork) != c.sum:
		return reject("configuration does not match its batch")
	}
	if _, dup := e.got[r.Index]; dup || r.Index < e.merged {
		return reject("duplicate")
	}
	// From here on the result is one of the chunk's, spoiled by its
	// content: if its host acked the chunk, no other comes.
	spoil := func(reason string) (act.Result, string) {
		e.spoil(r.Index, c, reason)
		return reject(reason)
	}
	switch {
	case r.StatesDropped != 0 && (len(r.States) != 0 || r.Shares != nil || r.StatesDropped <= e.opt.MaxResult):
		// A host drops the states of a result over MaxResult only.
		return spoil("states dropped under the limit")
	case len(r.States) == 0 && r.Fault == nil && r.StatesDropped == 0 && r.Shares == nil:
		return spoil("no states")
	case e.opt.Parts == 0 && r.Shares != nil:
		return spoil("shares without store parts")
	case e.opt.Parts > 0 && len(r.States) != 0:
		return spoil("states not sent to the store parts")
	case r.Shares != nil && !validShares(r.Shares, e.opt.Parts):
		return spoil("shares")
	case len(r.Mean) != 0 && len(r.Mean) != len(e.space.Vars):
		return spoil("mean state of another space")
	case len(r.Hits) > 64*max(len(e.conds), 1):
		return spoil("hits")
	}
	for _, h := range r.Hits {
		if !e.conds[h.Condition] {
			return spoil("hit of an unknown condition")
		}
	}
	// Decoded here, once: Run merges this batch (Result.Decoded).
	if len(r.States) > 0 {
		b := e.batch()
		if b.UnmarshalBinary(r.States) != nil {
			e.Recycle(b)
			return spoil("states outside the campaign's space")
		}
		r.Decoded, r.States = b, nil
	}
	e.got[r.Index] = ack
	e.stats.Results++
	if r.StatesDropped > 0 {
		e.stats.Dropped++
		e.log.Warn("capped: a result over max_result came without its states; its coverage is not merged",
			"config", r.Index, "bytes", r.StatesDropped, "max_result", e.opt.MaxResult)
	}
	return r, ""
}

// deadLetter handles a chunk that reached MaxDeliver deliveries without
// an ack. Usually one configuration kills the hosts that run it, and the
// others are innocent: so a chunk of several configurations is not charged
// a fault; each of its configurations without a result is published again
// alone (single), and only a configuration alone that reaches MaxDeliver
// becomes a crash fault. The innocent ones run as anywhere else, and Run
// merges every result in configuration order whatever chunk brought it.
func (e *Executor) deadLetter(m *nats.Msg) {
	var adv struct {
		Stream     string `json:"stream"`
		StreamSeq  uint64 `json:"stream_seq"`
		Deliveries uint64 `json:"deliveries"`
	}
	if err := json.Unmarshal(m.Data, &adv); err != nil {
		return
	}
	e.mu.Lock()
	c := e.bySeq[adv.StreamSeq]
	// The message goes from the stream now; a repeated advisory must not
	// charge or retry it twice.
	delete(e.bySeq, adv.StreamSeq)
	var lost []act.Result
	var again []*chunk
	var err error
	if c != nil {
		e.stats.DeadLetter++
		for i := c.first; i < c.first+c.n && err == nil; i++ {
			if _, ok := e.got[i]; ok || i < e.merged {
				continue
			}
			if c.n > 1 {
				var s *chunk
				if s, err = e.single(i); s != nil && s.seq == 0 && s.body != nil {
					again = append(again, s)
				}
				continue
			}
			e.got[i] = nil
			detail := fmt.Sprintf("configuration %d delivered %d times to worker hosts without a result (dead letter): a host died on it each time", i, adv.Deliveries)
			if c.of != nil {
				detail += fmt.Sprintf(" (run alone after its chunk of configurations %d–%d was a dead letter)", c.of.first, c.of.first+c.of.n-1)
			}
			lost = append(lost, act.Result{BatchID: c.id, Index: i, Fault: &corpus.Finding{Kind: corpus.FaultCrash, Detail: detail}})
		}
		e.stats.Retried += len(again)
		e.stats.Crashes += len(lost)
	}
	e.mu.Unlock()
	if c == nil {
		return
	}
	if err != nil {
		e.failWith(err)
		return
	}
	if len(lost) > 0 {
		e.log.Error("dead letter: configuration charged a crash fault", "config", c.first, "deliveries", adv.Deliveries)
	} else {
		e.log.Warn("dead letter: chunk given up, its configurations without a result published again one by one",
			"first", c.first, "deliveries", adv.Deliveries, "retried", len(again))
	}
	if !e.acting() {
		return
	}
	dctx, cancel := context.WithTimeout(e.ctx, 10*time.Second)
	_ = e.work.DeleteMsg(dctx, adv.StreamSeq)
	cancel()
	for _, s := range again {
		select {
		case e.pubq <- s:
		case <-e.ctx.Done():
			return
		}
	}
	for _, r := range lost {
		select {
		case e.out <- r:
		case <-e.ctx.Done():
			return
		}
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

package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/coverage"
)

// errTooLarge: a result over the coordinator's limit (Options.MaxResult),
// or a part over the server's max_payload.
var errTooLarge = errors.New("result too large for the NATS server")

// WorkerOptions configure a worker host.
type WorkerOptions struct {
	// Procs is the number of simulations the host runs at once (default
	// 1), shared between the campaigns it serves; each campaign has a
	// pool of up to Procs worker processes of its own (its header), so a
	// host serving c campaigns may keep c·Procs processes, Procs of them
	// busy.
	Procs int
	// Subject serves only campaigns of this subject (native, ns3,
	// gvisor); "" serves any.
	Subject string
	// Campaign serves only the campaign of this id; "" serves every
	// campaign the host accepts, at once (Procs shared between them).
	Campaign string
	// Program is this host's build revision (default
	// corpus.ProgramVersion()); a campaign of another is refused.
	Program string
	// Isolate configures the worker processes (watchdog, memory limit,
	// command).
	Isolate act.IsolateOptions
	// Poll is how often the host looks for campaigns and checks that
	// those it serves are still there (default 1 s).
	Poll   time.Duration
	Logger *slog.Logger
}

// WorkerStats counts what a worker host did.
type WorkerStats struct {
	Chunks   int               // chunks run and acked
	Results  int               // results published
	Parted   int               // of which results over the server's max_payload, published in parts
	Dropped  int               // of which results over the coordinator's MaxResult, published without their states
	Rejected map[string]int    // Work messages terminated, by reason
	Refused  map[string]string // campaign id → why it was refused
	// Redelivered counts the chunks delivered to this host after an
	// earlier delivery (to any host) that no one acked in time: a host
	// died, or a delivery was lost on its way.
	Redelivered int
}

// Worker is a worker host.
type Worker struct {
	nc   *nats.Conn
	js   jetstream.JetStream
	opt  WorkerOptions
	log  *slog.Logger
	host string

	mu      sync.Mutex
	stats   WorkerStats
	refused map[string]uint64 // campaign id → KV revision refused

	// dies, if set (tests), makes the host behave as if it died when it
	// comes to a configuration for which it returns true: it publishes
	// the results of the configurations before it in the chunk, then
	// neither acks nor sends heartbeats, so the chunk is redelivered after
	// AckWait, as a host killed by that configuration would leave it.
	dies func(act.WorkItem) bool
	// running, if set (tests), is called when a configuration of the
	// chunk of batch id batch starts in its slot; the function it returns
	// when the configuration ends.
	running func(batch uint64, it act.WorkItem) (ended func())
}

// NewWorker returns a worker host on nc.
func NewWorker(nc *nats.Conn, opt WorkerOptions) (*Worker, error) {
	if opt.Procs <= 0 {
		opt.Procs = 1
	}
	if opt.Program == "" {
		opt.Program = corpus.ProgramVersion()
	}
	if opt.Poll <= 0 {
		opt.Poll = time.Second
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	host, _ := os.Hostname()
	return &Worker{nc: nc, js: js, opt: opt, log: opt.Logger, host: fmt.Sprintf("%s pid %d", host, os.Getpid()),
		stats: WorkerStats{Rejected: map[string]int{}, Refused: map[string]string{}}, refused: map[string]uint64{}}, nil
}

// Stats returns the counts so far.
func (w *Worker) Stats() WorkerStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.stats
	s.Rejected, s.Refused = maps.Clone(s.Rejected), maps.Clone(s.Refused)
	return s
}

// Serve serves campaigns until ctx ends (nil) or the worker processes
// cannot run (an error). Campaigns come and go; the host serves at once
// every campaign it accepts, its Procs slots shared fairly between them
// (share).
func (w *Worker) Serve(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	sh := newShare(w.opt.Procs)
	serving := map[string]bool{}
	done := make(chan string)
	fatal := make(chan error, 1)
	for ctx.Err() == nil {
		for _, c := range w.pick(ctx, serving) {
			serving[c.id] = true
			w.log.Info("serving campaign", "campaign", c.id, "file", c.rec.Header.Path, "subject", c.rec.Header.Subject)
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := w.serveCampaign(ctx, c.id, c.rec, c.rev, sh); err != nil {
					select {
					case fatal <- fmt.Errorf("campaign %s: %w", c.id, err):
					default:
					}
				}
				select {
				case done <- c.id:
				case <-ctx.Done():
				}
			}()
		}
		select {
		case id := <-done:
			delete(serving, id)
		case err := <-fatal:
			return err
		case <-ctx.Done():
		case <-time.After(w.opt.Poll):
		}
	}
	return nil
}

// accepted is a campaign a host accepts to serve.
type accepted struct {
	id  string
	rec record
	rev uint64
}

// pick finds the campaigns to serve that are not served yet (in id
// order), refusing those of another build.
func (w *Worker) pick(ctx context.Context, serving map[string]bool) []accepted {
	kv, err := campaigns(ctx, w.js, false)
	if err != nil {
		if !errors.Is(err, jetstream.ErrBucketNotFound) && ctx.Err() == nil {
			w.log.Warn("looking for campaigns", "err", err)
		}
		return nil
	}
	keys, err := campaignIDs(ctx, kv, listWait)
	if err != nil {
		if ctx.Err() == nil {
			w.log.Warn("looking for campaigns", "err", err)
		}
		return nil
	}
	var cs []accepted
	for _, id := range keys {
		if serving[id] || (w.opt.Campaign != "" && id != w.opt.Campaign) {
			continue
		}
		if ValidID(id) != nil {
			continue
		}
		ent, err := kv.Get(ctx, id)
		if err != nil {
			continue
		}
		rec, err := decodeRecord(ent.Value())
		if err != nil {
			w.refuse(id, ent.Revision(), fmt.Sprintf("campaign %s: %v", id, err))
			continue
		}
		switch {
		case w.opt.Subject != "" && rec.Header.Subject != w.opt.Subject:
			continue
		case rec.Parts < 0 || (rec.Parts > 0 && (rec.Shards < rec.Parts || rec.Shards > coverage.DefaultShards || rec.Shards&(rec.Shards-1) != 0)):
			w.refuse(id, ent.Revision(), fmt.Sprintf("campaign %s has %d store parts of %d shards", id, rec.Parts, rec.Shards))
			continue
		case rec.Proto != act.ProtocolVersion:
			w.refuse(id, ent.Revision(), fmt.Sprintf("campaign %s speaks worker protocol %d; this worker (%s) speaks %d", id, rec.Proto, w.host, act.ProtocolVersion))
			continue
		case rec.Header.Program != w.opt.Program:
			w.refuse(id, ent.Revision(), fmt.Sprintf("campaign %s was started by build %q; this worker (%s) is build %q: refused, since seeds replay only on the build that wrote them (run the coordinator's build here)",
				id, rec.Header.Program, w.host, w.opt.Program))
			continue
		}
		w.mu.Lock()
		refused := w.refused[id] == ent.Revision()
		w.mu.Unlock()
		if refused {
			// Its trace files, or its worker processes, failed: they
			// would again (and trace files can be large).
			continue
		}
		full, bad, err := fetchTraces(ctx, w.js, id, rec.Header)
		switch {
		case bad:
			w.refuse(id, ent.Revision(), fmt.Sprintf("campaign %s: %v", id, err))
			continue
		case err != nil:
			// Not there yet, or the server is away: try again later.
			if ctx.Err() == nil {
				w.log.Warn("reading the campaign's trace files", "campaign", id, "err", err)
			}
			continue
		}
		rec.Header = full
		cs = append(cs, accepted{id: id, rec: rec, rev: ent.Revision()})
	}
	return cs
}

// refuse says once per header revision why a campaign is refused.
func (w *Worker) refuse(id string, rev uint64, why string) {
	w.mu.Lock()
	again := w.refused[id] == rev
	w.refused[id] = rev
	w.stats.Refused[id] = why
	w.mu.Unlock()
	if again {
		return
	}
	w.log.Error("refusing campaign", "why", why)
	_ = w.nc.Publish(refusedSubject(id), []byte(why))
}

// serveCampaign pulls the campaign's chunks and runs their configurations
// until its header leaves the KV bucket (or changes), its streams go, or
// ctx ends. The unit of a slot is a configuration: the configurations of
// the chunks the campaign holds wait in a queue, each for a slot of its
// own, so a chunk's configurations run in parallel on a host whose slots
// are free, and the host still runs at most Procs simulations at once.
func (w *Worker) serveCampaign(ctx context.Context, id string, rec record, rev uint64, sh *share) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pool, err := act.NewWorkerPool(ctx, rec.Header, w.opt.Isolate, w.opt.Procs, w.log)
	if err != nil {
		w.refuse(id, rev, fmt.Sprintf("campaign %s: %v", id, err))
		return nil
	}
	var handlers sync.WaitGroup
	// The configurations of fetched chunks waiting for a slot (in
	// order: chunk by chunk, by index); only this goroutine touches it.
	var queue []queued
	defer pool.Close()
	defer handlers.Wait()
	defer func() {
		// Leaving: the chunks of the configurations that wait are
		// given back (another host may take them at once) once those
		// running end.
		for _, q := range queue {
			_ = w.finish(ctx, id, q.c, context.Canceled)
		}
		queue = nil
	}()
	defer cancel()
	kv, pl, ok := w.openCampaignWork(ctx, id)
	if !ok {
		return nil
	}
	// Before the queue's chunks are given back (the defers run in
	// reverse): a chunk received late is given back too.
	defer pl.close()
	fatal := make(chan error, 1)
	// run runs q in the slot the campaign holds for it, and frees the
	// slot after.
	//
	// The result is published after the slot is freed: a host away
	// from the server would otherwise keep its slot idle for the
	// publications' round trips (bench/cluster-latency.sh). At most
	// 4·procs results of the campaign wait for their publication
	// (publishing), so a host whose server is away does not pile them
	// up: a slot then waits for one of them first. With procs alone, a
	// host 1 ms from its server still lost two fifths of its rate on
	// 1 MB flows (two round trips of publication against simulations of
	// about 1.7 ms of CPU); with 4·procs, 6%.
	publishing := make(chan struct{}, 4*max(w.opt.Procs, 1))
	run := func(q queued) {
		handlers.Add(1)
		go func() {
			defer handlers.Done()
			publish, err := w.runOne(ctx, id, rec, pool, q)
			if err == nil && publish != nil {
				publishing <- struct{}{}
				sh.release(id)
				err = publish()
				<-publishing
			} else {
				sh.release(id)
			}
			if err := w.finish(ctx, id, q.c, err); err != nil {
				select {
				case fatal <- err:
				default:
				}
				cancel()
			}
		}()
	}
	// take validates a fetched chunk, starts its heartbeats and queues
	// its configurations.
	take := func(p *pulled) {
		if c := w.take(ctx, id, rec, p.m, p.stopHB); c != nil {
			for _, it := range c.run {
				queue = append(queue, queued{c: c, it: it})
			}
		}
	}
	lastCheck := time.Now()
	for {
		if time.Since(lastCheck) >= w.opt.Poll {
			lastCheck = time.Now()
			if campaignLeft(ctx, kv, id, rev) {
				w.log.Info("campaign left", "campaign", id)
				return nil
			}
		}
		select {
		case err := <-fatal: // a handler's, which cancelled ctx
			return err
		case <-ctx.Done():
			return nil
		default:
		}
		// A slot first, then a configuration: one the campaign holds,
		// or one of a chunk that is there at once. A busy host holds
		// no more chunks than the one whose configurations wait for
		// its slots and one fetched ahead.
		if sh.acquire(ctx, id) != nil {
			continue
		}
		if len(queue) == 0 {
			p, err := pl.pull(0)
			if p != nil {
				take(p)
			} else if err != nil {
				w.log.Debug("pulling a chunk", "campaign", id, "err", err)
			}
		}
		if len(queue) > 0 {
			q := queue[0]
			queue = queue[1:]
			run(q)
			if len(queue) == 0 {
				// The next chunk is asked for now: its round trip
				// overlaps the simulation, not an idle slot.
				if err := pl.prefetch(); err != nil {
					w.log.Debug("pulling a chunk ahead", "campaign", id, "err", err)
				}
			}
			continue
		}
		sh.release(id)
		// No work now: wait for some without a slot, so that a campaign
		// without work holds none; heartbeats keep the chunk ours while
		// its configurations wait for slots.
		p, err := pl.pull(w.opt.Poll)
		if p != nil {
			take(p)
			continue
		}
		if err != nil {
			// The consumer is gone (the campaign ends: the poll above
			// sees it) or the server is away: do not spin.
			w.log.Debug("pulling a chunk", "campaign", id, "err", err)
			select {
			case <-time.After(250 * time.Millisecond):
			case <-ctx.Done():
			}
		}
	}
}

// openCampaignWork opens the campaigns bucket and a puller on the
// campaign's work stream. It reports false when the campaign cannot be
// served now (its stream is gone or the server is away); the caller leaves
// it, and the next scan of the bucket tries again.
func (w *Worker) openCampaignWork(ctx context.Context, id string) (jetstream.KeyValue, *puller, bool) {
	kv, err := campaigns(ctx, w.js, false)
	if err != nil {
		return nil, nil, false
	}
	var cons jetstream.Consumer
	if err := retry(ctx, func() error {
		var err error
		cons, err = w.js.Consumer(ctx, workStream(id), workersConsumer)
		return err
	}); err != nil {
		return nil, nil, false
	}
	ackWait := cons.CachedInfo().Config.AckWait
	pl, err := newPuller(ctx, w.nc, workStream(id), workersConsumer, ackWait)
	if err != nil {
		w.log.Warn("serving campaign", "campaign", id, "err", err)
		return nil, nil, false
	}
	return kv, pl, true
}

// campaignLeft reports whether campaign id's header is gone from the
// bucket or changed from revision rev (the campaign ended or was
// restarted). A failed read is not a departure: the next poll asks again.
func campaignLeft(ctx context.Context, kv jetstream.KeyValue, id string, rev uint64) bool {
	ent, err := kv.Get(ctx, id)
	return errors.Is(err, jetstream.ErrKeyNotFound) || (err == nil && ent.Revision() != rev)
}

// heartbeat tells the server every ackWait/3 that m is being worked on,
// until the returned function is called or ctx ends.
func heartbeat(ctx context.Context, m *nats.Msg, ackWait time.Duration) (stop func()) {
	ctx, stop = context.WithCancel(ctx)
	go func() {
		t := time.NewTicker(max(ackWait/3, 10*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-t.C:
				_ = m.InProgress()
			case <-ctx.Done():
				return
			}
		}
	}()
	return stop
}

// held is a chunk (a Work message) a host holds: its configurations run
// each in a slot of their own, and it is acked once all their results are
// published.
type held struct {
	m      *nats.Msg
	wk     act.Work
	sum    string         // workSum(wk)
	run    []act.WorkItem // the configurations to run (wk.Items, or those before the one dies picked)
	died   bool           // dies picked one of its configurations (tests)
	stopHB func()         // stops its heartbeats

	mu   sync.Mutex
	left int   // configurations not finished
	err  error // the first configuration's error: those not started are not run
}

// queued is a configuration of a chunk, waiting for a slot.
type queued struct {
	c  *held
	it act.WorkItem
}

// take validates a Work message whose heartbeats stopHB stops and returns
// its chunk, or nil if it is rejected (terminated) or has nothing to run
// (settled).
func (w *Worker) take(ctx context.Context, id string, rec record, m *nats.Msg, stopHB func()) *held {
	wk, reason := w.validate(id, rec, m)
	if reason != "" {
		w.mu.Lock()
		w.stats.Rejected[reason]++
		w.mu.Unlock()
		w.log.Warn("work rejected", "campaign", id, "reason", reason, "bytes", len(m.Data))
		stopHB()
		_ = m.Term()
		return nil
	}
	var seq, delivered uint64
	if md, err := m.Metadata(); err == nil {
		seq, delivered = md.Sequence.Stream, md.NumDelivered
	}
	if delivered > 1 {
		w.mu.Lock()
		w.stats.Redelivered++
		w.mu.Unlock()
	}
	c := &held{m: m, wk: wk, sum: workSum(wk), run: wk.Items, stopHB: stopHB}
	if w.dies != nil {
		if k := slices.IndexFunc(wk.Items, w.dies); k >= 0 {
			c.run, c.died = wk.Items[:k], true
		}
	}
	c.left = len(c.run)
	w.log.Debug("chunk started", "campaign", id, "batch", wk.BatchID, "configs", len(wk.Items), "seq", seq, "delivered", delivered)
	if c.left == 0 {
		c.left = 1
		_ = w.finish(ctx, id, c, nil) // the host "dies" at its first configuration
		return nil
	}
	return c
}

// runOne runs configuration q.it of its chunk and returns the
// publication of its result (its shares, then the result), unless a
// configuration of the chunk failed (nil: not run). The simulation's
// states are split into shares and encoded at once (they are the worker
// pool's until its callback returns); the publications wait for the
// server's acks, which the caller awaits outside the configuration's slot.
func (w *Worker) runOne(ctx context.Context, id string, rec record, pool *act.WorkerPool, q queued) (publish func() error, err error) {
	c := q.c
	c.mu.Lock()
	failed := c.err != nil
	c.mu.Unlock()
	if failed {
		return nil, nil
	}
	if w.running != nil {
		defer w.running(c.wk.BatchID, q.it)()
	}
	one := c.wk
	one.Items = []act.WorkItem{q.it}
	err = pool.Run(ctx, one, func(r act.Result) error {
		var shares [][]byte
		if rec.Parts > 0 && r.Decoded != nil {
			var err error
			if r, shares, err = shareStates(rec, pool.Space(), r); err != nil {
				return err
			}
		}
		r.Decoded = nil
		publish = func() error {
			if shares != nil {
				sums, err := w.sendShares(ctx, id, r.Index, shares)
				if err != nil {
					return err
				}
				r.Shares = sums
			}
			return w.publish(ctx, id, rec, c, r)
		}
		return nil
	})
	return publish, err
}

// finish counts a configuration of chunk c as done (err nil: its result is
// published, or it was not run since another failed) or failed; the last
// one settles the chunk: acked if every result is published, naked if one
// failed, left to be redelivered if the host "died" (tests). An error
// stops the host.
func (w *Worker) finish(ctx context.Context, id string, c *held, err error) error {
	c.mu.Lock()
	if err != nil && c.err == nil {
		c.err = err
	}
	c.left--
	last, err := c.left == 0, c.err
	c.mu.Unlock()
	if !last {
		return nil
	}
	c.stopHB()
	batch := c.wk.BatchID
	if c.died && err == nil {
		w.log.Debug("chunk abandoned: the host died (test)", "campaign", id, "batch", batch)
		return nil
	}
	if err != nil {
		_ = c.m.Nak()
		if ctx.Err() != nil || errors.Is(err, context.Canceled) {
			return nil
		}
		if errors.Is(err, errTooLarge) {
			// A property of the chunk, not of this host: it is
			// redelivered, and after MaxDeliver the coordinator
			// makes crash faults of what has no result.
			w.log.Error("a result is too large", "err", err)
			return nil
		}
		return err
	}
	w.log.Debug("chunk results published", "campaign", id, "batch", batch)
	actx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := c.m.AckSync(nats.Context(actx)); err != nil {
		w.log.Warn("acking a chunk", "batch", batch, "err", err)
	}
	w.mu.Lock()
	w.stats.Chunks++
	w.mu.Unlock()
	w.log.Debug("chunk done", "campaign", id, "batch", batch)
	return nil
}

func (w *Worker) validate(id string, rec record, m *nats.Msg) (act.Work, string) {
	data := m.Data
	if len(data) > maxWork {
		return act.Work{}, "oversized"
	}
	if m.Header.Get(hdrCampaign) != id {
		return act.Work{}, "another campaign"
	}
	msg, err := act.DecodeMessage(data)
	if err != nil {
		return act.Work{}, "malformed"
	}
	wk, ok := msg.(act.Work)
	switch {
	case !ok:
		return act.Work{}, "not a work"
	case wk.Proto != act.ProtocolVersion:
		return act.Work{}, "another protocol"
	case !sameHeader(wk.Campaign, rec.Header):
		return act.Work{}, "another campaign header"
	case len(wk.Items) == 0 || len(wk.Items) > 4096:
		return act.Work{}, "chunk size"
	case wk.BatchID&^retryBit != uint64(wk.Items[0].Index) || wk.Items[0].Index < 0:
		return act.Work{}, "batch id does not match its configurations"
	case wk.BatchID&retryBit != 0 && len(wk.Items) != 1:
		// A retry (after a dead letter) runs one configuration alone.
		return act.Work{}, "chunk size"
	}
	for i, it := range wk.Items {
		if it.Index != wk.Items[0].Index+i {
			return act.Work{}, "indices not consecutive"
		}
	}
	return wk, ""
}

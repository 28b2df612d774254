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
)

// errTooLarge: a result over the coordinator's limit (Options.MaxResult),
// or a part over the server's max_payload.
var errTooLarge = errors.New("result too large for the NATS server")

// WorkerOptions configure a worker host.
type WorkerOptions struct {
	// Procs is the number of worker processes (default 1).
	Procs int
	// Subject serves only campaigns of this subject (native, ns3,
	// gvisor); "" serves any.
	Subject string
	// Campaign serves only the campaign of this id; "" serves any.
	Campaign string
	// Program is this host's build revision (default
	// corpus.ProgramVersion()); a campaign of another is refused.
	Program string
	// Isolate configures the worker processes (watchdog, memory limit,
	// command).
	Isolate act.IsolateOptions
	// Poll is how often the host looks for campaigns and checks that the
	// one it serves is still there (default 1 s).
	Poll   time.Duration
	Logger *slog.Logger
}

// WorkerStats counts what a worker host did.
type WorkerStats struct {
	Chunks   int               // chunks run and acked
	Results  int               // results published
	Parted   int               // of which results over the server's max_payload, published in parts
	Rejected map[string]int    // Work messages terminated, by reason
	Refused  map[string]string // campaign id → why it was refused
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
// cannot run (an error). Campaigns come and go; the host serves one at a
// time, the first in id order that it accepts.
func (w *Worker) Serve(ctx context.Context) error {
	for ctx.Err() == nil {
		id, rec, rev, ok := w.pick(ctx)
		if ok {
			w.log.Info("serving campaign", "campaign", id, "file", rec.Header.Path, "subject", rec.Header.Subject)
			if err := w.serveCampaign(ctx, id, rec, rev); err != nil {
				return fmt.Errorf("campaign %s: %w", id, err)
			}
			continue
		}
		select {
		case <-ctx.Done():
		case <-time.After(w.opt.Poll):
		}
	}
	return nil
}

// pick finds a campaign to serve, refusing those of another build.
func (w *Worker) pick(ctx context.Context) (string, record, uint64, bool) {
	kv, err := campaigns(ctx, w.js, false)
	if err != nil {
		if !errors.Is(err, jetstream.ErrBucketNotFound) && ctx.Err() == nil {
			w.log.Warn("looking for campaigns", "err", err)
		}
		return "", record{}, 0, false
	}
	keys, err := kv.Keys(ctx)
	if err != nil {
		return "", record{}, 0, false
	}
	slices.Sort(keys)
	for _, id := range keys {
		if w.opt.Campaign != "" && id != w.opt.Campaign {
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
		case rec.Proto != act.ProtocolVersion:
			w.refuse(id, ent.Revision(), fmt.Sprintf("campaign %s speaks worker protocol %d; this worker (%s) speaks %d", id, rec.Proto, w.host, act.ProtocolVersion))
			continue
		case rec.Header.Program != w.opt.Program:
			w.refuse(id, ent.Revision(), fmt.Sprintf("campaign %s was started by build %q; this worker (%s) is build %q: refused, since seeds replay only on the build that wrote them (run the coordinator's build here)",
				id, rec.Header.Program, w.host, w.opt.Program))
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
		return id, rec, ent.Revision(), true
	}
	return "", record{}, 0, false
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

// serveCampaign pulls and runs the campaign's chunks until its header
// leaves the KV bucket (or changes), its streams go, or ctx ends.
func (w *Worker) serveCampaign(ctx context.Context, id string, rec record, rev uint64) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pool, err := act.NewWorkerPool(ctx, rec.Header, w.opt.Isolate, w.opt.Procs, w.log)
	if err != nil {
		w.refuse(id, rev, fmt.Sprintf("campaign %s: %v", id, err))
		return nil
	}
	var handlers sync.WaitGroup
	defer pool.Close()
	defer handlers.Wait()
	defer cancel()
	kv, err := campaigns(ctx, w.js, false)
	if err != nil {
		return nil
	}
	var cons jetstream.Consumer
	if err := retry(ctx, func() error {
		var err error
		cons, err = w.js.Consumer(ctx, workStream(id), workersConsumer)
		return err
	}); err != nil {
		return nil
	}
	ackWait := cons.CachedInfo().Config.AckWait
	fatal := make(chan error, 1)
	slots := make(chan struct{}, w.opt.Procs)
	lastCheck := time.Now()
	for {
		if time.Since(lastCheck) >= w.opt.Poll {
			lastCheck = time.Now()
			if ent, err := kv.Get(ctx, id); errors.Is(err, jetstream.ErrKeyNotFound) || (err == nil && ent.Revision() != rev) {
				w.log.Info("campaign left", "campaign", id)
				return nil
			}
		}
		select {
		case slots <- struct{}{}:
		case err := <-fatal:
			return err
		case <-ctx.Done():
			return nil
		}
		batch, err := cons.Fetch(1, jetstream.FetchMaxWait(w.opt.Poll))
		if err != nil {
			<-slots
			if errors.Is(err, jetstream.ErrConsumerNotFound) || errors.Is(err, jetstream.ErrStreamNotFound) {
				return nil
			}
			select {
			case <-time.After(250 * time.Millisecond):
			case <-ctx.Done():
			}
			continue
		}
		n := 0
		for m := range batch.Messages() {
			n++
			handlers.Add(1)
			go func() {
				defer handlers.Done()
				defer func() { <-slots }()
				if err := w.handle(ctx, id, rec, pool, m, ackWait); err != nil {
					select {
					case fatal <- err:
					default:
					}
					cancel()
				}
			}()
		}
		if n == 0 {
			<-slots
		}
	}
}

// handle validates and runs one Work message; an error stops the host.
func (w *Worker) handle(ctx context.Context, id string, rec record, pool *act.WorkerPool, m jetstream.Msg, ackWait time.Duration) error {
	wk, reason := w.validate(id, rec, m)
	if reason != "" {
		w.mu.Lock()
		w.stats.Rejected[reason]++
		w.mu.Unlock()
		w.log.Warn("work rejected", "campaign", id, "reason", reason, "bytes", len(m.Data()))
		_ = m.Term()
		return nil
	}
	sum := workSum(wk)
	w.log.Debug("chunk started", "campaign", id, "batch", wk.BatchID, "configs", len(wk.Items))
	hbCtx, stopHB := context.WithCancel(ctx)
	defer stopHB()
	go func() {
		t := time.NewTicker(max(ackWait/3, 10*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-t.C:
				_ = m.InProgress()
			case <-hbCtx.Done():
				return
			}
		}
	}()
	run := wk
	died := false
	if w.dies != nil {
		if k := slices.IndexFunc(wk.Items, w.dies); k >= 0 {
			run.Items, died = wk.Items[:k], true
		}
	}
	published := 0
	err := pool.Run(ctx, run, func(r act.Result) error {
		body, err := act.EncodeMessage(r)
		if err != nil {
			return err
		}
		if rec.MaxResult > 0 && len(body) > rec.MaxResult {
			return fmt.Errorf("%w: configuration %d: %d bytes, the coordinator takes at most %d", errTooLarge, r.Index, len(body), rec.MaxResult)
		}
		// A result over the server's max_payload goes in parts, which
		// the coordinator puts together (Executor.assemble).
		part := max(int(w.nc.MaxPayload())-partHeadroom, 1024)
		n := (len(body) + part - 1) / part
		for i := range n {
			msg := &nats.Msg{Subject: resultSubject(id), Header: nats.Header{}, Data: body[i*part : min(len(body), (i+1)*part)]}
			msg.Header.Set(hdrCampaign, id)
			msg.Header.Set(hdrWork, sum)
			if n > 1 {
				msg.Header.Set(hdrPart, fmt.Sprintf("%d/%d/%d/%d", r.BatchID, r.Index, i, n))
			}
			tooLarge := false
			if err := retry(ctx, func() error {
				pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				defer cancel()
				_, err := w.js.PublishMsg(pctx, msg)
				if err != nil && !errors.Is(err, context.Canceled) {
					w.log.Warn("publishing a result", "index", r.Index, "part", i, "bytes", len(msg.Data), "err", err)
				}
				if errors.Is(err, nats.ErrMaxPayload) {
					tooLarge = true
					return nil // cannot ever go: stop retrying
				}
				return err
			}); err != nil {
				return err
			}
			if tooLarge {
				return fmt.Errorf("%w: configuration %d: a part of %d bytes, the server's max_payload is %d", errTooLarge, r.Index, len(msg.Data), w.nc.MaxPayload())
			}
		}
		if n > 1 {
			w.mu.Lock()
			w.stats.Parted++
			w.mu.Unlock()
		}
		published++
		return nil
	})
	stopHB()
	w.mu.Lock()
	w.stats.Results += published
	w.mu.Unlock()
	if died && err == nil {
		w.log.Debug("chunk abandoned: the host died (test)", "campaign", id, "batch", wk.BatchID)
		return nil
	}
	if err != nil {
		_ = m.Nak()
		if ctx.Err() != nil {
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
	w.log.Debug("chunk results published", "campaign", id, "batch", wk.BatchID)
	actx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := m.DoubleAck(actx); err != nil {
		w.log.Warn("acking a chunk", "batch", wk.BatchID, "err", err)
	}
	w.mu.Lock()
	w.stats.Chunks++
	w.mu.Unlock()
	w.log.Debug("chunk done", "campaign", id, "batch", wk.BatchID)
	return nil
}

func (w *Worker) validate(id string, rec record, m jetstream.Msg) (act.Work, string) {
	data := m.Data()
	if len(data) > maxWork {
		return act.Work{}, "oversized"
	}
	if m.Headers().Get(hdrCampaign) != id {
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

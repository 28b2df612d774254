package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/actfuzz/actfuzz/act"
)

// startStores starts a store process for each part, in this process; they
// stop at the end of the test.
func startStores(t *testing.T, url string, parts int) []*StoreServer {
	t.Helper()
	ss, _ := startStoresFrom(t, url, 0, parts)
	return ss
}

// startStoresFrom starts store processes for parts from … parts-1 and
// returns them and a function that stops them (as a kill would).
func startStoresFrom(t *testing.T, url string, from, parts int) ([]*StoreServer, func()) {
	t.Helper()
	return startStoresWith(t, url, from, parts, StoreOptions{})
}

// startStoresWith is startStoresFrom with options (Part, Poll and Logger
// are set).
func startStoresWith(t *testing.T, url string, from, parts int, opt StoreOptions) ([]*StoreServer, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	stop := func() { cancel(); wg.Wait() }
	t.Cleanup(stop)
	var ss []*StoreServer
	for j := from; j < parts; j++ {
		opt.Part, opt.Poll, opt.Logger = j, 100*time.Millisecond, testLogger(t)
		s, err := NewStore(connect(t, url), opt)
		if err != nil {
			t.Fatal(err)
		}
		ss = append(ss, s)
		wg.Go(func() {
			if err := s.Serve(ctx); err != nil {
				t.Errorf("store part %d: %v", j, err)
			}
		})
	}
	return ss, stop
}

// partsCluster is the set-up of a store parts test: the test campaign, its
// local reference run, a server and one host of two worker processes.
func partsCluster(t *testing.T) (*act.Campaign, *act.Report, string, *server.Server) {
	t.Helper()
	c := testCampaign(t)
	ref, refDir := reference(t, c)
	s := startServer(t, t.TempDir(), -1)
	startHosts(t, s.ClientURL(), 2, 1, "")
	return c, ref, refDir, s
}

// A store process that dies mid-campaign (its part is lost) stops the
// campaign with an error naming the part after PartTimeout; once it runs
// again, --resume continues from the checkpoint and the campaign ends as
// the local run does.
func TestStorePartDies(t *testing.T) {
	c, ref, refDir, s := partsCluster(t)
	startStoresFrom(t, s.ClientURL(), 0, 1)
	_, kill := startStoresFrom(t, s.ClientURL(), 1, 2)
	dir := t.TempDir()
	nc := connect(t, s.ClientURL())
	var once sync.Once
	start := time.Now()
	_, err := act.Run(context.Background(), c, act.Options{Budget: testBudget, Lag: testLag, Out: dir, StoreParts: 2, CheckpointEvery: 1,
		Progress: func(st act.Status) {
			if st.Sims >= 192 {
				once.Do(kill)
			}
		},
		Executor: func(ctx context.Context, h act.CampaignHeader) (act.Executor, error) {
			return NewExecutor(ctx, nc, c, h, Options{ID: "part-dies", Parts: 2, PartTimeout: 3 * time.Second, Logger: testLogger(t)})
		}})
	if err == nil || !strings.Contains(err.Error(), "store part 1") {
		t.Fatalf("the campaign went on without store part 1: %v", err)
	}
	t.Logf("after %v: %v", time.Since(start).Round(time.Millisecond), err)
	startStoresFrom(t, s.ClientURL(), 1, 2)
	rep, _ := clusterRun(t, context.Background(), c, nc, dir, Options{ID: "part-dies", Parts: 2, Resume: true}, nil,
		act.Options{StoreParts: 2, Resume: true})
	sameAsLocal(t, "store part died, resumed", ref, rep, refDir, dir)
}

// A store part over its memory cap ends the campaign after the batch it
// merged, with a checkpoint and an error that names the part and the cap;
// with the cap lifted, --resume continues and the campaign ends as the
// local run does.
func TestStorePartCapped(t *testing.T) {
	c, ref, refDir, s := partsCluster(t)
	startStoresFrom(t, s.ClientURL(), 0, 1)
	capped, stop := startStoresWith(t, s.ClientURL(), 1, 2, StoreOptions{Memory: 1})
	dir := t.TempDir()
	nc := connect(t, s.ClientURL())
	first, err := act.Run(context.Background(), c, act.Options{Budget: testBudget, Lag: testLag, Out: dir, StoreParts: 2,
		Executor: func(ctx context.Context, h act.CampaignHeader) (act.Executor, error) {
			return NewExecutor(ctx, nc, c, h, Options{ID: "part-capped", Parts: 2, Logger: testLogger(t)})
		}})
	if !errors.Is(err, act.ErrStoreCapped) || !strings.Contains(err.Error(), "store part 1 holds") || !strings.Contains(err.Error(), "--memory") {
		t.Fatalf("want the cap of store part 1, got %v", err)
	}
	t.Log(err)
	if first == nil || first.Sims == 0 || first.Sims >= testBudget {
		t.Fatalf("the capped campaign ran %v simulations", first)
	}
	if st := capped[0].Stats(); st.Capped != 1 || st.Merges != 1 {
		t.Fatalf("store part 1: %+v", st)
	}
	saved, err := act.LoadReport(dir, "act")
	if err != nil || saved.Sims != first.Sims {
		t.Fatalf("the checkpoint after the cap: %v sims (%v), want %d", saved, err, first.Sims)
	}
	stop()
	startStoresFrom(t, s.ClientURL(), 1, 2)
	rep, _ := clusterRun(t, context.Background(), c, nc, dir, Options{ID: "part-capped", Parts: 2, Resume: true}, nil,
		act.Options{StoreParts: 2, Resume: true})
	sameAsLocal(t, "store part capped, resumed", ref, rep, refDir, dir)
}

// killedExecutor is an Executor whose Close stops it as a kill -9 of its
// coordinator would: its campaign header stays in the KV bucket, so the
// store processes keep serving the campaign as they had it.
type killedExecutor struct{ *Executor }

func (k killedExecutor) Close() {
	e := k.Executor
	e.cancel()
	for _, s := range e.subs {
		_ = s.Unsubscribe()
	}
	e.wg.Wait()
}

// A part capped by the campaign's memory budget (the store process has
// no --memory of its own) ends the campaign, and the coordinator is
// killed at that: its campaign header stays, and its store processes go
// on serving the campaign. A coordinator resumed without a budget makes
// the states consumer again, so they serve it afresh, loaded with no cap
// (the budget comes with the load), and the campaign ends as the local
// run does.
func TestStorePartCapLiftedAfterKill(t *testing.T) {
	c, ref, refDir, s := partsCluster(t)
	ss := startStores(t, s.ClientURL(), 2)
	dir := t.TempDir()
	nc := connect(t, s.ClientURL())
	first, err := act.Run(context.Background(), c, act.Options{Budget: testBudget, Lag: testLag, Out: dir, StoreParts: 2,
		Executor: func(ctx context.Context, h act.CampaignHeader) (act.Executor, error) {
			ex, err := NewExecutor(ctx, nc, c, h, Options{ID: "cap-after-kill", Parts: 2, Memory: 1000, Logger: testLogger(t)})
			if err != nil {
				return nil, err
			}
			return killedExecutor{ex}, nil
		}})
	if !errors.Is(err, act.ErrStoreCapped) || !strings.Contains(err.Error(), "share of the campaign's memory budget") {
		t.Fatalf("want a part capped by the campaign's budget, got %v", err)
	}
	if first == nil || first.Sims == 0 || first.Sims >= testBudget {
		t.Fatalf("the capped campaign ran %v simulations", first)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(context.Background(), Bucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Get(context.Background(), "cap-after-kill"); err != nil {
		t.Fatalf("the killed coordinator's campaign header: %v", err)
	}
	capped := ss[0].Stats().Capped + ss[1].Stats().Capped
	// The killed coordinator left its lease: the resumed one takes it
	// over once it has not changed for Lease.
	rep, _ := clusterRun(t, context.Background(), c, nc, dir, Options{ID: "cap-after-kill", Parts: 2, Resume: true, Lease: 500 * time.Millisecond}, nil,
		act.Options{StoreParts: 2, Resume: true})
	sameAsLocal(t, "part capped, coordinator killed, resumed without a budget", ref, rep, refDir, dir)
	if now := ss[0].Stats().Capped + ss[1].Stats().Capped; now != capped || capped == 0 {
		t.Fatalf("parts capped %d times in the first run and %d after, want some and none", capped, now-capped)
	}
}

// A campaign whose coverage store is split into parts kept by store
// processes ends exactly as a local run: the same regions, findings and
// seed files, and the same store, checkpointed byte for byte; the
// coordinator never receives a state.
func TestStorePartsMatchLocal(t *testing.T) {
	c, ref, refDir, s := partsCluster(t)
	stores := startStores(t, s.ClientURL(), 3)
	dir := t.TempDir()
	start := time.Now()
	rep, ex := clusterRun(t, context.Background(), c, connect(t, s.ClientURL()), dir, Options{ID: "parts", Parts: 3}, nil,
		act.Options{StoreParts: 3})
	t.Logf("cluster with 3 store parts: %d sims in %v; %+v", rep.Sims, time.Since(start).Round(time.Millisecond), ex.Stats())
	sameAsLocal(t, "store parts", ref, rep, refDir, dir)
	// The checkpoint holds the parts as they came; it reads as the
	// local run's store.
	var a, b bytes.Buffer
	if _, err := ref.Store.WriteTo(&a); err != nil {
		t.Fatal(err)
	}
	loaded, err := act.LoadReport(dir, "act")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := loaded.Store.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("the checkpointed store differs from the local run's")
	}
	for j, st := range stores {
		t.Logf("store part %d: %+v", j, st.Stats())
		if st.Stats().Merges == 0 {
			t.Errorf("store part %d merged nothing", j)
		}
		if st.Stats().DecodedAhead == 0 {
			t.Errorf("store part %d decoded no share as it arrived", j)
		}
	}
	if st := ex.Stats(); st.RejectedTotal() != 0 || st.Results != testBudget {
		t.Fatalf("%+v", st)
	}
	// A selection (one before each merge, and the first) asks each part
	// for its pools once: not a request a visit.
	if st := ex.Stats(); st.PoolRequests > 3*(st.PartMerges+1) || st.PoolStates <= st.PoolRequests {
		t.Errorf("%d pool requests for %d states over %d merges: want at most one a part a selection", st.PoolRequests, st.PoolStates, st.PartMerges)
	}
}

// The coordinator dies mid-campaign and --resume continues: the store
// parts are loaded again from its checkpoint, and the campaign ends as
// the local run does.
func TestStorePartsResume(t *testing.T) {
	c, ref, refDir, s := partsCluster(t)
	startStores(t, s.ClientURL(), 2)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	first, _ := clusterRun(t, ctx, c, connect(t, s.ClientURL()), dir, Options{ID: "parts-resume", Parts: 2}, nil,
		act.Options{StoreParts: 2, CheckpointEvery: 1, Progress: func(st act.Status) {
			if st.Sims >= 192 {
				cancel()
			}
		}})
	if first.Sims >= testBudget {
		t.Fatalf("the first coordinator ran all %d simulations", first.Sims)
	}
	rep, _ := clusterRun(t, context.Background(), c, connect(t, s.ClientURL()), dir, Options{ID: "parts-resume", Parts: 2, Resume: true}, nil,
		act.Options{StoreParts: 2, Resume: true})
	sameAsLocal(t, "store parts, resumed", ref, rep, refDir, dir)
}

// A forged share (right key, other content) does not replace the host's:
// the part merges the share whose SHA-256 the result names.
func TestStorePartsForgedShare(t *testing.T) {
	c, ref, refDir, s := partsCluster(t)
	startStores(t, s.ClientURL(), 2)
	nc := connect(t, s.ClientURL())
	dir := t.TempDir()
	rep, _ := clusterRun(t, context.Background(), c, nc, dir, Options{ID: "parts-forged", Parts: 2},
		func(e *Executor, _ act.CampaignHeader) {
			// Forged shares for the first configurations, before any host
			// publishes theirs.
			for i := range 64 {
				for j := range 2 {
					m := &nats.Msg{Subject: statesSubject("parts-forged", j), Header: nats.Header{}, Data: []byte{1, 0, 2, 0, 0}}
					m.Header.Set(hdrCampaign, "parts-forged")
					m.Header.Set(hdrShare, workerShareKey(i))
					if _, err := e.js.PublishMsg(context.Background(), m); err != nil {
						t.Error(err)
					}
				}
			}
		}, act.Options{StoreParts: 2})
	sameAsLocal(t, "store parts with forged shares", ref, rep, refDir, dir)
}

// A standby store process takes a part over from its holder, killed
// (its lease left as kill -9 leaves it) or frozen (it neither answers nor
// renews, but keeps its connection, as a stopped or partitioned process
// does); the coordinator learns it from the lease's change of hands and
// asks the new holder at once, without waiting for the frozen one's
// answer (up to 30 s); the campaign stops with ErrPartLost, resumes on the
// standby and ends as the local run.
func TestStorePartStandby(t *testing.T) {
	c, ref, refDir, s := partsCluster(t)
	startStoresFrom(t, s.ClientURL(), 0, 1)
	for _, frozen := range []bool{false, true} {
		t.Run(fmt.Sprintf("frozen=%v", frozen), func(t *testing.T) {
			id := fmt.Sprintf("part-standby-%v", frozen)
			opt := StoreOptions{Lease: time.Second}
			holder, kill := startStoresWith(t, s.ClientURL(), 1, 2, opt)
			var standby []*StoreServer
			dir := t.TempDir()
			nc := connect(t, s.ClientURL())
			var started, stopped sync.Once
			var stoppedAt time.Time
			var ex *Executor
			// A killed holder's subscription goes with its connection, so
			// the coordinator's requests find no responder until the
			// standby serves; PartTimeout only bounds that wait. A frozen
			// one's stays: the default PartTimeout gives each request 30 s.
			timeout := 3 * time.Second
			if frozen {
				timeout = 0
			}
			_, err := act.Run(context.Background(), c, act.Options{Budget: testBudget, Lag: testLag, Out: dir, StoreParts: 2, CheckpointEvery: 1,
				Progress: func(st act.Status) {
					if st.Sims >= 64 {
						started.Do(func() { standby, _ = startStoresWith(t, s.ClientURL(), 1, 2, opt) })
					}
					if st.Sims >= 192 {
						stopped.Do(func() {
							if m := standby[0].Stats().Merges; m != 0 {
								t.Errorf("the standby merged %d times while the holder lived", m)
							}
							if frozen {
								holder[0].freeze()
							} else {
								holder[0].mu.Lock()
								holder[0].abandon = true
								holder[0].mu.Unlock()
								kill()
							}
							stoppedAt = time.Now()
						})
					}
				},
				Executor: func(ctx context.Context, h act.CampaignHeader) (act.Executor, error) {
					var err error
					ex, err = NewExecutor(ctx, nc, c, h, Options{ID: id, Parts: 2, PartTimeout: timeout, Logger: testLogger(t)})
					return ex, err
				}})
			if !errors.Is(err, ErrPartLost) || !strings.Contains(err.Error(), "store part 1") {
				t.Fatalf("want store part 1 lost, got %v", err)
			}
			took := time.Since(stoppedAt)
			t.Logf("part lost %v after the holder stopped", took.Round(time.Millisecond))
			if st := standby[0].Stats(); st.TakenOver != 1 {
				t.Fatalf("the standby did not take the part over: %+v", st)
			}
			if st := ex.Stats(); st.HolderChanges != 1 {
				t.Fatalf("the coordinator saw %d changes of hands, want 1: %+v", st.HolderChanges, st)
			}
			// Lease is 1 s; a request left to the frozen holder would end
			// after 30 s.
			if frozen && took > 20*time.Second {
				t.Fatalf("the part was lost %v after its holder froze: the coordinator waited for the frozen holder", took)
			}
			rep, _ := clusterRun(t, context.Background(), c, nc, dir, Options{ID: id, Parts: 2, Resume: true}, nil,
				act.Options{StoreParts: 2, Resume: true})
			sameAsLocal(t, "store part taken over by a standby, resumed", ref, rep, refDir, dir)
			if st := standby[0].Stats(); st.Merges == 0 {
				t.Fatalf("the standby did not serve the resumed campaign: %+v", st)
			}
		})
	}
}

// A holder whose lease another process took (it could not renew it in
// time: a partition) stops serving the part at its next renewal; a
// holder that stops deletes its lease, so that a standby takes the part
// over at once.
func TestStoreLease(t *testing.T) {
	s := startServer(t, t.TempDir(), -1)
	newStore := func() *StoreServer {
		st, err := NewStore(connect(t, s.ClientURL()), StoreOptions{Part: 1, Lease: 2 * time.Second, Poll: 50 * time.Millisecond, Logger: testLogger(t)})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	a, b := newStore(), newStore()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := leasesBucket(ctx, a.js, true); err != nil { // the coordinator's
		t.Fatal(err)
	}
	la, err := a.hold(ctx, "lease")
	if err != nil {
		t.Fatal(err)
	}
	// b waits while a renews.
	wctx, wcancel := context.WithTimeout(ctx, 1200*time.Millisecond)
	if _, err := b.hold(wctx, "lease"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("b held the part while a renewed its lease: %v", err)
	}
	wcancel()
	// Released, the lease goes to b at once.
	la.release(false)
	t0 := time.Now()
	lb, err := b.hold(ctx, "lease")
	if err != nil || time.Since(t0) > time.Second { // not after Lease
		t.Fatalf("b after a released: %v after %v", err, time.Since(t0))
	}
	// Another process overwrites the key: b's lease ends at its next
	// renewal.
	kv, err := leasesBucket(ctx, b.js, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, leaseKey("lease", 1), []byte("someone else")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-lb.ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("b kept serving a part whose lease another process took")
	}
	lb.release(false)
	if st := b.Stats(); st.LeasesLost != 1 {
		t.Fatalf("b: %+v", st)
	}
	// The key is the other process's still: b did not delete it.
	if e, err := kv.Get(ctx, leaseKey("lease", 1)); err != nil || string(e.Value()) != "someone else" {
		t.Fatalf("the lease after b lost it: %v %v", e, err)
	}
}

// A store process whose listings of the campaign bucket fail once it has
// merged goes on serving its part: a failed listing says nothing of which
// campaigns ended, so the campaign ends as the local run does. (A store
// process that took a failed listing for an empty bucket stopped its
// parts, and the coordinator waited for part 1 until PartTimeout.)
func TestStorePartListingFails(t *testing.T) {
	c, ref, refDir, s := partsCluster(t)
	startStoresFrom(t, s.ClientURL(), 0, 1)
	st, err := NewStore(connect(t, s.ClientURL()), StoreOptions{Part: 1, Poll: 50 * time.Millisecond, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	var failed atomic.Int64
	st.list = func(ctx context.Context, kv jetstream.KeyValue) ([]string, error) {
		if st.Stats().Merges > 0 {
			failed.Add(1)
			return nil, errors.New("listing failed (test)")
		}
		return campaignIDs(ctx, kv, listWait)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	wg.Go(func() {
		if err := st.Serve(ctx); err != nil {
			t.Errorf("store part 1: %v", err)
		}
	})
	nc := connect(t, s.ClientURL())
	dir := t.TempDir()
	rep, _ := clusterRun(t, context.Background(), c, nc, dir, Options{ID: "listing-fails", Parts: 2, PartTimeout: 20 * time.Second}, nil,
		act.Options{StoreParts: 2})
	sameAsLocal(t, "store part whose listings fail", ref, rep, refDir, dir)
	if failed.Load() == 0 {
		t.Fatal("no listing failed while part 1 served")
	}
	t.Logf("%d listings failed; part 1: %+v", failed.Load(), st.Stats())
}

// TestStoreLeaseLongerHeld: a standby started with a shorter --lease than
// the holder's waits the holder's period, not its own: it does not take
// the part between two of a live holder's renewals, and after the
// holder is killed it takes over once the holder's period has passed.
// (It took over within its own 300 ms, from a holder renewing every
// 500 ms, when the lease named no period.)
func TestStoreLeaseLongerHeld(t *testing.T) {
	s := startServer(t, t.TempDir(), -1)
	newStore := func(lease time.Duration) *StoreServer {
		st, err := NewStore(connect(t, s.ClientURL()), StoreOptions{Part: 0, Lease: lease, Poll: 20 * time.Millisecond, Logger: testLogger(t)})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	const long, short = 2 * time.Second, 300 * time.Millisecond
	a, b := newStore(long), newStore(short)
	ctx, la := firstHolder(t, a, "longer")
	if got := heldPeriod(a.holder); got != long {
		t.Fatalf("the holder's name %q gives period %v, want %v", a.holder, got, long)
	}
	wctx, wcancel := context.WithTimeout(ctx, 3*time.Second)
	if _, err := b.hold(wctx, "longer"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a standby of a %v lease took a part whose holder renews its %v lease: %v", short, long, err)
	}
	wcancel()
	la.release(true) // killed: the key stays as last renewed
	t0 := time.Now()
	lb, err := b.hold(ctx, "longer")
	if err != nil {
		t.Fatal(err)
	}
	defer lb.release(false)
	if d := time.Since(t0); d < long-long/4 {
		// The holder may have renewed up to long/4 before it was killed.
		t.Fatalf("the standby took a killed holder's part after %v, before the holder's %v lease could lapse", d, long)
	}
	for _, c := range []struct {
		name string
		want time.Duration
	}{{"h/1/ab/10s", 10 * time.Second}, {"h/1/ab", 0}, {"h/1/ab/-1s", 0}, {"h/1/ab/soon", 0}, {"h/1/ab/1000h", maxHeldPeriod}} {
		if got := heldPeriod(c.name); got != c.want {
			t.Errorf("heldPeriod(%q) = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestLeaseSurvivesServerRestart: a holder whose server is down for a
// while shorter than 3/4 of its lease keeps the lease (it tries again
// every Lease/16 until the server is back), one whose server is down for
// longer renews it once the server is back (nobody took it), and a
// holder whose renewal was written but not answered keeps it too (the
// key still names it).
// With Lease 4 s the holder gave up at 2 s before: one renewal timed out
// (1 s) after a tick (1 s) and the lease was lost to a 1.5 s outage.
func TestLeaseSurvivesServerRestart(t *testing.T) {
	srv := startRestartable(t)
	st, err := NewStore(connect(t, srv.s.ClientURL()), StoreOptions{Part: 0, Lease: 4 * time.Second, Poll: 50 * time.Millisecond, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, l := firstHolder(t, st, "outage")
	for round := range 3 {
		time.Sleep(1200 * time.Millisecond) // past a renewal, at a random phase of the next
		srv.restart(1500 * time.Millisecond)
		if l.ctx.Err() != nil {
			t.Fatalf("round %d: the lease was lost to a 1.5 s outage of the server (lease 4 s)", round)
		}
	}
	time.Sleep(2 * time.Second) // a renewal after the last restart
	if l.ctx.Err() != nil || st.Stats().LeasesLost != 0 {
		t.Fatalf("the lease after three outages: %v, %+v", l.ctx.Err(), st.Stats())
	}
	// Away for longer than the lease: stale meanwhile, renewed once the
	// server is back (nobody took it), not lost.
	srv.restart(6 * time.Second)
	if err := l.await(ctx); err != nil || st.Stats().LeasesLost != 0 {
		t.Fatalf("the lease after a 6 s outage (lease 4 s): %v, %+v", err, st.Stats())
	}
	// A renewal written but unanswered: the key moved on to a revision
	// this process did not see, and still names it.
	kv, err := leasesBucket(ctx, st.js, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, leaseKey("outage", 0), []byte(st.holder)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2500 * time.Millisecond) // two ticks
	if l.ctx.Err() != nil {
		t.Fatal("the lease was lost to a revision that names its holder")
	}
	l.release(false)
	if _, err := kv.Get(ctx, leaseKey("outage", 0)); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatalf("the released lease's key: %v", err)
	}
}

// firstHolder makes the leases bucket (the coordinator's part) and has st
// take the lease of its part of campaign id; ctx lasts a minute, the
// test's bound.
func firstHolder(t *testing.T, st *StoreServer, id string) (context.Context, *lease) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	if _, err := leasesBucket(ctx, st.js, true); err != nil {
		t.Fatal(err)
	}
	l, err := st.hold(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return ctx, l
}

package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/act"
	"github.com/nats-io/nats.go/jetstream"
)

// One coordinator a campaign: a second one, fresh or resuming, is refused
// while the first renews its lease, and deletes nothing of its campaign;
// one killed leaves its lease, which the next takes over after Lease, or,
// resuming, at once when the holder was a process of this host that is
// gone; a
// coordinator whose lease is taken from it stops with ErrCampaignTaken
// and leaves the campaign to the new holder.
func TestCoordinatorLease(t *testing.T) {
	c := testCampaign(t)
	s := startServer(t, t.TempDir(), -1)
	nc := connect(t, s.ClientURL())
	h := act.CampaignHeader{Path: c.Path, Source: c.Source, Subject: "native", Program: "p"}
	const lease = 400 * time.Millisecond
	start := func(resume bool) (*Executor, error) {
		return NewExecutor(context.Background(), nc, c, h, Options{ID: "lease", Resume: resume, Lease: lease, Logger: testLogger(t)})
	}
	a, err := start(false)
	if err != nil {
		t.Fatal(err)
	}
	a.Dispatch(0, []act.Config{{}}) // a chunk in its work stream
	deadline := time.Now().Add(5 * time.Second)
	for a.Stats().Published == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	for _, resume := range []bool{false, true} {
		if b, err := start(resume); !errors.Is(err, ErrCampaignHeld) || !strings.Contains(err.Error(), "coordinated by "+a.lease.sp.holder) {
			if b != nil {
				b.Close()
			}
			t.Fatalf("a second coordinator (resume %v) while the first runs: %v, want ErrCampaignHeld naming %s", resume, err, a.lease.sp.holder)
		}
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := a.work.Info(context.Background()); err != nil || info.State.Msgs != 1 {
		t.Fatalf("the first coordinator's work stream after the second was refused: %v, %v", info, err)
	}

	// Killed: its lease stays, unrenewed.
	killedExecutor{a}.Close()
	t0 := time.Now()
	b, err := start(true)
	if err != nil {
		t.Fatalf("resuming after the holder was killed: %v", err)
	}
	if waited := time.Since(t0); waited < lease {
		t.Errorf("took a killed holder's lease over after %v, before its period %v", waited, lease)
	}
	// Fenced: a chunk the killed one sends late (a process stopped, not
	// dead) lands nowhere.
	if _, err := js.Publish(context.Background(), workSubject("lease", a.epoch), []byte("late")); err == nil {
		t.Error("a chunk on the predecessor's work subject was stored after its successor's setup")
	}

	// Its lease taken from it: it stops, and leaves the campaign alone.
	leases, err := leasesBucket(context.Background(), js, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leases.Put(context.Background(), coordinatorKey("lease"), []byte("elsewhere/1/x")); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-b.Failed():
		if !errors.Is(err, ErrCampaignTaken) {
			t.Fatalf("the coordinator whose lease was taken: %v, want ErrCampaignTaken", err)
		}
	case <-time.After(10 * lease):
		t.Fatal("a coordinator whose lease was taken went on")
	}
	b.Close()
	if e, err := leases.Get(context.Background(), coordinatorKey("lease")); err != nil || string(e.Value()) != "elsewhere/1/x" {
		t.Fatalf("the new holder's lease after the old one closed: %v, %v", e, err)
	}
	kv, err := js.KeyValue(context.Background(), Bucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Get(context.Background(), "lease"); err != nil {
		t.Fatalf("the campaign's header after the old coordinator closed: %v", err)
	}

	// A holder of this host whose process is gone is taken over at once,
	// not after the lease period.
	host, _ := os.Hostname()
	if _, err := leases.Put(context.Background(), coordinatorKey("lease"), []byte(fmt.Sprintf("%s/%d/x", host, 1<<30))); err != nil {
		t.Fatal(err)
	}
	t0 = time.Now()
	d, err := NewExecutor(context.Background(), nc, c, h, Options{ID: "lease", Resume: true, Lease: time.Minute, Logger: testLogger(t)})
	if err != nil {
		t.Fatalf("resuming after a gone holder of this host: %v", err)
	}
	if waited := time.Since(t0); waited > 10*time.Second {
		t.Errorf("a gone holder's lease taken over after %v", waited)
	}
	d.Close()
	if _, err := leases.Get(context.Background(), coordinatorKey("lease")); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatalf("the lease after Close: %v, want deleted", err)
	}

	// A fresh run waits the period even then: its holder may be another
	// machine's of the same host name.
	if _, err := leases.Put(context.Background(), coordinatorKey("lease"), []byte(fmt.Sprintf("%s/%d/x", host, 1<<30))); err != nil {
		t.Fatal(err)
	}
	t0 = time.Now()
	f, err := start(false)
	if err != nil {
		t.Fatalf("a fresh run after a gone holder: %v", err)
	}
	if waited := time.Since(t0); waited < lease {
		t.Errorf("a fresh run took a gone holder's lease over after %v, before its period %v", waited, lease)
	}
	f.Close()
}

// TestLeaseSuspended: a holder whose machine was suspended for longer
// than its lease (its lease clock, CLOCK_BOOTTIME, moved on while its
// timers stood still) finds its lease stale before it acts: await renews
// it first, by a compare-and-set on the revision it last wrote, and lets
// it act once that succeeds (nobody took the key). Suspended again while
// another process takes the key, it is told errLeaseLost, and the key
// stays the taker's.
func TestLeaseSuspended(t *testing.T) {
	s := startServer(t, t.TempDir(), -1)
	js, err := jetstream.New(connect(t, s.ClientURL()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	kv, err := leasesBucket(ctx, js, true)
	if err != nil {
		t.Fatal(err)
	}
	var skew atomic.Int64
	// A period of an hour: no renewal comes but those await asks for.
	const period = time.Hour
	sp := &leaseSpec{kv: kv, key: "suspended.0", holder: holderName(period), period: period, poll: time.Second, what: "test", log: testLogger(t),
		clock: func() time.Duration { return leaseClock() + time.Duration(skew.Load()) }}
	l, err := takeLease(ctx, ctx, sp, false)
	if err != nil {
		t.Fatal(err)
	}
	defer l.release(false)
	rev := func() uint64 {
		e, err := kv.Get(ctx, sp.key)
		if err != nil || string(e.Value()) != sp.holder {
			t.Fatalf("the key: %v, %v", e, err)
		}
		return e.Revision()
	}
	r0 := rev()
	if err := l.await(ctx); err != nil || rev() != r0 {
		t.Fatalf("a fresh lease: %v, or renewed by await", err)
	}
	skew.Add(int64(2 * period)) // suspended
	if err := l.await(ctx); err != nil {
		t.Fatalf("after a suspension nobody used: %v", err)
	}
	if r1 := rev(); r1 == r0 {
		t.Fatal("a stale lease let its holder act without renewing it")
	}
	skew.Add(int64(2 * period))
	if _, err := kv.Put(ctx, sp.key, []byte("elsewhere/1/x/1h")); err != nil {
		t.Fatal(err)
	}
	if err := l.await(ctx); !errors.Is(err, errLeaseLost) {
		t.Fatalf("after a suspension in which another took the key: %v, want errLeaseLost", err)
	}
	<-l.ctx.Done()
	l.release(false)
	if e, err := kv.Get(ctx, sp.key); err != nil || string(e.Value()) != "elsewhere/1/x/1h" {
		t.Fatalf("the taker's key after the lost lease's release: %v, %v", e, err)
	}
}

// TestCoordinatorStopped: a coordinator process stopped (SIGSTOP) for
// three times its lease, while its worker hosts go on, carries on once
// continued if nobody took its campaign over: it finds its lease stale
// before it acts, renews it (the key unchanged) and the campaign ends as
// the local run. If another process took the lease meanwhile, it stops
// (exit 3, ErrCampaignTaken) without acting on the campaign: no chunk
// published, no result acked, the lease, header and streams left to the
// taker. An act it checked before it was stopped, still in its client's
// write buffer or between the check and the sending, reaches the server
// after the taker's fence and is refused there (coordlease.go, "Fencing").
func TestCoordinatorStopped(t *testing.T) {
	if testing.Short() {
		t.Skip("stops a coordinator process for seconds")
	}
	c := testCampaign(t)
	ref, refDir := reference(t, c)
	s := startServer(t, t.TempDir(), -1)
	startHosts(t, s.ClientURL(), 2, 1, "")
	js, err := jetstream.New(connect(t, s.ClientURL()))
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const lease = time.Second
	for _, taken := range []bool{false, true} {
		t.Run(fmt.Sprintf("taken=%v", taken), func(t *testing.T) {
			id, dir := fmt.Sprintf("stopped-%v", taken), t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			coord := exec.Command(exe, "coordinator", s.ClientURL(), dir, id, lease.String())
			log := &syncWriter{w: &bytes.Buffer{}}
			coord.Stderr = log
			if err := coord.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- coord.Wait() }()
			ended := false
			defer func() {
				if !ended {
					_ = coord.Process.Signal(syscall.SIGCONT)
					_ = coord.Process.Kill()
					<-exited
				}
			}()
			for {
				if info, err := act.ReadCheckpoint(dir, "act"); err == nil && info.Sims >= 128 {
					break
				}
				select {
				case err := <-exited:
					ended = true
					t.Fatalf("the coordinator ended before its checkpoint of 128 simulations: %v\n%s", err, log)
				case <-ctx.Done():
					t.Fatalf("no checkpoint of 128 simulations\n%s", log)
				case <-time.After(20 * time.Millisecond):
				}
			}
			if err := coord.Process.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			time.Sleep(3 * lease)
			leases, err := leasesBucket(ctx, js, false)
			if err != nil {
				t.Fatal(err)
			}
			const taker = "elsewhere/1/x/1s"
			if taken {
				if _, err := leases.Put(ctx, coordinatorKey(id), []byte(taker)); err != nil {
					t.Fatal(err)
				}
				fenceAsSuccessor(ctx, t, js, id)
			}
			before := campaignActs(ctx, t, js, id)
			if err := coord.Process.Signal(syscall.SIGCONT); err != nil {
				t.Fatal(err)
			}
			var werr error
			select {
			case werr = <-exited:
				ended = true
			case <-ctx.Done():
				t.Fatalf("the continued coordinator did not end\n%s", log)
			}
			if !taken {
				if werr != nil || !strings.Contains(log.String(), "lease renewed after it had gone unrenewed") {
					t.Fatalf("continued, its lease untaken: %v; want exit 0 and the lease renewed after its lapse\n%s", werr, log)
				}
				rep, err := act.LoadReport(dir, "act")
				if err != nil {
					t.Fatal(err)
				}
				sameAsLocal(t, "coordinator stopped past its lease", ref, rep, refDir, dir)
				return
			}
			var ee *exec.ExitError
			if !errors.As(werr, &ee) || ee.ExitCode() != 3 || !strings.Contains(log.String(), ErrCampaignTaken.Error()) {
				t.Fatalf("continued, its lease taken: %v; want exit 3 with ErrCampaignTaken\n%s", werr, log)
			}
			if after := campaignActs(ctx, t, js, id); after != before {
				t.Fatalf("the coordinator acted on its campaign after its lease was taken: %s, then %s\n%s", before, after, log)
			}
			if e, err := leases.Get(ctx, coordinatorKey(id)); err != nil || string(e.Value()) != taker {
				t.Fatalf("the taker's lease: %v, %v", e, err)
			}
			kv, err := js.KeyValue(ctx, Bucket)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := kv.Get(ctx, id); err != nil {
				t.Fatalf("the campaign's header after the stopped coordinator ended: %v", err)
			}
		})
	}
}

// TestFencedAck: an ack that a coordinator stopped past its lease sends
// once it is continued, of a result its successor has not merged, is
// dropped by the server: the successor deleted the predecessor's
// consumer (deleteCoordinatorConsumers) and made its own, which still
// gets the result (coordlease.go, "Fencing").
func TestFencedAck(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s := startServer(t, t.TempDir(), -1)
	js, err := jetstream.New(connect(t, s.ClientURL()))
	if err != nil {
		t.Fatal(err)
	}
	const id = "fenced"
	results, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: resultsStream(id), Subjects: []string{resultSubject(id)},
		Retention: jetstream.WorkQueuePolicy})
	if err != nil {
		t.Fatal(err)
	}
	consumer := func(epoch int64) jetstream.Consumer {
		c, err := results.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: coordinatorConsumerOf(epoch),
			AckPolicy: jetstream.AckExplicitPolicy, AckWait: time.Minute, DeliverPolicy: jetstream.DeliverAllPolicy})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	fetch := func(c jetstream.Consumer) jetstream.Msg {
		b, err := c.Fetch(1, jetstream.FetchMaxWait(30*time.Second)) // a loaded machine delays delivery; the assertion is about what comes, not when
		if err != nil {
			t.Fatal(err)
		}
		for m := range b.Messages() {
			return m
		}
		t.Fatalf("no result delivered: %v", b.Error())
		return nil
	}
	if _, err := js.Publish(ctx, resultSubject(id), []byte("result")); err != nil {
		t.Fatal(err)
	}
	held := fetch(consumer(1)) // the predecessor received it, and was stopped
	if err := deleteCoordinatorConsumers(ctx, results); err != nil {
		t.Fatal(err)
	}
	successor := consumer(2)
	if err := held.DoubleAck(ctx); err == nil {
		t.Error("the server confirmed the predecessor's late ack")
	}
	if m := fetch(successor); string(m.Data()) != "result" {
		t.Fatalf("the successor got %q", m.Data())
	}
	names := results.ConsumerNames(ctx)
	var left []string
	for n := range names.Name() {
		left = append(left, n)
	}
	if len(left) != 1 || left[0] != coordinatorConsumerOf(2) {
		t.Fatalf("consumers after the fence: %v, want only the successor's", left)
	}
}

// fenceAsSuccessor does to campaign id's streams what a coordinator that
// takes the campaign over does in its setup before it acts (coordlease.go,
// "Fencing"): the work stream takes only its epoch's subject, and the
// coordinator results consumers of earlier epochs are deleted.
func fenceAsSuccessor(ctx context.Context, t *testing.T, js jetstream.JetStream, id string) {
	t.Helper()
	work, err := js.Stream(ctx, workStream(id))
	if err != nil {
		t.Fatal(err)
	}
	cfg := work.CachedInfo().Config
	cfg.Subjects = []string{workSubject(id, 1)}
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	results, err := js.Stream(ctx, resultsStream(id))
	if err != nil {
		t.Fatal(err)
	}
	if err := deleteCoordinatorConsumers(ctx, results); err != nil {
		t.Fatal(err)
	}
}

// campaignActs sums up what a coordinator did to campaign id's streams:
// the chunks it published (the work stream's last sequence) and the
// results it acked (gone from the results stream, which keeps a result
// until its ack: its first sequence and interior deletions).
func campaignActs(ctx context.Context, t *testing.T, js jetstream.JetStream, id string) string {
	t.Helper()
	var b strings.Builder
	for _, name := range []string{workStream(id), resultsStream(id)} {
		st, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		info, err := st.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if name == workStream(id) {
			fmt.Fprintf(&b, "work: last %d; ", info.State.LastSeq)
		} else {
			fmt.Fprintf(&b, "results: first %d, deleted %d", info.State.FirstSeq, info.State.NumDeleted)
		}
	}
	return b.String()
}

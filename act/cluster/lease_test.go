package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
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

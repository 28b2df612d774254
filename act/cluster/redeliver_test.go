package cluster

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/actfuzz/actfuzz/act"
)

// Shares taken from a part's consumer by a process that then vanished
// holding them (kill -9 of a store process, a stopped one that lost its
// lease, a delivery cut by a server restart) were delivered again only
// after the consumer's AckWait, 10 minutes, and the merge that needed
// them stopped the campaign after PartTimeout (exit 3): the coordinator
// makes the part's consumer again once a merge's shares have been
// missing for remakeEvery. Shares acked and gone (a part merged them,
// and the coordinator died before it acked their results) come again
// from their configurations, published again alone after a second
// remakeEvery. Either way the campaign ends as the local run.
func TestStorePartSharesRedelivered(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a merge's shares for 20 to 40 s")
	}
	c, ref, refDir, s := partsCluster(t)
	startStores(t, s.ClientURL(), 2)
	nc := connect(t, s.ClientURL())
	for _, acked := range []bool{false, true} {
		t.Run(fmt.Sprintf("acked=%v", acked), func(t *testing.T) {
			dir, id := t.TempDir(), fmt.Sprintf("part-redelivered-%v", acked)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			stolen := make(chan int, 1)
			rep, ex := clusterRun(t, ctx, c, nc, dir, Options{ID: id, Parts: 2, PartTimeout: 5 * time.Minute}, func(e *Executor, _ act.CampaignHeader) {
				// A second puller on part 1's consumer takes 8 shares.
				go func() {
					n := 0
					defer func() { stolen <- n }()
					cons, err := e.js.Consumer(ctx, statesStream(id), partConsumer(1))
					if err != nil {
						t.Error(err)
						return
					}
					for n < 8 && ctx.Err() == nil {
						b, err := cons.Fetch(8-n, jetstream.FetchMaxWait(200*time.Millisecond))
						if err != nil {
							continue
						}
						for m := range b.Messages() {
							if acked {
								_ = m.Ack()
							}
							n++
						}
					}
				}()
			}, act.Options{StoreParts: 2})
			st := ex.Stats()
			t.Logf("%d shares taken by the vanished puller; %+v", <-stolen, st)
			sameAsLocal(t, "store part whose shares a vanished process took", ref, rep, refDir, dir)
			if st.Remade == 0 || acked && st.Reissued == 0 {
				t.Fatal("the campaign ended without the part's consumer made again, or the configurations of the acked shares published again: were any taken?")
			}
		})
	}
}

// A share of a simulation the part merged in its current load is held,
// not acked, by the receiving goroutine: when the coordinator has gone
// back to its checkpoint and made the consumer again unseen by the part
// (it was away from a restarting server), its below is the old load's,
// and the shares above the checkpoint are needed again. The next load
// finds it.
func TestStorePartKeepsStaleLookingShare(t *testing.T) {
	p := &partState{s: &StoreServer{opt: StoreOptions{MaxHeld: 1 << 20}, stats: StoreStats{Rejected: map[string]int{}}}, id: "c",
		arrived: make(chan struct{}), shares: map[string][]*candidate{}, pieces: map[string]*pieces{}, below: 640}
	m := &fakeMsg{hdr: nats.Header{hdrCampaign: {"c"}, hdrShare: {workerShareKey(520)}}, data: []byte("share")}
	c, newBatch := p.keep(m)
	if c == nil || newBatch != nil || m.acked || len(p.shares[workerShareKey(520)]) != 1 {
		t.Fatalf("a share below the part's merges: candidate %v, decoded %v, acked %v", c != nil, newBatch != nil, m.acked)
	}
}

// fakeMsg is a message of the states stream (only what keep uses).
type fakeMsg struct {
	jetstream.Msg
	hdr   nats.Header
	data  []byte
	acked bool
}

func (m *fakeMsg) Headers() nats.Header { return m.hdr }
func (m *fakeMsg) Data() []byte         { return m.data }
func (m *fakeMsg) Ack() error           { m.acked = true; return nil }
func (m *fakeMsg) Term() error          { m.acked = true; return nil }

// A coordinator killed after its store parts merged a batch and before it
// acked that batch's results, its checkpoint before the batch: the
// coordinator that continues finds those results in the stream (it does
// not publish their chunks again) and needs their shares for the batch's
// merge. A part acked a share as it merged it, and the merge waited for
// shares no longer in the stream until PartTimeout (exit 3 in
// bench/cluster-chaos.sh); it now acks them at the next merge (settle.go),
// and the campaign ends as the local run, with no share published again.
func TestStorePartsKilledBeforeAcks(t *testing.T) {
	c, ref, refDir, s := partsCluster(t)
	startStores(t, s.ClientURL(), 2)
	nc := connect(t, s.ClientURL())
	dir := t.TempDir()
	const id = "killed-before-acks"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	first, stopFirst := context.WithCancel(ctx)
	killed, firstDone := make(chan struct{}), make(chan error, 1)
	go func() {
		_, err := act.Run(first, c, act.Options{Budget: testBudget, Lag: testLag, Out: dir, StoreParts: 2, CheckpointEvery: 2,
			Executor: func(ctx context.Context, h act.CampaignHeader) (act.Executor, error) {
				ex, err := NewExecutor(ctx, nc, c, h, Options{ID: id, Parts: 2, Lease: 500 * time.Millisecond, Logger: testLogger(t)})
				if err != nil {
					return nil, err
				}
				return &diesBeforeAcks{Executor: ex, at: 192, killed: killed, hold: first.Done()}, nil
			}})
		firstDone <- err
	}()
	select {
	case <-killed:
	case err := <-firstDone:
		t.Fatalf("the first coordinator ended before the batch to 192: %v", err)
	case <-ctx.Done():
		t.Fatal("the first coordinator did not merge 192 simulations")
	}
	if info, err := act.ReadCheckpoint(dir, "act"); err != nil || info.Sims >= 192 {
		t.Fatalf("the checkpoint the coordinator died with: %+v, %v; want one before the batch to 192", info, err)
	}
	// Shorter than remakeEvery: the shares must be in the stream.
	rep, ex := clusterRun(t, ctx, c, nc, dir, Options{ID: id, Parts: 2, Resume: true, PartTimeout: 15 * time.Second, Lease: 500 * time.Millisecond}, nil,
		act.Options{StoreParts: 2, Resume: true})
	stopFirst()
	<-firstDone
	sameAsLocal(t, "coordinator killed between its parts' merge and its acks", ref, rep, refDir, dir)
	if st := ex.Stats(); st.Remade != 0 || st.Reissued != 0 {
		t.Fatalf("shares came only when made to: %+v", st)
	}
}

// diesBeforeAcks is an Executor killed (killedExecutor) when Run has merged
// the simulations below at, before it acks their results; Run then waits
// until hold is closed.
type diesBeforeAcks struct {
	*Executor
	at     int
	killed chan struct{}
	hold   <-chan struct{}
	once   sync.Once
}

func (d *diesBeforeAcks) Merged(upto int) {
	if upto < d.at {
		d.Executor.Merged(upto)
		return
	}
	d.once.Do(func() {
		killedExecutor{d.Executor}.Close()
		close(d.killed)
	})
	<-d.hold
}

func (d *diesBeforeAcks) Close() { killedExecutor{d.Executor}.Close() }

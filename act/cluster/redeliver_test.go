package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/actfuzz/actfuzz/act"
)

// Shares taken from a part's consumer by a process that then vanished
// (kill -9 of a store process, a stopped one that lost its lease, a
// delivery cut by a server restart) are delivered again only after the
// consumer's AckWait, 10 minutes: the merge that needs them waited for
// PartTimeout and the campaign stopped (exit 3). The coordinator makes
// the part's consumer again once a merge's shares have been missing for
// remakeEvery, and the campaign ends as the local run.
func TestStorePartSharesRedelivered(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a merge's shares for 20 s")
	}
	c, ref, refDir, s := partsCluster(t)
	startStores(t, s.ClientURL(), 2)
	nc := connect(t, s.ClientURL())
	dir := t.TempDir()
	const id = "part-redelivered"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	stolen := make(chan int, 1)
	rep, ex := clusterRun(t, ctx, c, nc, dir, Options{ID: id, Parts: 2, PartTimeout: 5 * time.Minute}, func(e *Executor, _ act.CampaignHeader) {
		// A second puller on part 1's consumer takes shares and never
		// acks them, as a process that died holding them.
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
				for range b.Messages() {
					n++
				}
			}
		}()
	}, act.Options{StoreParts: 2})
	t.Logf("%d shares taken by the vanished puller; %+v", <-stolen, ex.Stats())
	sameAsLocal(t, "store part whose shares a vanished process held", ref, rep, refDir, dir)
	if ex.Stats().Remade == 0 {
		t.Fatal("the campaign ended without the part's consumer made again: were any shares taken?")
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

package cluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/coverage"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
)

// A server that queues little of a stream's incoming messages
// (max_buffered_size 2 MB here; 128 MB by default, which snapshots of a few
// hundred MB overran) refuses the chunks of an object put as fast as the
// client goes: nats.go's Put then fails with 429. putObject puts it again,
// paced, and the object reads back whole.
func TestPutObjectPaced(t *testing.T) {
	s := startServerWith(t, &server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(),
		NoLog: true, NoSigs: true, MaxPayload: 8 << 20, StreamMaxBufferedSize: 2 << 20})
	nc := connect(t, s.ClientURL())
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	// The product's own bound (objectTimeout), not a fixed guess: at load
	// 48 on 2 cores the paced put below took 80 s.
	ctx, cancel := context.WithTimeout(context.Background(), objectTimeout)
	defer cancel()
	obs, err := partsStore(ctx, nc, js, true)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 96<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i+8 <= len(data); i += 8 {
		v := rng.Uint64()
		for b := range 8 {
			data[i+b] = byte(v >> (8 * b))
		}
	}
	open := func() io.ReadCloser { return io.NopCloser(bytes.NewReader(data)) }
	// As before: one Put, in chunks of the server's max_payload.
	_, err = obs.Put(ctx, jetstream.ObjectMeta{Name: "unpaced", Opts: &jetstream.ObjectMetaOptions{ChunkSize: 8<<20 - partHeadroom}}, open())
	switch {
	case err == nil:
		// A starved client may publish slowly enough for the server:
		// timing, not a result. The paced put is still checked.
		t.Logf("an unpaced put of %d MB went through (a slow client on a loaded machine)", len(data)>>20)
	case !overloaded(err):
		t.Fatalf("an unpaced put of %d MB: %v, want the server's 429", len(data)>>20, err)
	}
	var retries int
	info, err := putObject(ctx, nc, obs, jetstream.ObjectMeta{Name: "paced"}, 8<<20-partHeadroom, open,
		func(int) time.Duration { retries++; return 10 * time.Millisecond })
	if err != nil {
		t.Fatalf("putObject: %v (after %d retries)", err, retries)
	}
	if retries == 0 {
		t.Logf("the paced put went through at once")
	}
	if info.Chunks < uint32(len(data)/objectChunk) {
		t.Fatalf("%d chunks, want chunks of at most %d bytes", info.Chunks, objectChunk)
	}
	got, err := obs.GetBytes(ctx, "paced")
	if err != nil {
		t.Fatal(err)
	}
	if sha256.Sum256(got) != sha256.Sum256(data) {
		t.Fatalf("read back %d bytes, not the %d put", len(got), len(data))
	}
}

// An object's transfer gets objectTimeout when its caller gave no
// deadline (nats.go would give the whole call 5 s), and keeps the
// caller's deadline otherwise.
func TestObjectContext(t *testing.T) {
	ctx, cancel := objectContext(context.Background())
	defer cancel()
	if d, ok := ctx.Deadline(); !ok || time.Until(d) < objectTimeout-time.Minute {
		t.Fatalf("no deadline given: deadline %v (%v), want about %v from now", d, ok, objectTimeout)
	}
	want := time.Now().Add(3 * time.Second)
	parent, pcancel := context.WithDeadline(context.Background(), want)
	defer pcancel()
	ctx, cancel = objectContext(parent)
	defer cancel()
	if d, _ := ctx.Deadline(); !d.Equal(want) {
		t.Fatalf("deadline %v, want the caller's %v", d, want)
	}
}

// A store process decodes a part as it reads it from the object store
// (never holding its encoding whole), and still loads only the object
// the coordinator named: one whose SHA-256 differs, another part's or a
// missing one is refused, and the part it held stays. One that passes
// those checks and does not read as the part leaves none: the part held
// went before the read.
func TestPartLoadChecksObject(t *testing.T) {
	s := startServer(t, t.TempDir(), -1)
	nc := connect(t, s.ClientURL())
	st, err := NewStore(nc, StoreOptions{Part: 1})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	obs, err := partsStore(ctx, nc, st.js, true)
	if err != nil {
		t.Fatal(err)
	}
	// Two parts of a store of a few thousand states.
	whole := randomStore(t, 3, 20, 300, 64)
	_, blobs, err := coverage.SplitEncoded(whole, 2)
	if err != nil {
		t.Fatal(err)
	}
	put := func(name string, b []byte) []byte {
		t.Helper()
		open := func() io.ReadCloser { return io.NopCloser(bytes.NewReader(b)) }
		if _, err := putObject(ctx, nc, obs, jetstream.ObjectMeta{Name: name}, 1<<20, open, nil); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		return sum[:]
	}
	sum1 := put("c/1", blobs[1])
	sum0 := put("c/0", blobs[0])
	p := &partState{s: st, id: "c", part: 1}
	if err := p.load(ctx, partRequest{Op: opLoad, Object: "c/1", Sum: sum1, Parts: 2}); err != nil {
		t.Fatal(err)
	}
	loaded := p.store
	if loaded == nil || loaded.Len() == 0 {
		t.Fatal("nothing loaded")
	}
	var want, got bytes.Buffer
	if _, err := loaded.WriteTo(&got); err != nil {
		t.Fatal(err)
	}
	want.Write(blobs[1])
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatal("the loaded part does not write what was put")
	}
	kept := func(name string, req partRequest) {
		t.Helper()
		if err := p.load(ctx, req); err == nil {
			t.Errorf("%s: loaded", name)
		}
		if p.store != loaded {
			t.Fatalf("%s: the part changed", name)
		}
	}
	kept("another sum", partRequest{Op: opLoad, Object: "c/1", Sum: sum0, Parts: 2})
	kept("another part's object", partRequest{Op: opLoad, Object: "c/0", Sum: sum0, Parts: 2})
	if err := obs.Delete(ctx, "c/1"); err != nil {
		t.Fatal(err)
	}
	kept("no object", partRequest{Op: opLoad, Object: "c/1", Sum: sum1, Parts: 2})
	// An object of the right name and digest that does not read as the
	// part (here part 0's encoding): the part held went before the read,
	// so that a load never holds two parts, and none is left.
	sum := put("c/1", blobs[0])
	if err := p.load(ctx, partRequest{Op: opLoad, Object: "c/1", Sum: sum, Parts: 2}); err == nil {
		t.Fatal("part 0's encoding loaded as part 1")
	}
	if p.store != nil {
		t.Fatal("a load that read an object kept the part it held")
	}
	if rep := p.handle(ctx, partRequest{Op: opPool, Keys: 1, Key: []uint64{0}}); !rep.NotLoaded {
		t.Fatalf("after a failed read: %+v, want not loaded", rep)
	}
}

// keyRecorder is a pool source that records the keys it is asked for
// (by the index, for different parts at once).
type keyRecorder struct {
	coverage.Parts
	mu   sync.Mutex
	keys map[int][][]uint64
}

func (r *keyRecorder) Pools(part int, keys [][]uint64) ([][]coverage.Visit, error) {
	r.mu.Lock()
	r.keys[part] = append(r.keys[part], keys...)
	r.mu.Unlock()
	return r.Parts.Pools(part, keys)
}

// A store process answers a pool request for many states with their
// pools, as its part has them, and refuses one that is malformed: no
// states, keys of another length, a state another part keeps, more than
// maxPoolKeys states.
func TestPartPoolRequest(t *testing.T) {
	index, parts, err := coverage.Split(randomStore(t, 5, 10, 200, 16), 2)
	if err != nil {
		t.Fatal(err)
	}
	rec := &keyRecorder{Parts: parts, keys: map[int][][]uint64{}}
	index.SetPoolSource(rec)
	var refs []coverage.StateRef
	for ref := range index.States() {
		refs = append(refs, ref)
	}
	index.Pools(refs)
	if err := index.PoolErr(); err != nil {
		t.Fatal(err)
	}
	keys := rec.keys[1]
	if len(keys) < 2 || len(rec.keys[0]) == 0 {
		t.Fatalf("keys asked of the parts: %d and %d", len(rec.keys[0]), len(keys))
	}
	p := &partState{id: "c", part: 1, store: parts[1], epoch: 7}
	request := func(keys [][]uint64, n int) partReply {
		var flat []uint64
		for _, k := range keys {
			flat = append(flat, k...)
		}
		return p.handle(context.Background(), partRequest{Op: opPool, Epoch: 7, Key: flat, Keys: n})
	}
	rep := request(keys, len(keys))
	if rep.Err != "" || len(rep.Lens) != len(keys) {
		t.Fatalf("pool request: %+v", rep)
	}
	wantPools, _ := parts[1].KeyPools(keys)
	at := 0
	for i, n := range rep.Lens {
		if got := rep.Visits[at : at+n]; !slices.Equal(got, wantPools[i]) {
			t.Fatalf("state %d: pool %v, want %v", i, got, wantPools[i])
		}
		at += n
	}
	other := rec.keys[0][0]
	many := make([][]uint64, maxPoolKeys+1)
	for i := range many {
		many[i] = keys[0]
	}
	for name, bad := range map[string]partReply{
		"no states":       request(nil, 0),
		"a count of 0":    request(keys[:1], 0),
		"uneven keys":     request(keys[:2], 3),
		"another part's":  request([][]uint64{keys[0], other}, 2),
		"too many states": request(many, len(many)),
	} {
		if bad.Err == "" {
			t.Errorf("%s: answered %+v", name, bad)
		}
	}
}

// randomStore is a store of sims simulations of steps random states each,
// every variable among its first granules granules.
func randomStore(t testing.TB, seed uint64, sims, steps int, granules int64) *coverage.Store {
	t.Helper()
	whole, err := coverage.NewStore(coverage.DefaultSpace(), coverage.Options{Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed+1, seed+1))
	vars := coverage.DefaultSpace().Vars
	for sim := range sims {
		b := whole.NewBatch()
		state := make([]float64, len(vars))
		for step := range steps {
			for j, v := range vars {
				state[j] = v.Value(rng.Int64N(min(v.Granules(), granules)))
			}
			b.Observe(state, int64(step))
		}
		whole.AddBatch(b, uint64(sim))
	}
	return whole
}

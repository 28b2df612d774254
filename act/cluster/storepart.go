package cluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/actfuzz/actfuzz/coverage"
)

// A store process's state for one campaign's part (partState): the shares
// it receives, their merge in the coordinator's order, its news, loads and
// snapshots. StoreServer (store.go) serves it; the names and messages it
// speaks are in storewire.go.

// candidate is a share received, waiting for its merge.
type candidate struct {
	sum  [32]byte
	data []byte
	msgs []jetstream.Msg
	// The share decoded, once: by the receiving goroutine as it arrives,
	// when the part is loaded (off the merge's path: decoding is a fifth
	// to a quarter of a part's work per simulation,
	// BenchmarkCoordinatorParts), else by its merge.
	once    sync.Once
	batch   *coverage.Batch
	pos     []uint32
	err     error
	extra   int  // the decoded batch's bytes, counted in held
	dropped bool // merged or given back (p.mu)
}

// pieces are the pieces of a share received so far.
type pieces struct {
	data [][]byte
	msgs []jetstream.Msg
	got  int
}

// partState is what a store process keeps of one campaign.
type partState struct {
	s       *StoreServer
	id      string
	part    int
	payload int
	memCap  int64 // partCap, set by each load

	mu      sync.Mutex
	arrived chan struct{} // closed and replaced when a share arrives
	shares  map[string][]*candidate
	pieces  map[string]*pieces // by key and SHA-256
	held    int
	below   int // every worker share of an index below was merged
	// newBatch makes the batches shares are decoded into (the loaded
	// part's; nil before the first load), and free keeps merged ones for
	// reuse: decoding into fresh batches costs as much as the merge.
	newBatch func() *coverage.Batch
	free     []*coverage.Batch
	decoding chan struct{} // a slot per decoding goroutine

	store   *coverage.Store // nil until loaded
	epoch   int64
	seq     uint64
	capped  string // why merges are refused: the part is over StoreOptions.Memory
	news    []byte // the last merge's news
	newsSum []byte
	settle  []jetstream.Msg // the last merge's shares, acked at the next (settle.go)
}

// maxFreeBatches and maxFreeBatch bound the merged batches a part keeps
// for reuse (at most 256 MiB): a batch keeps the memory of the largest
// share it held.
const (
	maxFreeBatches = 256
	maxFreeBatch   = 1 << 20
)

// decode decodes c once, into a batch of newBatch's or of the free list.
func (p *partState) decode(c *candidate, newBatch func() *coverage.Batch) {
	c.once.Do(func() {
		p.mu.Lock()
		if n := len(p.free); n > 0 {
			c.batch, p.free = p.free[n-1], p.free[:n-1]
		}
		p.mu.Unlock()
		if c.batch == nil {
			c.batch = newBatch()
		}
		c.pos, c.err = c.batch.UnmarshalShare(c.data, nil)
		p.mu.Lock()
		if !c.dropped {
			c.extra = c.batch.Bytes()
			p.held += c.extra
		}
		p.mu.Unlock()
	})
}

// serveCampaign keeps the campaign's part while l is held: it receives
// the shares on the part's consumer and answers the coordinator's
// requests, one at a time, each once l is fresh (lease.await: a process
// starved, stopped or suspended past its lease renews it first, and
// stops serving if another took it).
func (s *StoreServer) serveCampaign(l *lease, id string) error {
	ctx := l.ctx
	ps := &partState{s: s, id: id, part: s.opt.Part, payload: max(int(s.nc.MaxPayload())-partHeadroom, 1024),
		arrived: make(chan struct{}), shares: map[string][]*candidate{}, pieces: map[string]*pieces{},
		decoding: make(chan struct{}, runtime.GOMAXPROCS(0))}
	// consume receives the shares of the part's consumer on a goroutine
	// of its own; it sends on gone when the consumer is gone (a resumed
	// coordinator made it again) and stops.
	var (
		mu       sync.Mutex
		msgs     jetstream.MessagesContext
		received chan struct{} // closed when the receiving goroutine stops
	)
	gone := make(chan error, 1)
	consume := func() error {
		cons, err := s.js.Consumer(ctx, statesStream(id), partConsumer(s.opt.Part))
		if err != nil {
			return fmt.Errorf("the states consumer: %w", err)
		}
		it, err := cons.Messages(jetstream.PullMaxMessages(256))
		if err != nil {
			return fmt.Errorf("the states consumer: %w", err)
		}
		done := make(chan struct{})
		mu.Lock()
		msgs, received = it, done
		mu.Unlock()
		go func() {
			defer close(done)
			for {
				m, err := it.Next()
				switch {
				case err == nil && s.isFrozen():
					// Taken before the freeze: the consumer's AckWait
					// brings it back.
				case err == nil && l.await(ctx) != nil:
					return // lost: ctx has ended
				case err == nil:
					ps.receive(m)
				case errors.Is(err, jetstream.ErrMsgIteratorClosed):
					return
				case errors.Is(err, jetstream.ErrConsumerDeleted) || errors.Is(err, jetstream.ErrConsumerNotFound):
					gone <- err
					return
				default:
					time.Sleep(100 * time.Millisecond)
				}
			}
		}()
		return nil
	}
	if err := consume(); err != nil {
		return err
	}
	// What this process holds goes back to the stream at once when it
	// stops serving the campaign (a coordinator's Close): once the
	// receiving goroutine has stopped, so that nothing it takes after
	// waits for the consumer's AckWait.
	quit := make(chan struct{})
	defer func() {
		close(quit)
		mu.Lock()
		it, done := msgs, received
		mu.Unlock()
		it.Stop()
		<-done
		ps.release()
	}()
	go func() {
		// A frozen process asks for nothing more: its client would
		// otherwise go on pulling, unlike a stopped process's.
		select {
		case <-s.frozenC:
			mu.Lock()
			it := msgs
			mu.Unlock()
			it.Stop()
		case <-quit:
		}
	}()
	reqs := make(chan *nats.Msg, 64)
	sub, err := s.nc.ChanSubscribe(partSubject(id, s.opt.Part), reqs)
	if err != nil {
		return err
	}
	defer func() { _ = sub.Unsubscribe() }()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-gone:
			// A resumed coordinator made the consumer again, before it
			// loads the part: the part state stays (a load may have come
			// already), and the shares held come again from the new
			// consumer, which acks them with those held when merged.
			// Serving afresh instead dropped a part loaded meanwhile
			// ("not loaded" at the first merge: TestStorePartStandby).
			s.log.Info("the campaign's states consumer was made again (a coordinator resumed): receiving from the new one", "campaign", id, "err", err)
			if s.isFrozen() {
				continue
			}
			// The resumed coordinator merges again from its checkpoint,
			// which may be below what this part merged: a share below
			// that is not stale now, and acking it as stale would lose it.
			ps.mu.Lock()
			ps.below = 0
			ps.mu.Unlock()
			for l.await(ctx) == nil && consume() != nil {
				select {
				case <-ctx.Done():
					return nil
				case <-time.After(100 * time.Millisecond):
				}
			}
		case m := <-reqs:
			if s.isFrozen() {
				continue
			}
			if l.await(ctx) != nil {
				return nil // lost: another process serves the part
			}
			var rep partReply
			req, err := decodePartRequest(m.Data)
			if err != nil {
				rep.Err = "malformed request: " + err.Error()
			} else {
				rep = ps.handle(ctx, req)
			}
			if ctx.Err() != nil {
				// Stopping mid-request: leave without an answer, as a
				// killed process does, so that the coordinator takes
				// the part as lost (a standby or a restart takes it
				// over) instead of failing the campaign on this
				// process's "context canceled".
				return nil
			}
			if err := m.Respond(rep.appendBinary(nil)); err != nil {
				s.log.Warn("answering the coordinator", "campaign", id, "op", req.Op, "err", err)
			}
		}
	}
}

// receive keeps a share until its merge, and decodes it: on a goroutine
// of its own while fewer than GOMAXPROCS decode, so that receiving goes
// on; else here.
func (p *partState) receive(m jetstream.Msg) {
	c, newBatch := p.keep(m)
	if c == nil || newBatch == nil {
		return
	}
	p.s.count(func(st *StoreStats) { st.DecodedAhead++ })
	select {
	case p.decoding <- struct{}{}:
		go func() {
			defer func() { <-p.decoding }()
			p.decode(c, newBatch)
		}()
	default:
		p.decode(c, newBatch)
	}
}

// keep holds m's share, or piece, until its merge: it returns the share
// if it is new, and the part's batch maker.
func (p *partState) keep(m jetstream.Msg) (*candidate, func() *coverage.Batch) {
	key := m.Headers().Get(hdrShare)
	reject := func(reason string) {
		p.s.count(func(st *StoreStats) { st.Rejected[reason]++ })
		_ = m.Term()
	}
	if m.Headers().Get(hdrCampaign) != p.id {
		reject("another campaign")
		return nil, nil
	}
	if key == "" || len(key) > 64 {
		reject("no share key")
		return nil, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	// A share of a simulation this part merged (a chunk run twice) is
	// held, not decoded, and acked as stale by the next merge (merge).
	// Acked here, by p.below, shares were lost when the coordinator went
	// back to its checkpoint and made the consumer again while this
	// process was away from the server (it never saw the consumer go, and
	// p.below stayed the old load's): bench/cluster-chaos.sh, "64 of 64
	// shares not received yet" (issue 47).
	i, err := strconv.Atoi(strings.TrimPrefix(key, "i"))
	stale := err == nil && key[0] == 'i' && i < p.below
	if p.held+len(m.Data()) > p.s.opt.MaxHeld {
		_ = m.NakWithDelay(time.Second)
		return nil, nil
	}
	c := &candidate{data: m.Data(), msgs: []jetstream.Msg{m}}
	if hp := m.Headers().Get(hdrPart); hp != "" {
		var i, n int
		if _, err := fmt.Sscanf(hp, "%d/%d", &i, &n); err != nil || n < 2 || n > maxSharePieces || i < 0 || i >= n {
			reject("malformed piece")
			return nil, nil
		}
		pk := key + "|" + m.Headers().Get(hdrShareSum)
		ps := p.pieces[pk]
		if ps == nil {
			ps = &pieces{data: make([][]byte, n)}
			p.pieces[pk] = ps
		}
		if len(ps.data) != n || ps.data[i] != nil {
			// A piece again: redelivered (held past AckWait) or
			// published twice. The one held is acked with its share.
			ps.msgs = append(ps.msgs, m)
			return nil, nil
		}
		ps.data[i], ps.got = m.Data(), ps.got+1
		ps.msgs = append(ps.msgs, m)
		p.held += len(m.Data())
		if ps.got < n {
			return nil, nil
		}
		delete(p.pieces, pk)
		p.held -= len(bytes.Join(ps.data, nil))
		c = &candidate{data: bytes.Join(ps.data, nil), msgs: ps.msgs}
	}
	c.sum = sha256.Sum256(c.data)
	for _, held := range p.shares[key] {
		if held.sum == c.sum {
			// The same share again (held past AckWait, or a chunk run
			// twice): acked with the one held.
			held.msgs = append(held.msgs, c.msgs...)
			return nil, nil
		}
	}
	p.shares[key] = append(p.shares[key], c)
	p.held += len(c.data)
	close(p.arrived)
	p.arrived = make(chan struct{})
	if stale {
		return c, nil
	}
	return c, p.newBatch
}

// handle answers one request.
func (p *partState) handle(ctx context.Context, req partRequest) partReply {
	fail := func(format string, args ...any) partReply { return partReply{Err: fmt.Sprintf(format, args...)} }
	if req.Op == opLoad {
		if err := p.load(ctx, req); err != nil {
			return fail("load: %v", err)
		}
		return partReply{}
	}
	if p.store == nil {
		rep := fail("not loaded: this store process has no part of campaign %s (it started after the coordinator loaded the parts, or restarted)", p.id)
		rep.NotLoaded = true
		return rep
	}
	if req.Epoch != p.epoch {
		return fail("loaded by another coordinator of campaign %s", p.id)
	}
	switch req.Op {
	case opMerge:
		switch req.Seq {
		case p.seq + 1:
			p.settled(true) // the coordinator acked the last merge's results
			return p.merge(ctx, req.Items)
		case p.seq:
			return p.newsChunk(0) // the coordinator asks again
		}
	case opNews:
		if req.Seq == p.seq {
			return p.newsChunk(req.Chunk)
		}
	case opPool, opCount:
		if req.Seq != p.seq {
			break
		}
		// The store checks the key against this part.
		if req.Op == opCount {
			n, err := p.store.KeyCount(req.Key)
			if err != nil {
				return fail("%v", err)
			}
			return partReply{Count: n}
		}
		if req.Keys <= 0 || req.Keys > maxPoolKeys || len(req.Key)%req.Keys != 0 {
			return fail("a pool request of %d words for %d states", len(req.Key), req.Keys)
		}
		w := len(req.Key) / req.Keys
		keys := make([][]uint64, req.Keys)
		for i := range keys {
			keys[i] = req.Key[i*w : (i+1)*w : (i+1)*w]
		}
		pools, err := p.store.KeyPools(keys)
		if err != nil {
			return fail("%v", err)
		}
		var rep partReply
		rep.Lens = make([]int, len(pools))
		for i, pool := range pools {
			rep.Visits = append(rep.Visits, pool...)
			rep.Lens[i] = len(pool)
		}
		return rep
	case opSnapshot:
		if req.Seq == p.seq {
			return p.snapshot(ctx)
		}
	default:
		return fail("unknown request %q", req.Op)
	}
	return fail("%s for the store after merge %d; this part is after merge %d", req.Op, req.Seq, p.seq)
}

// load replaces the part with the object the coordinator put.
func (p *partState) load(ctx context.Context, req partRequest) error {
	if want := loadObject(p.id, p.part); req.Object != want {
		return fmt.Errorf("object %s: part %d of campaign %s is object %s", req.Object, p.part, p.id, want)
	}
	obs, err := partsStore(ctx, p.s.nc, p.s.js, false)
	if err != nil {
		return err
	}
	// A read cut short by a reconnection is read again (reconnect.go).
	return againAfterReconnect(ctx, p.s.nc, func(ctx context.Context) error { return p.loadFrom(ctx, obs, req) })
}

// loadFrom reads the part's object from obs (load).
func (p *partState) loadFrom(ctx context.Context, obs jetstream.ObjectStore, req partRequest) error {
	octx, cancel := objectContext(ctx)
	defer cancel()
	obj, err := obs.Get(octx, req.Object)
	if err != nil {
		return fmt.Errorf("object %s: %w", req.Object, err)
	}
	defer obj.Close()
	info, err := obj.Info()
	if err != nil {
		return fmt.Errorf("object %s: %w", req.Object, err)
	}
	// The object's digest is the SHA-256 of what the coordinator put
	// (putObject), and the client checks the bytes it reads against it
	// when it reaches their end: the part is decoded as it arrives, and
	// its encoding never held whole.
	if !digestIs(info, req.Sum) {
		return fmt.Errorf("object %s: SHA-256 differs from the coordinator's", req.Object)
	}
	// The part held goes before the new one is read, so that a load
	// (each recovery of the coordinator loads every part again) does not
	// hold two parts at once. The object is this part's and has the
	// coordinator's digest (checked above); if it still does not read
	// (cut short, or not a part), no part is left: the coordinator's next
	// request is answered "not loaded", a lost part.
	p.store = nil
	p.mu.Lock()
	p.newBatch = nil
	p.mu.Unlock()
	p.settled(false) // merged into the part dropped: needed again, maybe
	r := &sizedReader{r: obj, left: int64(info.Size)}
	st, err := coverage.ReadPart(r, p.part, req.Parts)
	if err != nil {
		return err
	}
	if n, err := io.Copy(io.Discard, r); err != nil || r.left != 0 {
		return fmt.Errorf("object %s: read to its end: %v (%d bytes after the part, %d of its size not read)", req.Object, err, n, r.left)
	}
	st.LimitOutOfRange(req.OutOfRange)
	p.store, p.epoch, p.seq, p.news, p.newsSum, p.capped = st, req.Epoch, 0, nil, nil, ""
	p.memCap = p.s.partCap(req.Memory)
	p.mu.Lock()
	p.newBatch = st.NewBatch
	p.mu.Unlock()
	// Shares of the coordinator's own states from an earlier coordinator
	// will never be merged. The loaded part is at its coordinator's
	// checkpoint: what this part merged after it is not stale.
	p.mu.Lock()
	p.below = 0
	for key, cs := range p.shares {
		if key[0] == 'l' && !strings.HasPrefix(key, "l"+strconv.FormatInt(req.Epoch, 10)+".") {
			p.drop(key, cs)
		}
	}
	p.mu.Unlock()
	p.s.log.Info("part loaded", "campaign", p.id, "states", st.Len(), "visits", st.Visits())
	return nil
}

// shareWait bounds how long a merge waits for its shares before it
// answers Missing (the coordinator asks again).
const shareWait = 10 * time.Second

// merge merges the items' shares in order, once they are all here.
func (p *partState) merge(ctx context.Context, items []shareItem) partReply {
	if p.capped != "" {
		return partReply{Err: p.capped}
	}
	deadline := time.After(shareWait)
	found := make([]*candidate, len(items))
	for {
		p.mu.Lock()
		missing := 0
		for i, it := range items {
			if found[i] != nil {
				continue
			}
			for _, c := range p.shares[it.Key] {
				if bytes.Equal(c.sum[:], it.Sum) {
					found[i] = c
				}
			}
			if found[i] == nil {
				missing++
			}
		}
		arrived := p.arrived
		p.mu.Unlock()
		if missing == 0 {
			break
		}
		select {
		case <-arrived:
		case <-deadline:
			return partReply{Missing: true, Err: fmt.Sprintf("%d of %d shares not received yet", missing, len(items))}
		case <-ctx.Done():
			return partReply{Err: ctx.Err().Error()}
		}
	}
	// Most shares were decoded as they arrived; the others are now.
	bs, pos := make([]*coverage.Batch, len(items)), make([][]uint32, len(items))
	ids := make([]uint64, len(items))
	for i, it := range items {
		c := found[i]
		p.decode(c, p.store.NewBatch)
		if c.err != nil {
			return partReply{Err: fmt.Sprintf("share %s: %v", it.Key, c.err)}
		}
		bs[i], pos[i], ids[i] = c.batch, c.pos, it.Config
	}
	news, err := p.store.AddShares(bs, pos, ids)
	if err != nil {
		return partReply{Err: err.Error()}
	}
	var blob []byte
	for i := range news {
		enc, _ := news[i].AppendBinary(nil)
		blob = binary.AppendUvarint(blob, uint64(len(enc)))
		blob = append(blob, enc...)
	}
	sum := sha256.Sum256(blob)
	p.seq++
	p.news, p.newsSum = blob, sum[:]
	p.mu.Lock()
	for _, c := range found {
		if len(p.free) < maxFreeBatches && c.batch.Bytes() <= maxFreeBatch {
			p.free = append(p.free, c.batch)
		}
		c.batch = nil
	}
	for _, it := range items {
		p.retire(it.Key, p.shares[it.Key])
		if i, err := strconv.Atoi(strings.TrimPrefix(it.Key, "i")); err == nil && it.Key[0] == 'i' && i >= p.below {
			p.below = i + 1
		}
	}
	// Shares of simulations merged before (a chunk run twice) go.
	for key, cs := range p.shares {
		if i, err := strconv.Atoi(strings.TrimPrefix(key, "i")); err == nil && key[0] == 'i' && i < p.below {
			p.s.count(func(st *StoreStats) { st.Stale += len(cs) })
			p.drop(key, cs)
		}
	}
	p.mu.Unlock()
	p.s.count(func(st *StoreStats) { st.Merges++; st.Shares += len(items) })
	rep := p.newsChunk(0)
	if limit := p.memCap; limit > 0 {
		if b := int64(p.store.Bytes()); b > limit {
			p.s.count(func(st *StoreStats) { st.Capped++ })
			p.s.log.Error("store part at its memory cap: this merge is its last", "campaign", p.id, "part", p.part, "bytes", b, "cap", limit)
			from := "actfuzz store --memory"
			if p.s.opt.Memory <= 0 {
				from = "the store's share of the campaign's memory budget"
			}
			p.capped = fmt.Sprintf("store part %d holds %d bytes, over its memory cap of %d (%s): "+
				"run the campaign again with --resume and more --store-parts, or a larger cap", p.part, b, limit, from)
			rep.Capped = p.capped
		}
	}
	return rep
}

// newsChunk answers chunk i of the last merge's news.
func (p *partState) newsChunk(i int) partReply {
	n := max(1, (len(p.news)+p.payload-1)/p.payload)
	if i < 0 || i >= n {
		return partReply{Err: fmt.Sprintf("news chunk %d of %d", i, n)}
	}
	lo := i * p.payload
	return partReply{Size: len(p.news), Sum: p.newsSum, Chunks: n, Data: p.news[lo:min(len(p.news), lo+p.payload)]}
}

// snapshot puts the part in the object store and answers its SHA-256.
func (p *partState) snapshot(ctx context.Context) partReply {
	obs, err := partsStore(ctx, p.s.nc, p.s.js, false)
	if err != nil {
		return partReply{Err: err.Error()}
	}
	// Written as it is encoded: no copy of the part is kept. Put hashes
	// what it stores (the object's digest, SHA-256): that is the sum
	// answered, which the coordinator checks as it reads the object.
	// One writer at a time: a retry's writer starts once the last has
	// stopped (its reader closed, its next write fails), and the part
	// goes on merging only once the last writer has stopped.
	var done chan struct{}
	open := func() io.ReadCloser {
		if done != nil {
			<-done
		}
		pr, pw := io.Pipe()
		d := make(chan struct{})
		done = d
		go func() {
			defer close(d)
			_, err := p.store.WriteTo(pw)
			pw.CloseWithError(err)
		}()
		return pr // closed: the writer stops if Put did
	}
	info, err := putObject(ctx, p.s.nc, obs, jetstream.ObjectMeta{Name: snapObject(p.id, p.part)}, p.payload, open, nil)
	if done != nil {
		<-done
	}
	if err != nil {
		return partReply{Err: err.Error()}
	}
	sum, err := jetstream.DecodeObjectDigest(info.Digest)
	if err != nil {
		return partReply{Err: fmt.Sprintf("the snapshot's digest %q: %v", info.Digest, err)}
	}
	return partReply{Sum: sum}
}

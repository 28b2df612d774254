package cluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/coverage"
)

// Store parts (package doc, "Store parts"): names and messages.

// PartsBucket is the object store through which store parts travel
// between the coordinator and the store processes: object ID/J is part J
// as the coordinator loaded it (a new campaign's empty part, or a
// checkpoint's), ID/J.snap as the part last snapshotted it.
const PartsBucket = "actfuzz-parts"

func statesStream(id string) string         { return "ACTFUZZ_" + id + "_STATES" }
func statesSubject(id string, j int) string { return "actfuzz." + id + ".states." + strconv.Itoa(j) }
func partSubject(id string, j int) string   { return "actfuzz." + id + ".part." + strconv.Itoa(j) }
func partConsumer(j int) string             { return "part-" + strconv.Itoa(j) }
func loadObject(id string, j int) string    { return fmt.Sprintf("%s/%d", id, j) }
func snapObject(id string, j int) string    { return fmt.Sprintf("%s/%d.snap", id, j) }

// hdrShare names a share on the states stream: "i<index>" for a worker's
// result, "l<epoch>.<merge>.<item>" for the coordinator's own states (the
// symbolic step's branches).
const hdrShare = "Actfuzz-Share"

// hdrShareSum is the SHA-256 (hex) of the whole share, whose pieces (a
// share over max_payload, each with an Actfuzz-Part "i/n" header) the
// part puts together.
const hdrShareSum = "Actfuzz-Share-Sum"

// maxSharePieces bounds the pieces of one share.
const maxSharePieces = 4096

// publishShare publishes share j of a simulation on the campaign's states
// stream, in pieces of at most payload bytes, and returns its SHA-256.
func publishShare(ctx context.Context, js jetstream.JetStream, payload int, id string, j int, key string, data []byte) ([]byte, error) {
	sum := sha256.Sum256(data)
	n := max(1, (len(data)+payload-1)/payload)
	if n > maxSharePieces {
		return nil, fmt.Errorf("%w: a share of %d bytes", errTooLarge, len(data))
	}
	for i := range n {
		msg := &nats.Msg{Subject: statesSubject(id, j), Header: nats.Header{}, Data: data[i*payload : min(len(data), (i+1)*payload)]}
		msg.Header.Set(hdrCampaign, id)
		msg.Header.Set(hdrShare, key)
		msg.Header.Set(hdrShareSum, hex.EncodeToString(sum[:]))
		if n > 1 {
			msg.Header.Set(hdrPart, fmt.Sprintf("%d/%d", i, n))
		}
		if err := retry(ctx, func() error {
			pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			_, err := js.PublishMsg(pctx, msg)
			return err
		}); err != nil {
			return nil, fmt.Errorf("publishing share %d of %s: %w", j, key, err)
		}
	}
	return sum[:], nil
}

func workerShareKey(index int) string { return "i" + strconv.Itoa(index) }

// partsStore opens (creating it if needed) the object store of parts.
// Its requests are sent again when nc reconnects (reconnect.go).
func partsStore(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, create bool) (obs jetstream.ObjectStore, err error) {
	err = againAfterReconnect(ctx, nc, func(ctx context.Context) error {
		obs, err = js.ObjectStore(ctx, PartsBucket)
		if err == nil || !create || !errors.Is(err, jetstream.ErrBucketNotFound) {
			return err
		}
		obs, err = js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: PartsBucket, Storage: jetstream.FileStorage,
			Description: "actfuzz campaigns' coverage store parts"})
		return err
	})
	return obs, err
}

// partRequest is a coordinator's request to a store part, on
// actfuzz.ID.part.J (core NATS request-reply).
type partRequest struct {
	Op string // opLoad, opMerge, opNews, opPool, opCount, opSnapshot
	// Epoch is the coordinator's: a part serves the coordinator that
	// loaded it last, and refuses the requests of another.
	Epoch int64
	// Seq is the number of merges the part has done (for opMerge: will
	// have done), counted from its load: a request for another state of
	// the store is refused, a merge repeated is answered again.
	Seq uint64
	// opLoad: the object to load (PartsBucket), its SHA-256, the parts,
	// and part 0's out-of-range limit.
	Object     string
	Sum        []byte
	Parts      int
	OutOfRange int
	// opLoad: the campaign's memory budget given to the coordinator (0:
	// none), for a process without a cap of its own (partCap). It comes
	// with every load, so a coordinator resumed with a larger budget
	// raises it.
	Memory int64
	// opMerge: the simulations, in order.
	Items []shareItem
	// opNews: the chunk of the last merge's news wanted.
	Chunk int
	// opPool, opCount: the state, by its key (coverage.PoolSource: the
	// index names its states by region, the part by shard); for opPool,
	// Keys states: their keys, of one length, one after the other.
	Key  []uint64
	Keys int
}

// shareItem names a simulation's share by key and SHA-256, with the
// store's config id of the simulation.
type shareItem struct {
	Key    string
	Sum    []byte
	Config uint64
}

const (
	opLoad     = "load"
	opMerge    = "merge"
	opNews     = "news"
	opPool     = "pool"
	opCount    = "count"
	opSnapshot = "snapshot"
)

// partReply is a store part's answer.
type partReply struct {
	Err string
	// Missing: the merge waits for shares not yet received (ask again).
	Missing bool
	// opMerge, opNews: the merge's news (every item's PartNews encoding,
	// each after its length as a uvarint), in chunks of at most
	// max_payload less 1 KiB: its size, SHA-256, chunk count and chunk.
	Size   int
	Sum    []byte
	Chunks int
	Data   []byte
	// opPool: the pools, one after the other, Lens their lengths;
	// opCount: the count.
	Visits []coverage.Visit
	Lens   []int
	Count  uint64
	// Capped, after a merge: the part is over its memory cap, and this
	// merge was its last (why, for the user).
	Capped string
	// NotLoaded: the process has no part to answer from (it restarted,
	// and lost it).
	NotLoaded bool
}

// maxPartMsg bounds a request or reply of the parts' protocol that is
// decoded (the rest is at most max_payload).
const maxPartMsg = 64 << 20

// StoreOptions configure a store process.
type StoreOptions struct {
	// Part is the part this process keeps, of every campaign it serves
	// that has more parts.
	Part int
	// Campaign serves only the campaign of this id ("": every one).
	Campaign string
	// Program is this build's revision (default corpus.ProgramVersion());
	// a campaign of another is refused.
	Program string
	// Poll is how often the process looks for campaigns (default 1 s).
	Poll time.Duration
	// MaxHeld bounds the bytes of shares held waiting for their merge
	// (default 1 GiB); beyond it a share waits in the stream.
	MaxHeld int
	// Memory caps the bytes of each part kept (coverage.Store.Bytes; 0:
	// the store's share of the campaign's memory budget, when its
	// coordinator was given one, as its index keeps to; else none). A
	// part cannot coarsen as a whole store does (its pools'
	// level is the index's), so the merge that takes it over the cap is
	// its last: its answer says so, the coordinator ends the campaign
	// after that batch with a checkpoint and an error that names the part
	// and the cap, and the campaign resumes with more parts or a larger
	// cap. A part exceeds the cap by at most one merge's growth.
	Memory int64
	// Lease is how long this process, as a standby, waits for a part's
	// holder to renew its lease before taking the part over; as a holder
	// it renews every Lease/4, pauses when it could not for 3/4 of
	// Lease, and stops serving if another took it (DefaultLease; lease.go).
	Lease  time.Duration
	Logger *slog.Logger
}

// StoreStats counts what a store process did.
type StoreStats struct {
	Merges       int               // merges done
	Shares       int               // shares merged
	Stale        int               // shares dropped: their simulation was merged before, or of another coordinator
	DecodedAhead int               // shares decoded as they arrived, before their merge
	Capped       int               // times a part reached StoreOptions.Memory
	TakenOver    int               // parts taken over from a holder that left its lease unrenewed
	LeasesLost   int               // parts this process stopped serving: its lease was lost
	Rejected     map[string]int    // share messages dropped, by reason
	Refused      map[string]string // campaign id → why it was refused
}

// StoreServer is a store process: it keeps part Part of the coverage
// store of the campaigns it serves.
type StoreServer struct {
	nc  *nats.Conn
	js  jetstream.JetStream
	opt StoreOptions
	log *slog.Logger

	holder string // this process's name in its leases

	mu      sync.Mutex
	stats   StoreStats
	refused map[string]uint64
	// abandon (tests): a part stops being served without its lease being
	// deleted, as when the process is killed.
	abandon bool
	// frozen (tests): the process neither answers, nor renews its lease,
	// nor pulls shares, but keeps its connection and its subscription to
	// the requests, as a stopped (SIGSTOP) or partitioned process does
	// until the server's pings fail.
	frozen  atomic.Bool   // read on every share and request: no lock
	frozenC chan struct{} // closed by freeze
	// list lists the campaign bucket (campaignIDs; tests make it fail).
	list func(context.Context, jetstream.KeyValue) ([]string, error)
}

// freeze freezes the process (tests; see frozen), leaving its lease as a
// killed process would.
func (s *StoreServer) freeze() {
	s.mu.Lock()
	s.abandon = true
	s.mu.Unlock()
	if !s.frozen.Swap(true) {
		close(s.frozenC)
	}
}

// isFrozen reports frozen (tests).
func (s *StoreServer) isFrozen() bool { return s.frozen.Load() }

// NewStore returns a store process on nc.
func NewStore(nc *nats.Conn, opt StoreOptions) (*StoreServer, error) {
	if opt.Part < 0 || opt.Part >= coverage.DefaultShards {
		return nil, fmt.Errorf("store part %d: want 0 to %d", opt.Part, coverage.DefaultShards-1)
	}
	if opt.Program == "" {
		opt.Program = corpus.ProgramVersion()
	}
	if opt.Poll <= 0 {
		opt.Poll = time.Second
	}
	if opt.MaxHeld <= 0 {
		opt.MaxHeld = 1 << 30
	}
	if opt.Lease <= 0 {
		opt.Lease = DefaultLease
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	return &StoreServer{nc: nc, js: js, opt: opt, log: opt.Logger.With("part", opt.Part), holder: holderName(opt.Lease),
		stats: StoreStats{Rejected: map[string]int{}, Refused: map[string]string{}}, refused: map[string]uint64{}, frozenC: make(chan struct{}),
		list: func(ctx context.Context, kv jetstream.KeyValue) ([]string, error) {
			return campaignIDs(ctx, kv, listWait)
		}}, nil
}

// partCap is the memory cap of a part whose coordinator was given the
// budget given (partRequest.Memory): this process's own
// (StoreOptions.Memory) or, without one, the store's share of the budget,
// as the coordinator caps its index; 0: none.
func (s *StoreServer) partCap(given int64) int64 {
	if s.opt.Memory > 0 {
		return s.opt.Memory
	}
	return max(given, 0) / 10 * act.StoreShare
}

// Stats returns the counts so far.
func (s *StoreServer) Stats() StoreStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Rejected, st.Refused = maps.Clone(st.Rejected), maps.Clone(st.Refused)
	return st
}

func (s *StoreServer) count(f func(*StoreStats)) {
	s.mu.Lock()
	f(&s.stats)
	s.mu.Unlock()
}

// Serve serves the campaigns of the KV bucket that have store parts (and
// more than Part) until ctx ends: each until its header leaves the bucket.
func (s *StoreServer) Serve(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	serving := map[string]context.CancelFunc{}
	done := make(chan string)
	for ctx.Err() == nil {
		live := map[string]bool{}
		// listed: live holds every campaign of the bucket (or there is
		// no bucket), so a part served and not in it has ended. A
		// listing that failed says nothing about that.
		listed := false
		if kv, err := campaigns(ctx, s.js, false); err == nil {
			keys, err := s.list(ctx, kv)
			if err != nil && ctx.Err() == nil {
				s.log.Warn("looking for campaigns", "err", err)
			}
			listed = err == nil
			for _, id := range keys {
				if s.opt.Campaign != "" && id != s.opt.Campaign {
					continue
				}
				ent, err := kv.Get(ctx, id)
				if err != nil {
					continue
				}
				rec, err := decodeRecord(ent.Value())
				if err != nil || rec.Parts <= s.opt.Part {
					continue
				}
				live[id] = true
				if serving[id] != nil {
					continue
				}
				if why := s.check(id, rec); why != "" {
					s.refuse(id, ent.Revision(), why)
					continue
				}
				cctx, ccancel := context.WithCancel(ctx)
				serving[id] = ccancel
				s.log.Info("serving campaign", "campaign", id, "parts", rec.Parts)
				wg.Add(1)
				go func() {
					defer wg.Done()
					// One process serves a part at a time: the others
					// wait here as standbys.
					l, err := s.hold(cctx, id)
					if err != nil && cctx.Err() == nil {
						s.log.Error("store part not served", "campaign", id, "err", err)
					}
					if err == nil {
						if err := s.serveCampaign(l, id); err != nil && l.ctx.Err() == nil {
							s.log.Error("store part stopped", "campaign", id, "err", err)
						}
						s.mu.Lock()
						abandon := s.abandon
						s.mu.Unlock()
						l.release(abandon)
					}
					select {
					case done <- id:
					case <-ctx.Done():
					}
				}()
			}
		} else if errors.Is(err, jetstream.ErrBucketNotFound) {
			listed = true
		} else if ctx.Err() == nil {
			s.log.Warn("looking for campaigns", "err", err)
		}
		for id, stop := range serving {
			if listed && !live[id] {
				stop() // the campaign ended
			}
		}
		select {
		case id := <-done:
			if stop := serving[id]; stop != nil {
				stop()
			}
			delete(serving, id)
		case <-ctx.Done():
		case <-time.After(s.opt.Poll):
		}
	}
	return nil
}

// check says why the campaign is refused ("" if not).
func (s *StoreServer) check(id string, rec record) string {
	if rec.Proto != act.ProtocolVersion {
		return fmt.Sprintf("campaign %s speaks worker protocol %d; this store process %d", id, rec.Proto, act.ProtocolVersion)
	}
	if rec.Header.Program != s.opt.Program {
		return fmt.Sprintf("campaign %s was started by build %s; this store process is build %s", id, rec.Header.Program, s.opt.Program)
	}
	return ""
}

func (s *StoreServer) refuse(id string, rev uint64, why string) {
	s.mu.Lock()
	again := s.refused[id] == rev
	s.refused[id] = rev
	s.stats.Refused[id] = why
	s.mu.Unlock()
	if !again {
		s.log.Error("refusing campaign", "why", why)
		_ = s.nc.Publish(refusedSubject(id), []byte(why))
	}
}

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

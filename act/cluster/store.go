package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/coverage"
)

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

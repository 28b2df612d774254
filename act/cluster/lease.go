package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// LeasesBucket is the KV bucket of store part leases (package doc, "A
// standby store process"): key ID.J names the process that serves part J
// of campaign ID.
const LeasesBucket = "actfuzz-store-leases"

// DefaultLease is how long a part's holder may leave its lease unrenewed
// before a standby process takes the part over (StoreOptions.Lease).
const DefaultLease = 10 * time.Second

func leaseKey(id string, j int) string { return id + "." + strconv.Itoa(j) }

// leasesBucket opens (creating it if needed and create is set: the
// coordinator) the bucket of leases. Its history is one revision: a lease
// is a key's latest revision alone.
func leasesBucket(ctx context.Context, js jetstream.JetStream, create bool) (jetstream.KeyValue, error) {
	kv, err := js.KeyValue(ctx, LeasesBucket)
	if err == nil || !create || !errors.Is(err, jetstream.ErrBucketNotFound) {
		return kv, err
	}
	// A lease is rewritten every Lease/4; a killed holder's key, of an
	// ended campaign, goes after a day.
	return js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: LeasesBucket, History: 1, TTL: 24 * time.Hour,
		Storage: jetstream.FileStorage, Description: "actfuzz store processes' leases of their parts"})
}

// holderName names this process in its leases: host, pid and a random
// part, since processes of one host and pid (tests) must differ.
func holderName() string {
	host, _ := os.Hostname()
	var nonce [4]byte
	_, _ = rand.Read(nonce[:])
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(nonce[:]))
}

// casConflict reports whether err is a KV compare-and-set that lost: the
// key's revision was not the one given.
func casConflict(err error) bool {
	var api *jetstream.APIError
	return errors.Is(err, jetstream.ErrKeyExists) || (errors.As(err, &api) &&
		(api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant))
}

// lease is a store process's hold on one part of one campaign.
type lease struct {
	ctx  context.Context // ends when the lease is lost or released
	stop context.CancelFunc
	done chan struct{} // the renewing goroutine has ended
	s    *StoreServer
	kv   jetstream.KeyValue
	key  string
	rev  uint64 // the revision last written (valid once done is closed)
	lost bool   // the lease was lost, not released (valid once done is closed)
}

// hold waits until this process holds part s.opt.Part of campaign id and
// returns the lease, which it renews every Lease/4 until ctx ends or
// release. A process that finds the part held waits as a standby: it
// takes the part over once the key has not changed for Lease by its own
// clock (the holder died: kill -9, a lost machine), or at once when the
// holder deletes the key (it stopped). A holder that cannot renew for
// Lease/2 by its own clock, or finds the key taken, stops serving: only
// durations are compared, never clocks of two machines, so a standby
// cannot serve while the holder does as long as a renewal's round trip
// stays under Lease/2.
func (s *StoreServer) hold(ctx context.Context, id string) (*lease, error) {
	kv, err := leasesBucket(ctx, s.js, false)
	if err != nil {
		return nil, fmt.Errorf("the leases bucket: %w", err)
	}
	key, period := leaseKey(id, s.opt.Part), s.opt.Lease
	var seen uint64
	var seenAt time.Time
	for {
		if s.isFrozen() {
			// A frozen process (tests: a stopped or partitioned one)
			// takes no lease either: one that did would pull shares it
			// never merges, which come back only after the consumer's
			// AckWait (10 min).
			<-ctx.Done()
			return nil, ctx.Err()
		}
		rev, err := kv.Create(ctx, key, []byte(s.holder))
		if err == nil {
			return s.keep(ctx, kv, key, rev), nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if casConflict(err) {
			e, gerr := kv.Get(ctx, key)
			switch {
			case errors.Is(gerr, jetstream.ErrKeyNotFound) || errors.Is(gerr, jetstream.ErrKeyDeleted):
				// Deleted meanwhile: Create again at once.
				continue
			case gerr != nil:
				s.log.Warn("reading the part's lease", "campaign", id, "err", gerr)
			case e.Revision() != seen:
				if seen == 0 {
					s.log.Info("standby: another process serves this part; taking it over if it stops renewing its lease",
						"campaign", id, "holder", string(e.Value()), "lease", period)
				}
				seen, seenAt = e.Revision(), time.Now()
			case time.Since(seenAt) >= period:
				rev, err := kv.Update(ctx, key, []byte(s.holder), seen)
				if err == nil {
					s.log.Warn("taking the part over: its holder left its lease unrenewed",
						"campaign", id, "holder", string(e.Value()), "for", time.Since(seenAt).Round(time.Millisecond))
					s.count(func(st *StoreStats) { st.TakenOver++ })
					return s.keep(ctx, kv, key, rev), nil
				}
			}
		} else {
			s.log.Warn("taking the part's lease", "campaign", id, "err", err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(min(s.opt.Poll, period/4)):
		}
	}
}

// keep renews the lease of key, written at revision rev, until ctx ends,
// the lease is released or it is lost.
func (s *StoreServer) keep(ctx context.Context, kv jetstream.KeyValue, key string, rev uint64) *lease {
	lctx, stop := context.WithCancel(ctx)
	l := &lease{ctx: lctx, stop: stop, done: make(chan struct{}), s: s, kv: kv, key: key, rev: rev}
	go func() {
		defer close(l.done)
		period := s.opt.Lease
		renewed := time.Now()
		tick := time.NewTicker(period / 4)
		defer tick.Stop()
		for {
			select {
			case <-lctx.Done():
				return
			case <-tick.C:
			}
			if s.isFrozen() {
				continue
			}
			rctx, cancel := context.WithTimeout(lctx, period/4)
			rev, err := kv.Update(rctx, key, []byte(s.holder), l.rev)
			cancel()
			switch {
			case err == nil:
				l.rev, renewed = rev, time.Now()
				continue
			case lctx.Err() != nil:
				return
			case casConflict(err):
				s.log.Error("store part lease lost: another process took the part over", "key", key)
			case time.Since(renewed) >= period/2:
				s.log.Error("store part lease lost: not renewed in time", "key", key, "since", time.Since(renewed).Round(time.Millisecond), "err", err)
			default:
				s.log.Warn("renewing the store part's lease", "key", key, "err", err)
				continue
			}
			l.lost = true
			s.count(func(st *StoreStats) { st.LeasesLost++ })
			stop()
			return
		}
	}()
	return l
}

// release stops renewing the lease and, unless it was lost, deletes it, so
// that a standby takes the part over at once. abandon (tests) leaves the
// key as a killed process would.
func (l *lease) release(abandon bool) {
	l.stop()
	<-l.done
	if l.lost || abandon {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := l.kv.Delete(ctx, l.key, jetstream.LastRevision(l.rev))
	if casConflict(err) {
		// A renewal stopped in flight may have been written: the key is
		// still this process's if it names it.
		e, gerr := l.kv.Get(ctx, l.key)
		if gerr != nil || string(e.Value()) != l.s.holder {
			return
		}
		err = l.kv.Delete(ctx, l.key, jetstream.LastRevision(e.Revision()))
	}
	if err != nil {
		l.s.log.Warn("deleting the part's lease: a standby takes the part over only after its lease period", "key", l.key, "err", err)
	}
}

// watchLeases follows the leases of the campaign's parts (the coordinator),
// so that a request in flight to a holder a standby replaced is asked of
// the new holder at once (callPart), not after its timeout of up to 30 s.
// That wait is what a holder that stopped answering without closing its
// connection would cost otherwise: a stopped (SIGSTOP) or partitioned
// process, whose subscription the server keeps until its pings fail, or a
// process killed with a request in flight. A new holder subscribes to the
// requests only after it has taken the lease, so a request sent between
// the two reaches the old holder alone: the coordinator asks again at the
// new holder's first renewal too, by which it is subscribed.
func (e *Executor) watchLeases(w jetstream.KeyWatcher) {
	defer e.wg.Done()
	defer func() { _ = w.Stop() }()
	holders, seen, renewed := make([]string, e.opt.Parts), make([]bool, e.opt.Parts), make([]bool, e.opt.Parts)
	signal := func(j int, change bool) {
		e.mu.Lock()
		close(e.holderChanged[j])
		e.holderChanged[j] = make(chan struct{})
		if change {
			e.stats.HolderChanges++
		}
		e.mu.Unlock()
	}
	for {
		var en jetstream.KeyValueEntry
		var ok bool
		select {
		case <-e.ctx.Done():
			return
		case en, ok = <-w.Updates():
			if !ok {
				return
			}
		}
		if en == nil {
			continue // the leases held when the watch began are in
		}
		rest, ok := strings.CutPrefix(en.Key(), e.opt.ID+".")
		j, err := strconv.Atoi(rest)
		if !ok || err != nil || j < 0 || j >= e.opt.Parts {
			continue
		}
		holder := ""
		if en.Operation() == jetstream.KeyValuePut {
			holder = string(en.Value())
		}
		switch {
		case !seen[j]:
			renewed[j] = true
		case holder != holders[j]:
			e.log.Info("store part changed hands", "part", j, "from", holders[j], "to", holder)
			signal(j, true)
			renewed[j] = false
		case !renewed[j]:
			signal(j, false) // the new holder's first renewal
			renewed[j] = true
		}
		holders[j], seen[j] = holder, true
	}
}

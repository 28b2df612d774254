package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"syscall"
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

// holderName names this process in its leases: host, pid, a random part
// (processes of one host and pid, in tests, must differ) and its lease
// period. A process waiting for the key waits the holder's period when it
// is the longer (heldPeriod): a standby or a coordinator started with a
// shorter lease would otherwise take over a live holder's key between
// two of its renewals.
func holderName(period time.Duration) string {
	host, _ := os.Hostname()
	var nonce [4]byte
	_, _ = rand.Read(nonce[:])
	return fmt.Sprintf("%s/%d/%s/%s", host, os.Getpid(), hex.EncodeToString(nonce[:]), period)
}

// maxHeldPeriod bounds the period a waiting process takes from a holder's
// name, so that a garbled name cannot make it wait for ever.
const maxHeldPeriod = time.Hour

// heldPeriod is the lease period a holder's name gives (0: none, as in
// the names of builds before it was written).
func heldPeriod(holder string) time.Duration {
	f := strings.Split(holder, "/")
	if len(f) != 4 {
		return 0
	}
	d, err := time.ParseDuration(f[3])
	if err != nil || d <= 0 {
		return 0
	}
	return min(d, maxHeldPeriod)
}

// casConflict reports whether err is a KV compare-and-set that lost: the
// key's revision was not the one given.
func casConflict(err error) bool {
	var api *jetstream.APIError
	return errors.Is(err, jetstream.ErrKeyExists) || (errors.As(err, &api) &&
		(api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || api.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant))
}

// leaseSpec is what a lease holds and how it is kept: a key of the
// leases bucket, written with this process's name and rewritten every
// period/4 while it is held.
type leaseSpec struct {
	kv     jetstream.KeyValue
	key    string
	holder string        // this process's name (holderName)
	period time.Duration // how long the key may stay unrenewed before another takes it
	poll   time.Duration // how often a process waiting for the key looks (at most period/4)
	what   string        // what is held, for the log: "store part", "campaign"
	log    *slog.Logger
	frozen func() bool // tests: a frozen process neither takes nor renews (nil: never)
	// takeGone takes a key held by a process of this host that is gone
	// over at once, without waiting for period (holderGone).
	takeGone bool
	// tookOver and lost count (nil: nothing to count).
	tookOver, lost func()
}

// lease is a process's hold on a key of the leases bucket: a store
// process's on one part of one campaign, a coordinator's on its campaign.
type lease struct {
	ctx  context.Context // ends when the lease is lost or released
	stop context.CancelFunc
	done chan struct{} // the renewing goroutine has ended
	sp   *leaseSpec
	rev  uint64 // the revision last written (valid once done is closed)
	lost bool   // the lease was lost, not released (valid once done is closed)
}

// LeaseHeldError is the error of a process that found the lease it needs
// held by a process that renews it: a second coordinator of one campaign.
type LeaseHeldError struct {
	Key    string
	Holder string // the holder's name: host/pid/nonce
}

func (e *LeaseHeldError) Error() string {
	return fmt.Sprintf("lease %s is held by %s, which renews it", e.Key, e.Holder)
}

// takeLease waits until this process holds sp.key and returns the lease,
// renewed every period/4 until life ends or release. A key found held is
// taken over once it has not changed for period by this process's clock
// (its holder died: kill -9, a lost machine), or at once when its holder
// deletes it (it stopped), or at once when sp.takeGone and its holder was
// a process of this host that is gone (a coordinator killed and started
// again). A standby waits however long the holder renews; otherwise the
// first renewal seen ends the wait with a *LeaseHeldError. A holder that
// has not renewed for 3/4 of its period, counted from the sending of its
// last renewal, or finds the key taken, loses the lease (keepLease): only
// durations are compared, never clocks of two machines, so two processes
// never hold the key at once. ctx bounds the wait.
func takeLease(ctx, life context.Context, sp *leaseSpec, standby bool) (*lease, error) {
	var seen uint64
	var seenAt time.Time
	frozen := func() bool { return sp.frozen != nil && sp.frozen() }
	takeOver := func(rev uint64, holder, why string) (*lease, bool) {
		sent := time.Now()
		nrev, err := sp.kv.Update(ctx, sp.key, []byte(sp.holder), rev)
		if err != nil {
			return nil, false
		}
		sp.log.Warn("taking the "+sp.what+" over: "+why, "key", sp.key, "holder", holder)
		if sp.tookOver != nil {
			sp.tookOver()
		}
		return keepLease(life, sp, nrev, sent), true
	}
	for {
		if frozen() {
			// A frozen process (tests: a stopped or partitioned one)
			// takes no lease either: a store process that did would
			// pull shares it never merges, which come back only after
			// the consumer's AckWait (10 min).
			<-ctx.Done()
			return nil, ctx.Err()
		}
		sent := time.Now()
		rev, err := sp.kv.Create(ctx, sp.key, []byte(sp.holder))
		if err == nil {
			return keepLease(life, sp, rev, sent), nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if casConflict(err) {
			e, gerr := sp.kv.Get(ctx, sp.key)
			switch {
			case errors.Is(gerr, jetstream.ErrKeyNotFound) || errors.Is(gerr, jetstream.ErrKeyDeleted):
				// Deleted meanwhile: Create again at once.
				continue
			case gerr != nil:
				sp.log.Warn("reading the "+sp.what+"'s lease", "key", sp.key, "err", gerr)
			case e.Revision() != seen:
				if seen != 0 && !standby {
					return nil, &LeaseHeldError{Key: sp.key, Holder: string(e.Value())}
				}
				if seen == 0 && sp.takeGone && holderGone(string(e.Value())) {
					if l, ok := takeOver(e.Revision(), string(e.Value()), "its holder, a process of this host, is gone"); ok {
						return l, nil
					}
				}
				if seen == 0 {
					sp.log.Info("another process holds the "+sp.what+"; taking it over if it stops renewing its lease",
						"key", sp.key, "holder", string(e.Value()), "lease", max(sp.period, heldPeriod(string(e.Value()))))
				}
				seen, seenAt = e.Revision(), time.Now()
			case time.Since(seenAt) >= max(sp.period, heldPeriod(string(e.Value()))):
				if l, ok := takeOver(seen, string(e.Value()), "its holder left its lease unrenewed for "+time.Since(seenAt).Round(time.Millisecond).String()); ok {
					return l, nil
				}
			}
		} else {
			sp.log.Warn("taking the "+sp.what+"'s lease", "key", sp.key, "err", err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(min(sp.poll, sp.period/4)):
		}
	}
}

// holderGone reports whether holder (holderName's host/pid/nonce/period,
// or an earlier build's host/pid/nonce) names a process of this host that
// no longer exists. Any doubt is "not gone".
func holderGone(holder string) bool {
	f := strings.Split(holder, "/")
	if len(f) != 3 && len(f) != 4 {
		return false
	}
	host, _ := os.Hostname()
	pid, err := strconv.Atoi(f[1])
	if f[0] != host || err != nil || pid <= 0 || pid == os.Getpid() {
		return false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	return errors.Is(p.Signal(syscall.Signal(0)), os.ErrProcessDone)
}

// keepLease renews the lease of sp.key, written at revision rev by a
// request sent at sent, until life ends, the lease is released or it is
// lost.
//
// The holder stops (the lease is lost) once 3/4 of its period have passed
// since it sent its last renewal that succeeded. A process waiting for the
// key takes it over only after it has seen that renewal unchanged for the
// whole period, and it cannot see it before it was sent: so the holder has
// stopped at least period/4 before, with no clocks of two machines
// compared. Within that time a failed renewal is tried again every
// period/16, not at the next tick: a nats-server restarted after a kill -9
// is back within a few seconds, and a holder that waited for its next tick
// and gave up at period/2, as it did before, lost its lease to one such
// restart (a coordinator exited 3 in bench/cluster-chaos.sh's SEED=6 run).
func keepLease(life context.Context, sp *leaseSpec, rev uint64, sent time.Time) *lease {
	lctx, stop := context.WithCancel(life)
	l := &lease{ctx: lctx, stop: stop, done: make(chan struct{}), sp: sp, rev: rev}
	go func() {
		defer close(l.done)
		period := sp.period
		deadline := sent.Add(period * 3 / 4)
		wait := period / 4
		thawed := false
		var lastErr error // of the last renewal that failed
		for {
			select {
			case <-lctx.Done():
				return
			case <-time.After(wait):
			}
			if sp.frozen != nil && sp.frozen() {
				// A frozen process (tests: a stopped one, all of whose
				// goroutines stop) renews nothing; once thawed, its next
				// renewal says whether the lease is still its own, as
				// for a process continued after SIGSTOP.
				wait, thawed = period/4, true
				continue
			}
			sent := time.Now()
			if thawed && !sent.Before(deadline) {
				deadline = sent.Add(period / 4)
			}
			thawed = false
			if sent.Before(deadline) {
				// An attempt lasts period/8 at most: a request sent
				// while the server went away may never be answered.
				rctx, cancel := context.WithDeadline(lctx, minTime(deadline, sent.Add(period/8)))
				nrev, err := sp.kv.Update(rctx, sp.key, []byte(sp.holder), l.rev)
				cancel()
				switch {
				case err == nil:
					l.rev, deadline, wait = nrev, sent.Add(period*3/4), period/4
					continue
				case lctx.Err() != nil:
					return
				case casConflict(err):
					// A renewal whose answer was lost (a server restarted
					// between writing it and answering) wrote the key:
					// it is still this process's if it names it.
					r, mine, gerr := l.ownRevision(lctx)
					switch {
					case lctx.Err() != nil:
						return
					case mine:
						// Renewed with it at once; the deadline stays,
						// since which send wrote it is not known.
						l.rev, wait = r, 0
						continue
					case gerr == nil:
						sp.log.Error(sp.what+" lease lost: another process took it over", "key", sp.key)
						l.lose()
						return
					}
					err = gerr // unread: tried again, as a failed renewal
				}
				lastErr = err
				if time.Now().Before(deadline) {
					sp.log.Warn("renewing the "+sp.what+"'s lease", "key", sp.key, "err", err)
					wait = period / 16
					continue
				}
			}
			sp.log.Error(sp.what+" lease lost: not renewed in time", "key", sp.key, "lease", period, "err", lastErr)
			l.lose()
			return
		}
	}()
	return l
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// ownRevision reads the lease's key: its revision, and whether this
// process's name is in it. A key deleted or gone is not this process's;
// err is a failure to read it.
func (l *lease) ownRevision(ctx context.Context) (rev uint64, mine bool, err error) {
	gctx, cancel := context.WithTimeout(ctx, l.sp.period/8)
	defer cancel()
	e, err := l.sp.kv.Get(gctx, l.sp.key)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted):
		return 0, false, nil
	case err != nil:
		return 0, false, err
	}
	return e.Revision(), string(e.Value()) == l.sp.holder, nil
}

// lose marks the lease lost and ends it.
func (l *lease) lose() {
	l.lost = true
	if l.sp.lost != nil {
		l.sp.lost()
	}
	l.stop()
}

// release stops renewing the lease and, unless it was lost, deletes it, so
// that a standby takes over at once. abandon (tests) leaves the key as a
// killed process would.
func (l *lease) release(abandon bool) {
	l.stop()
	<-l.done
	if l.lost || abandon {
		return
	}
	sp := l.sp
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := sp.kv.Delete(ctx, sp.key, jetstream.LastRevision(l.rev))
	if casConflict(err) {
		// A renewal stopped in flight may have been written: the key is
		// still this process's if it names it.
		e, gerr := sp.kv.Get(ctx, sp.key)
		if gerr != nil || string(e.Value()) != sp.holder {
			return
		}
		err = sp.kv.Delete(ctx, sp.key, jetstream.LastRevision(e.Revision()))
	}
	if err != nil {
		sp.log.Warn("deleting the "+sp.what+"'s lease: another process takes over only after its lease period", "key", sp.key, "err", err)
	}
}

// hold waits until this process holds part s.opt.Part of campaign id, as
// a standby while another process holds it (takeLease).
func (s *StoreServer) hold(ctx context.Context, id string) (*lease, error) {
	kv, err := leasesBucket(ctx, s.js, false)
	if err != nil {
		return nil, fmt.Errorf("the leases bucket: %w", err)
	}
	sp := &leaseSpec{kv: kv, key: leaseKey(id, s.opt.Part), holder: s.holder, period: s.opt.Lease, poll: s.opt.Poll,
		what: "store part", log: s.log.With("campaign", id), frozen: s.isFrozen,
		tookOver: func() { s.count(func(st *StoreStats) { st.TakenOver++ }) },
		lost:     func() { s.count(func(st *StoreStats) { st.LeasesLost++ }) }}
	return takeLease(ctx, ctx, sp, true)
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

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
	"sync"
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
	// clock is the lease clock (nil: leaseClock; tests move it on, as a
	// suspended machine's).
	clock func() time.Duration
	// takeGone takes a key held by a process of this host that is gone
	// over at once, without waiting for period (holderGone).
	takeGone bool
	// tookOver and lost count (nil: nothing to count).
	tookOver, lost func()
}

func (sp *leaseSpec) now() time.Duration {
	if sp.clock != nil {
		return sp.clock()
	}
	return leaseClock()
}

// lease is a process's hold on a key of the leases bucket: a store
// process's on one part of one campaign, a coordinator's on its campaign.
// Its holder acts on what the lease guards only once await says the
// lease is fresh (leasestate.go).
type lease struct {
	ctx  context.Context // ends when the lease is lost or released
	stop context.CancelFunc
	done chan struct{} // the renewing goroutine has ended
	sp   *leaseSpec

	mu      sync.Mutex
	h       holding       // the decisions (leasestate.go)
	changed chan struct{} // closed and made again when h changes
	poke    chan struct{} // a process about to act found the lease stale: renew now
}

// errLeaseLost is await's answer once another process took the key.
var errLeaseLost = errors.New("lease lost: another process took it over")

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
// taken over (a compare-and-set on the revision seen) once it has not
// changed for period by this process's clock (its holder died: kill -9,
// a lost machine; or it is stopped, and will find the key taken before
// it acts), or at once when its holder deletes it (it stopped), or at
// once when sp.takeGone and its holder was a process of this host that
// is gone (a coordinator killed and started again). A standby waits
// however long the holder renews; otherwise the first renewal seen ends
// the wait with a *LeaseHeldError (waiting.observe). ctx bounds the wait.
func takeLease(ctx, life context.Context, sp *leaseSpec, standby bool) (*lease, error) {
	w := waiting{period: sp.period, standby: standby}
	for {
		if sp.frozen != nil && sp.frozen() {
			// A frozen process (tests: a stopped or partitioned one)
			// takes no lease either: a store process that did would
			// pull shares it never merges, which come back only after
			// the consumer's AckWait (10 min).
			<-ctx.Done()
			return nil, ctx.Err()
		}
		sent := sp.now()
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
				continue // deleted meanwhile: Create again at once
			case gerr != nil:
				sp.log.Warn("reading the "+sp.what+"'s lease", "key", sp.key, "err", gerr)
			default:
				holder := string(e.Value())
				v, first, why := w.observe(sp.now(), e.Revision(), holder, func() bool { return sp.takeGone && holderGone(holder) })
				switch v {
				case heldByOther:
					return nil, &LeaseHeldError{Key: sp.key, Holder: holder}
				case takeIt:
					sent := sp.now()
					if nrev, err := sp.kv.Update(ctx, sp.key, []byte(sp.holder), e.Revision()); err == nil {
						sp.log.Warn("taking the "+sp.what+" over: "+why, "key", sp.key, "holder", holder)
						if sp.tookOver != nil {
							sp.tookOver()
						}
						return keepLease(life, sp, nrev, sent), nil
					}
				}
				if first {
					sp.log.Info("another process holds the "+sp.what+"; taking it over if it stops renewing its lease",
						"key", sp.key, "holder", holder, "lease", w.patience())
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
// request sent at sent (lease clock), until life ends, the lease is
// released or it is lost (renew).
func keepLease(life context.Context, sp *leaseSpec, rev uint64, sent time.Duration) *lease {
	lctx, stop := context.WithCancel(life)
	l := &lease{ctx: lctx, stop: stop, done: make(chan struct{}), sp: sp, h: newHolding(sp.period, rev, sent),
		changed: make(chan struct{}), poke: make(chan struct{}, 1)}
	go l.renew()
	return l
}

// staleLogEvery spaces the lines of a lease that stays stale (a server
// away for long): its renewals are tried every period/16.
const staleLogEvery = time.Minute

// renew renews the lease every period/4, a failed renewal again every
// period/16 (holding.failed), and at once when a process about to act
// found it stale (await), each with a compare-and-set on the revision
// this process last wrote. The lease is lost only when the key is found
// another's; a renewal that fails, however long, leaves it stale, and
// the holder acts on nothing meanwhile (package doc, "A standby store
// process"; leasestate.go).
func (l *lease) renew() {
	defer close(l.done)
	sp := l.sp
	wait := sp.period / 4
	var nextStaleLog time.Duration // lease clock: when a stale lease's failure is logged again
	for {
		timer := time.NewTimer(wait)
		select {
		case <-l.ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		case <-l.poke:
			timer.Stop()
		}
		if sp.frozen != nil && sp.frozen() {
			// A frozen process (tests: a stopped one, all of whose
			// goroutines stop) renews nothing; once thawed, its next
			// renewal says whether the lease is still its own, as for
			// a process continued after SIGSTOP.
			wait = sp.period / 4
			continue
		}
		l.mu.Lock()
		rev, timeout := l.h.rev, l.h.attemptTimeout()
		l.mu.Unlock()
		sent := sp.now()
		rctx, cancel := context.WithTimeout(l.ctx, timeout)
		nrev, err := sp.kv.Update(rctx, sp.key, []byte(sp.holder), rev)
		cancel()
		switch {
		case err == nil:
			var lapsed time.Duration
			l.update(func(h *holding) { wait, lapsed = h.renewed(sent, nrev) })
			if lapsed > 0 {
				sp.log.Warn(sp.what+" lease renewed after it had gone unrenewed for longer than 3/4 of its period: nobody took it meanwhile, carrying on",
					"key", sp.key, "unrenewed", lapsed.Round(time.Millisecond), "lease", sp.period)
			}
			nextStaleLog = 0
			continue
		case l.ctx.Err() != nil:
			return
		case casConflict(err):
			// A renewal whose answer was lost (a server restarted
			// between writing it and answering) wrote the key: it is
			// still this process's if it names it.
			r, mine, gerr := l.ownRevision(l.ctx)
			switch {
			case l.ctx.Err() != nil:
				return
			case mine:
				l.update(func(h *holding) { wait = h.foundMine(r) })
				continue
			case gerr == nil:
				sp.log.Error(sp.what+" lease lost: another process took it over", "key", sp.key)
				l.update((*holding).foundOther)
				l.lose()
				return
			}
			err = gerr // unread: tried again, as a failed renewal
		}
		now := sp.now()
		var nowStale, fresh bool
		l.update(func(h *holding) { wait, nowStale = h.failed(now); fresh = h.fresh(now) })
		switch {
		case nowStale:
			sp.log.Warn(sp.what+" lease not renewed for 3/4 of its period: this process acts on nothing until it renews it (nobody took it) or finds it taken",
				"key", sp.key, "lease", sp.period, "err", err)
			nextStaleLog = now + staleLogEvery
		case fresh:
			sp.log.Warn("renewing the "+sp.what+"'s lease", "key", sp.key, "err", err)
		case now >= nextStaleLog:
			sp.log.Warn(sp.what+" lease still not renewed: trying again", "key", sp.key, "lease", sp.period, "err", err)
			nextStaleLog = now + staleLogEvery
		}
	}
}

// update changes the lease's state under its lock and wakes the
// processes waiting for it (await).
func (l *lease) update(f func(*holding)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f(&l.h)
	close(l.changed)
	l.changed = make(chan struct{})
}

// await returns nil once this process may act on what the lease guards:
// the lease is fresh (holding.fresh). A stale one (its holder was
// starved of CPU, stopped, suspended, or cut off from the server) is
// renewed at once, and await waits for the answer: nil if nobody took
// the key meanwhile, errLeaseLost if another did. It also ends with ctx,
// or with the lease released (its context's error).
func (l *lease) await(ctx context.Context) error {
	for {
		l.mu.Lock()
		now := l.sp.now()
		fresh, lost, news, changed := l.h.fresh(now), l.h.lost, l.h.checked(now), l.changed
		l.mu.Unlock()
		switch {
		case lost:
			return errLeaseLost
		case fresh:
			return nil
		case news:
			l.sp.log.Warn(l.sp.what+" lease found stale by this process before it acted (starved of CPU, stopped or suspended?): renewing it first",
				"key", l.sp.key, "lease", l.sp.period)
		}
		select {
		case l.poke <- struct{}{}:
		default:
		}
		select {
		case <-changed:
		case <-l.ctx.Done():
			if l.isLost() {
				return errLeaseLost
			}
			return l.ctx.Err()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// isLost reports whether the key was found another's.
func (l *lease) isLost() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.h.lost
}

// confirm reports, once the renewing goroutine has stopped (a closing
// coordinator about to remove its campaign's header and streams),
// whether the lease is still this process's and fresh: a stale one is
// renewed once, within ctx.
func (l *lease) confirm(ctx context.Context) bool {
	<-l.done
	for range 2 {
		l.mu.Lock()
		fresh, lost, rev := l.h.fresh(l.sp.now()), l.h.lost, l.h.rev
		l.mu.Unlock()
		switch {
		case lost:
			return false
		case fresh:
			return true
		}
		sent := l.sp.now()
		nrev, err := l.sp.kv.Update(ctx, l.sp.key, []byte(l.sp.holder), rev)
		if err == nil {
			l.update(func(h *holding) { h.renewed(sent, nrev) })
			continue
		}
		if !casConflict(err) {
			return false // unknown: the campaign's state is left as it is
		}
		r, mine, gerr := l.ownRevision(ctx)
		switch {
		case gerr != nil:
			return false
		case mine:
			l.update(func(h *holding) { h.foundMine(r) })
		default:
			l.update((*holding).foundOther)
			return false
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.h.fresh(l.sp.now())
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

// lose ends a lease found another's.
func (l *lease) lose() {
	if l.sp.lost != nil {
		l.sp.lost()
	}
	l.stop()
}

// release stops renewing the lease and, unless it was lost, deletes it, so
// that a standby takes over at once. abandon (tests) leaves the key as a
// killed process would. The delete is a compare-and-set on the revision
// this process last wrote: a stale lease that another took is not
// deleted.
func (l *lease) release(abandon bool) {
	l.stop()
	<-l.done
	if l.isLost() || abandon {
		return
	}
	sp := l.sp
	l.mu.Lock()
	rev := l.h.rev
	l.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := sp.kv.Delete(ctx, sp.key, jetstream.LastRevision(rev))
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

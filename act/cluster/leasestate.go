package cluster

import "time"

// The decisions of a lease (lease.go), as two state machines with no
// network and no clock of their own: every time they see is given to
// them, read from the lease clock (leaseclock_*.go) by their drivers,
// takeLease and keepLease. Tests drive them through any schedule of
// renewals, failures, stops and takeovers without sleeping
// (leasestate_test.go).
//
// The property they keep: two processes never act on one key's behalf
// at once. A holder acts only while its lease is fresh: less than 3/4
// of its period has passed since it sent the request that last wrote the
// key (a write it knows of). A process waiting for the key takes it over
// only once it has seen one revision unchanged for a whole period, and
// with a compare-and-set on that revision: so the holder stopped acting
// at least period/4 before, whether it died, was stopped (SIGSTOP),
// starved of CPU, suspended with its machine, or cut off from the server.
// Durations are measured by each process on its own clock, never two
// machines' clocks compared.
//
// A holder whose lease went stale is not a holder that lost it: it acts
// on nothing, and renews with a compare-and-set on the revision it last
// wrote. If that succeeds nobody took the key meanwhile (a taker must
// write a new revision), and it is fresh again from that request's
// sending: a coordinator starved of CPU for longer than its lease, or a
// server restart that outlasted it, no longer costs the campaign. If
// the key holds another's name the lease is lost, for good. Before this,
// a holder gave the lease up once it went stale: a coordinator exited 3
// when a loaded machine delayed its renewals for a few seconds, or a
// nats-server took 6–7 s to come back (issue 47).

// holding is what a holder knows of its lease.
type holding struct {
	period time.Duration
	rev    uint64        // the revision this process last wrote: the base of its next compare-and-set
	ok     time.Duration // when the request that last renewed the lease was sent (lease clock)
	lost   bool          // the key was found another's: final
	stale  bool          // found not fresh, and not renewed since (logged once)
}

// newHolding is the lease of a process whose request sent at sent wrote
// revision rev (its create, or its compare-and-set on a lapsed holder's).
func newHolding(period time.Duration, rev uint64, sent time.Duration) holding {
	return holding{period: period, rev: rev, ok: sent}
}

// deadline is when the lease stops being fresh.
func (h *holding) deadline() time.Duration { return h.ok + h.period*3/4 }

// fresh reports whether the holder may act at now.
func (h *holding) fresh(now time.Duration) bool { return !h.lost && now < h.deadline() }

// attemptTimeout bounds one renewal request: a request sent as the
// server went away may never be answered.
func (h *holding) attemptTimeout() time.Duration { return h.period / 8 }

// renewed records that a renewal sent at sent wrote revision rev. It
// returns the wait before the next renewal, and, if the lease was stale
// when that renewal was sent, for how long it had gone unrenewed (else
// 0): nobody took the key in that time, since the compare-and-set on the
// revision this process last wrote succeeded.
func (h *holding) renewed(sent time.Duration, rev uint64) (wait, lapsed time.Duration) {
	if sent >= h.deadline() {
		lapsed = sent - h.ok
	}
	h.rev, h.ok, h.stale = rev, max(h.ok, sent), false
	return h.period / 4, lapsed
}

// foundMine records that a renewal's compare-and-set failed and the key,
// read, names this process at revision rev: a renewal of its own whose
// answer was lost (a server restarted between writing it and answering)
// wrote it. The deadline stays, since which request wrote it is not
// known; the next renewal, at once, is on rev.
func (h *holding) foundMine(rev uint64) (wait time.Duration) {
	h.rev = rev
	return 0
}

// foundOther records that the key, read after a failed compare-and-set,
// is another process's, or gone (another took it over, and may have
// released it since): the lease is lost.
func (h *holding) foundOther() { h.lost = true }

// failed records that a renewal failed at now (the server away, an
// answer that did not come, the key unread). It returns the wait before
// the next try (period/16: a nats-server restarted after a kill -9 is
// back within seconds, and a stale lease is renewed as soon as it can
// be) and whether the lease has just been found stale.
func (h *holding) failed(now time.Duration) (wait time.Duration, nowStale bool) {
	if !h.fresh(now) && !h.stale {
		h.stale, nowStale = true, true
	}
	return h.period / 16, nowStale
}

// checked records that the lease was found stale at now by a process
// about to act (lease.await), and reports whether that is news (for the
// log).
func (h *holding) checked(now time.Duration) (nowStale bool) {
	if !h.fresh(now) && !h.lost && !h.stale {
		h.stale = true
		return true
	}
	return false
}

// verdict is what a process waiting for a key does after a look at it.
type verdict int

const (
	keepWaiting verdict = iota
	takeIt              // a compare-and-set on the revision seen
	heldByOther         // a holder renews it and this process is no standby: give up
)

// waiting is what a process waiting for a key knows of it.
type waiting struct {
	period  time.Duration // this process's lease period
	standby bool          // wait however long the holder renews (a store process)
	seen    uint64        // the revision last seen (0: none yet)
	seenAt  time.Duration // when it was first seen (lease clock)
	holder  string        // its value: the holder's name
}

// observe decides on the key found at revision rev with value holder at
// now. gone, asked at the first look only, says whether that holder is a
// process of this host that no longer exists (holderGone), to be taken
// over at once (a coordinator resumed after a kill -9: the key is the
// dead one's as last renewed). first reports the first look at a holder
// (for the log); why says why the key is taken.
func (w *waiting) observe(now time.Duration, rev uint64, holder string, gone func() bool) (v verdict, first bool, why string) {
	if rev != w.seen {
		if w.seen != 0 && !w.standby {
			return heldByOther, false, ""
		}
		first = w.seen == 0
		w.seen, w.seenAt, w.holder = rev, now, holder
		if first && gone() {
			return takeIt, true, "its holder, a process of this host, is gone"
		}
		return keepWaiting, first, ""
	}
	if d := now - w.seenAt; d >= w.patience() {
		return takeIt, false, "its holder left its lease unrenewed for " + d.Round(time.Millisecond).String()
	}
	return keepWaiting, false, ""
}

// patience is how long a revision must stay unchanged before it is taken
// over: the longer of this process's period and the holder's (its name
// ends with it), so that a process started with a shorter lease does
// not take a live holder's key between two of its renewals.
func (w *waiting) patience() time.Duration { return max(w.period, heldPeriod(w.holder)) }

package cluster

import (
	"math/rand/v2"
	"testing"
	"time"
)

// The lease's decisions (leasestate.go) without a network or a clock:
// every time is given.

const testPeriod = 10 * time.Second

// A holder starved of CPU (or stopped, or suspended) for longer than its
// lease is stale when it wakes: it may not act. Its renewal, a
// compare-and-set on the revision it last wrote, succeeds since nobody
// took the key: it is fresh again from that renewal's sending, and says
// how long the lease went unrenewed.
func TestHoldingStarvedThenRenewed(t *testing.T) {
	h := newHolding(testPeriod, 5, 100*time.Second)
	if !h.fresh(100*time.Second) || !h.fresh(107*time.Second) || h.fresh(107500*time.Millisecond) {
		t.Fatalf("fresh until 3/4 of the period after the sending (deadline %v)", h.deadline())
	}
	// Renewed on time: fresh from the renewal's sending.
	if wait, lapsed := h.renewed(102500*time.Millisecond, 6); wait != testPeriod/4 || lapsed != 0 {
		t.Fatalf("renewed on time: wait %v, lapsed %v", wait, lapsed)
	}
	if h.deadline() != 110*time.Second {
		t.Fatalf("deadline %v after a renewal sent at 102.5 s", h.deadline())
	}
	// Starved for 30 s: a process that wakes finds it stale, once.
	if h.fresh(133*time.Second) || !h.checked(133*time.Second) || h.checked(133100*time.Millisecond) {
		t.Fatal("a woken holder's stale lease: not fresh, and found stale once")
	}
	// Its renewal, sent after the deadline, succeeds: nobody took it.
	wait, lapsed := h.renewed(133200*time.Millisecond, 7)
	if lapsed != 30700*time.Millisecond || wait != testPeriod/4 || h.rev != 7 {
		t.Fatalf("renewed after the starvation: lapsed %v, wait %v, rev %d", lapsed, wait, h.rev)
	}
	if !h.fresh(134*time.Second) || h.lost || h.stale {
		t.Fatalf("after a renewal that nobody prevented: %+v", h)
	}
	// An answer that comes late (its request sent before the last one
	// answered) does not move the deadline back.
	h.renewed(120*time.Second, 8)
	if h.deadline() != 133200*time.Millisecond+testPeriod*3/4 {
		t.Fatalf("a late answer moved the deadline to %v", h.deadline())
	}
}

// A server away for three periods (its restart, kill -9 and all): every
// renewal fails, the lease goes stale and the holder acts on nothing,
// retrying every period/16; once the server is back, the renewal on the
// revision it last wrote succeeds and it carries on. It never loses the
// lease to an outage.
func TestHoldingServerAway(t *testing.T) {
	h := newHolding(testPeriod, 1, 0)
	now, stales := time.Duration(0), 0
	for now = testPeriod / 4; now < 3*testPeriod; now += testPeriod / 16 {
		wait, nowStale := h.failed(now)
		if wait != testPeriod/16 {
			t.Fatalf("wait %v after a failure", wait)
		}
		if nowStale {
			stales++
			if now < h.deadline() {
				t.Fatalf("found stale at %v, before its deadline %v", now, h.deadline())
			}
		}
		if h.fresh(now) != (now < testPeriod*3/4) || h.lost {
			t.Fatalf("at %v: fresh %v, lost %v", now, h.fresh(now), h.lost)
		}
	}
	if stales != 1 {
		t.Fatalf("found stale %d times, want once (for the log)", stales)
	}
	if _, lapsed := h.renewed(now, 2); lapsed != now || !h.fresh(now+time.Second) {
		t.Fatalf("the first renewal after the outage: lapsed %v, fresh %v", lapsed, h.fresh(now+time.Second))
	}
}

// A renewal written whose answer was lost leaves the key at a revision
// the holder did not see, naming it: the holder renews on that revision
// at once, without moving its deadline (which request wrote it is not
// known). A key found another's, or deleted, is lost for good.
func TestHoldingConflicts(t *testing.T) {
	h := newHolding(testPeriod, 3, 0)
	if wait := h.foundMine(4); wait != 0 || h.rev != 4 || h.deadline() != testPeriod*3/4 {
		t.Fatalf("found its own revision: wait %v, %+v", wait, h)
	}
	h.foundOther()
	if h.fresh(time.Second) || !h.lost {
		t.Fatal("a lease found another's is still fresh")
	}
	if h.checked(time.Hour) {
		t.Fatal("a lost lease is reported stale")
	}
}

// A process waiting for a key takes it over only once one revision has
// stayed unchanged for the longer of its period and the holder's (named
// in its value), measured from its first sight of that revision; a new
// revision restarts the wait for a standby and ends it for a second
// coordinator; a gone holder of this host is taken at the first look.
func TestWaitingDecisions(t *testing.T) {
	never := func() bool { return false }
	w := waiting{period: testPeriod, standby: true}
	if v, first, _ := w.observe(50*time.Second, 7, "h/1/ab/10s", never); v != keepWaiting || !first {
		t.Fatalf("first look: %v, first %v", v, first)
	}
	if v, first, _ := w.observe(59*time.Second, 7, "h/1/ab/10s", never); v != keepWaiting || first {
		t.Fatalf("9 s unchanged: %v", v)
	}
	// Renewed: the wait starts again.
	if v, _, _ := w.observe(59500*time.Millisecond, 8, "h/1/ab/10s", never); v != keepWaiting {
		t.Fatalf("renewed: %v", v)
	}
	if v, _, _ := w.observe(69*time.Second, 8, "h/1/ab/10s", never); v != keepWaiting {
		t.Fatalf("9.5 s after the renewal: %v", v)
	}
	if v, _, why := w.observe(69500*time.Millisecond, 8, "h/1/ab/10s", never); v != takeIt || why == "" {
		t.Fatalf("10 s after the renewal: %v", v)
	}
	// A holder with a longer lease than this process's is waited for
	// its own.
	w = waiting{period: time.Second, standby: true}
	w.observe(0, 1, "h/1/ab/10s", never)
	if v, _, _ := w.observe(9*time.Second, 1, "h/1/ab/10s", never); v != keepWaiting {
		t.Fatalf("a 10 s holder after 9 s, by a 1 s waiter: %v", v)
	}
	// A second coordinator gives up at the first renewal it sees.
	w = waiting{period: testPeriod}
	w.observe(0, 1, "h/1/ab/10s", never)
	if v, _, _ := w.observe(time.Second, 2, "h/1/ab/10s", never); v != heldByOther {
		t.Fatalf("a renewing holder, to a second coordinator: %v", v)
	}
	// A gone holder is taken at the first look, asked once.
	asked := 0
	gone := func() bool { asked++; return true }
	w = waiting{period: testPeriod}
	if v, _, _ := w.observe(0, 1, "h/1/ab/10s", gone); v != takeIt {
		t.Fatalf("a gone holder: %v", v)
	}
	// Its compare-and-set failed (another was quicker): the wait goes on.
	if v, _, _ := w.observe(time.Second, 1, "h/1/ab/10s", gone); v != keepWaiting || asked != 1 {
		t.Fatalf("a gone holder taken by another: %v, asked %d times", v, asked)
	}
}

// TestLeaseNeverTwoHolders runs a holder and a standby against a model
// of the KV key (compare-and-set on a revision) under random schedules:
// the holder stopped (SIGSTOP, starved, suspended) for up to three
// periods at a time, the server away for up to two periods (requests
// lost), requests and answers delayed, answers lost after their write,
// and the two processes' clocks offset from each other. It checks the
// safety property (the holder never finds its lease fresh at or after
// the moment the standby's takeover is written), and that a holder is
// lost only when another took the key, and fresh again in the last
// period of a run whose takeover never came.
func TestLeaseNeverTwoHolders(t *testing.T) {
	takeovers, recoveries := 0, 0
	for seed := range uint64(400) {
		r := leaseModelRun(t, seed, seed%4 != 0)
		if r.took {
			takeovers++
		}
		recoveries += r.recovered
	}
	t.Logf("400 schedules: %d takeovers, %d stale leases renewed by their holder", takeovers, recoveries)
	if takeovers == 0 || recoveries == 0 {
		t.Fatal("the schedules exercised neither a takeover nor a renewal after a lapse")
	}
}

type modelResult struct {
	took      bool
	recovered int
}

// leaseModelRun is one schedule of TestLeaseNeverTwoHolders, in 1 ms
// steps over 40 lease periods of 1 s; standby says whether a standby
// waits to take the key over.
func leaseModelRun(t *testing.T, seed uint64, standby bool) modelResult {
	t.Helper()
	const (
		period = time.Second
		step   = time.Millisecond
		end    = 40 * period
	)
	rng := rand.New(rand.NewPCG(seed, 47))
	dur := func(max time.Duration) time.Duration { return time.Duration(rng.Int64N(int64(max))) }
	delay := func() time.Duration { // a request's or an answer's way
		if rng.IntN(10) == 0 {
			return dur(period / 2)
		}
		return dur(period / 20)
	}
	// Outages of the server and stops of the holder: [from, to).
	type window struct{ from, to time.Duration }
	var outages, stops []window
	for at := 2 * period; at < end-5*period; at += period/2 + dur(8*period) {
		if rng.IntN(2) == 0 {
			outages = append(outages, window{at, at + dur(2*period)})
		} else {
			stops = append(stops, window{at, at + dur(3*period)})
		}
	}
	in := func(ws []window, t time.Duration) bool {
		for _, w := range ws {
			if w.from <= t && t < w.to {
				return true
			}
		}
		return false
	}
	// The key, and the compare-and-sets on their way to it.
	type write struct {
		who         string
		base        uint64
		sent, lands time.Duration
		answer      time.Duration // when its answer comes (-1: lost)
		landed, ok  bool
		rev         uint64
		timeout     time.Duration
	}
	kvRev, kvVal := uint64(1), "H"
	var writes []*write
	taken := time.Duration(-1) // when the standby's takeover was written
	// Each process's clock is offset: only durations on one clock count.
	offH, offW := dur(time.Hour), dur(time.Hour)
	h := newHolding(period, kvRev, offH)
	var hreq *write // the holder's renewal awaiting its answer
	hNext := period / 4
	w := waiting{period: period, standby: true}
	wNext, wBusy := time.Duration(0), false
	var res modelResult
	lastFresh := time.Duration(-1)
	for now := time.Duration(0); now < end; now += step {
		for _, q := range writes {
			if q.landed || now < q.lands {
				continue
			}
			q.landed = true
			if in(outages, now) {
				q.answer = -1
				continue
			}
			if q.ok = kvRev == q.base; q.ok {
				kvRev++
				q.rev, kvVal = kvRev, q.who
				if q.who == "W" {
					taken = now
				}
			}
			if q.answer = now + delay(); in(outages, q.answer) || rng.IntN(20) == 0 {
				q.answer = -1 // lost with the connection
			}
			if q.who == "W" {
				wBusy = false
			}
		}
		// The holder, unless stopped: it takes its renewal's answer, or
		// gives up on it at its timeout, as renew does.
		if hnow := now + offH; !in(stops, now) && !h.lost {
			switch q := hreq; {
			case q != nil && q.landed && q.answer >= 0 && now >= q.answer:
				hreq, hNext = nil, now+period/4
				switch {
				case q.ok:
					if _, lapsed := h.renewed(q.sent+offH, q.rev); lapsed > 0 {
						res.recovered++
					}
				case in(outages, now):
					h.failed(hnow) // the key unread
					hNext = now + period/16
				case kvVal == "H":
					h.foundMine(kvRev)
					hNext = now
				default:
					h.foundOther()
				}
			case q != nil && now >= q.timeout:
				hreq, hNext = nil, now+period/16
				h.failed(hnow)
			}
			// It would act now if its lease were fresh; found stale, it
			// renews at once (lease.await).
			if h.fresh(hnow) {
				lastFresh = now
				if taken >= 0 && now >= taken {
					t.Fatalf("seed %d: the holder acts at %v, after the standby's takeover was written at %v", seed, now, taken)
				}
			} else {
				hNext = min(hNext, now)
			}
			if hreq == nil && now >= hNext && !h.lost {
				hreq = &write{who: "H", base: h.rev, sent: now, lands: now + delay(), timeout: now + h.attemptTimeout()}
				writes = append(writes, hreq)
			}
		}
		// The standby looks every period/4 and takes the key over by a
		// compare-and-set on the revision it saw, as takeLease does.
		if standby && taken < 0 && !wBusy && now >= wNext && !in(outages, now) {
			wNext = now + period/4
			if v, _, _ := w.observe(now+offW, kvRev, kvVal, func() bool { return false }); v == takeIt {
				writes = append(writes, &write{who: "W", base: kvRev, sent: now, lands: now + delay()})
				wBusy = true
			}
		}
	}
	res.took = taken >= 0
	switch {
	case h.lost && !res.took:
		t.Fatalf("seed %d: the holder lost a lease nobody took (outages %v, stops %v)", seed, outages, stops)
	case !res.took && lastFresh < end-period:
		// The last outage or stop ends 2 periods before the end.
		t.Fatalf("seed %d: the holder's lease was last fresh at %v in a run with no takeover (outages %v, stops %v)", seed, lastFresh, outages, stops)
	}
	return res
}

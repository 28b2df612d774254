package act

import (
	"maps"
	"time"
)

// Unstarved time: the wall time during which a process ran or slept, less
// the time it was ready to run but waited for a CPU (the kernel's
// per-thread run delay, schedStat in isolate_linux.go). A watchdog on it
// does not take a process starved by a loaded machine for a hung one: a
// simulation that needs 50 ms of CPU takes about 50 ms of it at any load,
// while a simulation that spins (burns CPU) or blocks (sleeps) for ever
// accrues it without bound, at any load. Where the kernel does not say
// (not Linux), it is the wall clock.
//
// Over an interval Δ of wall time, with run and wait the increases of its
// threads' CPU time and run delay, summed, the unstarved time is
// max(min(run, Δ), Δ − wait), within [0, Δ]: wait summed over threads can
// exceed Δ (several runnable threads of one starved process), and then
// the process still advances by the CPU time it got, so that a spinning
// process is never taken for a stopped one.
//
// Four things make it exact enough on a loaded machine. The kernel adds
// a wait to the run delay only when the wait ends: a thread runnable at a
// sample whose counts have not changed since an earlier one is taken to
// have waited since (pending), and the unstarved time is computed over
// the whole interval from the simulation's start, never summed over
// short intervals each clamped at 0, which would lose the corrections
// that a wait shows once ended. The increases are per thread, each
// thread's last counts kept when it is gone: a process that exits loses
// its threads one by one, and a sum over the threads present would drop
// (measured: the run delay of a memory hog exiting at load 40 fell from
// 1.0 s to 0.5 s, its unstarved time jumping by as much). And a sample
// of a process that is gone (exiting, reaped) adds nothing: it runs no
// simulation any more.

// threadTimes are a thread's CPU time and run delay in ns, and whether it
// was runnable (running or waiting for a CPU) when sampled.
type threadTimes struct {
	run, wait int64
	runnable  bool
}

// waitPerRun caps the run delay a process's waits count for at this many
// times the CPU time its threads got. A thread that wakes for microseconds and then
// waits milliseconds for a CPU is not what a simulation waits on: the
// worker's heap watcher wakes every 20 ms for a few µs, and at load 40 on
// 2 cores it was runnable nearly all the time, so that a simulation asleep
// for ever (a blocked hang) accrued almost no unstarved time and went
// uncharged past --duration plus a watchdog (TestDurationEndsHangingCampaign,
// 0 hangs charged in 17 s with a watchdog of 2 s). A starved thread that
// runs the simulation gets a share s of a CPU and waits (1−s)/s times its
// CPU time: whole for shares down to 1/(1+waitPerRun), 0.5% here, which
// is a machine at a load of hundreds.
const waitPerRun = 200

// unstarvedOver is the unstarved time over dt whose threads' counts went
// from ref (a thread absent from it started since) to seen, with pending
// more run delay per thread (waits in progress).
func unstarvedOver(dt time.Duration, ref, seen map[int]threadTimes, pending map[int]time.Duration) time.Duration {
	if dt <= 0 {
		return 0
	}
	var run, wait time.Duration
	for tid, s := range seen {
		r := ref[tid]
		run += time.Duration(max(s.run-r.run, 0))
		wait += time.Duration(max(s.wait-r.wait, 0)) + pending[tid]
	}
	// Capped over the process, not per thread: Go moves a goroutine
	// between threads, and a thread that has just taken the simulation
	// over has waited long for little CPU.
	wait = min(wait, waitPerRun*run)
	return min(max(min(run, dt), dt-wait, 0), dt)
}

// simClock is the unstarved time of the simulation a process is running
// (or of a wait: settle), from samples of the process taken at every poll
// (not at every result: a result may come every millisecond, and a sample
// reads one file per thread). A simulation's time counts from the last
// sample before it began, less the share of the time from that sample to
// its start at the rate of the last interval between samples: within a
// poll interval's of its exact unstarved time.
type simClock struct {
	pid   int
	known bool // the kernel gives the counts (else: the wall clock)
	gone  bool // a sample failed: the process is exiting or reaped
	// seen are the latest counts of every thread sampled (gone ones
	// too), at lastT; ref the counts at refT, the last sample before the
	// simulation began; changed when a thread's counts last changed (or
	// it was first seen), cur the scratch of a sample.
	seen, ref, cur map[int]threadTimes
	changed        map[int]time.Time
	pending        map[int]time.Duration // update's scratch
	lastT, refT    time.Time
	rate           float64       // unstarved per wall time over the last interval
	pre            time.Duration // estimated unstarved time from refT to its start
	sinceRef       time.Duration // unstarved time from refT to lastT
}

func newSimClock(pid int, now time.Time) *simClock {
	s := &simClock{pid: pid, seen: map[int]threadTimes{}, cur: map[int]threadTimes{}, changed: map[int]time.Time{}, pending: map[int]time.Duration{}, lastT: now, refT: now, rate: 1}
	s.known = schedStat(pid, s.seen)
	for tid := range s.seen {
		s.changed[tid] = now
	}
	s.ref = maps.Clone(s.seen)
	return s
}

// poll samples the process at now.
func (s *simClock) poll(now time.Time) {
	dt := now.Sub(s.lastT)
	if dt <= 0 || s.gone {
		return
	}
	before := s.sinceRef
	switch {
	case !s.known:
		s.sinceRef = now.Sub(s.refT)
	default:
		clear(s.cur)
		if !schedStat(s.pid, s.cur) {
			s.gone, s.rate = true, 0
			return
		}
		s.sinceRef = unstarvedOver(now.Sub(s.refT), s.ref, s.seen, s.update(now))
	}
	s.rate = min(max(float64(s.sinceRef-before)/float64(dt), 0), 1)
	s.lastT = now
}

// update merges the sample cur taken at now into seen and returns the
// waits in progress by thread: for each thread runnable now whose counts
// have not changed since an earlier sample, the time since then (or since
// refT).
func (s *simClock) update(now time.Time) map[int]time.Duration {
	clear(s.pending)
	for tid, c := range s.cur {
		old, ok := s.seen[tid]
		switch {
		case !ok || old.run != c.run || old.wait != c.wait:
			s.changed[tid] = now
		case c.runnable:
			s.pending[tid] = now.Sub(later(s.changed[tid], s.refT))
		}
		s.seen[tid] = c
	}
	return s.pending
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// elapsed is the unstarved time of the current simulation at now (at or
// after the last sample), the time since the last sample counted at the
// last interval's rate.
func (s *simClock) elapsed(now time.Time) time.Duration {
	d := s.sinceRef - s.pre
	if part := now.Sub(s.lastT); part > 0 {
		d += time.Duration(s.rate * float64(part))
	}
	return max(d, 0)
}

// next starts the next simulation at now and returns the unstarved time
// of the one that ended. It samples the process when the last sample is
// older than fresh: a supervisor that could not read results for a while
// (blocked forwarding them while the coordinator merges) samples no
// process meanwhile, and a start estimated from an old sample at the rate
// of its time would take the worker's wait for the supervisor (blocked
// writing its results) for the next simulation's.
func (s *simClock) next(now time.Time, fresh time.Duration) time.Duration {
	if now.Sub(s.lastT) > fresh {
		s.poll(now)
	}
	d := s.elapsed(now)
	s.refT, s.sinceRef, s.pre = s.lastT, 0, 0
	clear(s.ref)
	maps.Copy(s.ref, s.seen)
	if part := now.Sub(s.lastT); part > 0 {
		s.pre = time.Duration(s.rate * float64(part))
	}
	return d
}

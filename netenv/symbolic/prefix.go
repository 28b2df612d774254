package symbolic

import (
	"context"
	"fmt"

	"github.com/actfuzz/actfuzz/netenv/snapshot"
)

// Prefix snapshots (issue 22, item 3).
//
// Every run of an exploration executes the same events up to the one whose
// handler delays the window's first packet: until then no timestamp
// depends on the delays, so every comparison is concrete and nothing
// differs between branches (the witness is not even read). The explorer
// learns the length of that prefix from its first run (sched.prefix),
// runs it once more, saves the whole run there with netenv/snapshot (event
// queue and symbolic scheduler, endpoints, CCAIs, links with their queues,
// AQM, shaping and PRNG streams, observers and condition watchers, the
// window hook's counters), and starts every later run by restoring it.
// Outcomes, trace hashes and every count of the report are those of runs
// from time zero (TestSnapshotAgrees); only the events simulated shrink.
//
// When the run holds state that a snapshot cannot save (a CCAI or watcher
// with a closure, say; see netenv/snapshot and ccai.StateSaver), Take fails
// and every run starts from time zero, as before; Report.Snapshot says why.

// prefixSnap is an exploration's snapshot of the prefix.
type prefixSnap struct {
	known bool   // the first run has measured the prefix
	at    uint64 // events in the prefix
	run   *scRun // the run the snapshot restores (its root)
	snap  *snapshot.Snapshot
	note  string // Report.Snapshot
}

// prepare takes the snapshot if the first run has measured a prefix and
// none was taken yet; afterwards x.pre.snap is set, or snapshots are off.
func (x *explorer) prepare(ctx context.Context, s *sched, p *path) error {
	pre := &x.pre
	if !pre.known || pre.snap != nil || pre.note != "" {
		return nil
	}
	switch {
	case x.opt.NoSnapshot:
		pre.note = "off: Options.NoSnapshot"
		return nil
	case pre.at == 0:
		pre.note = "off: the window's first packet is delayed before the first event ends"
		return nil
	}
	s.reset(p)
	r, err := x.c.start(s, &p.w, nil, x.opt.hashTrace)
	if err != nil {
		return err
	}
	if err := r.runTo(ctx, pre.at); err != nil {
		return err
	}
	x.simulated += r.events()
	if r.witnessRead() {
		// The first run said no delay matters before this point; a
		// prefix that read one would differ between branches.
		pre.note = "off: the window's delays are read before the prefix ends"
		return nil
	}
	snap, err := snapshot.Take(r)
	if err != nil {
		pre.note = "off: " + err.Error()
		return nil
	}
	objs, bytes := snap.Size()
	pre.run, pre.snap = r, snap
	pre.note = fmt.Sprintf("after %d events (%.6f s): %d objects, %.1f kB", pre.at, r.now().Seconds(), objs, float64(bytes)/1e3)
	return nil
}

// restore starts a run from the snapshot: p's witness and path from the
// window's start on.
func (x *explorer) restore(p *path) *scRun {
	x.pre.snap.Restore()
	x.sch.p = p
	x.pre.run.setWitness(&p.w)
	return x.pre.run
}

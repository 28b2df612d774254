package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// The coordinator's lease on its campaign (package doc, "One coordinator
// a campaign"; lease.go): taken before anything of the campaign's is
// touched, and checked before each act on the campaign's shared state
// (acting).

// ErrCampaignHeld is the error of a coordinator started while another one
// coordinates its campaign (a lease renewed by its holder): two would
// delete or consume each other's streams. `run` exits 2 with it.
var ErrCampaignHeld = errors.New("another coordinator coordinates this campaign")

// ErrCampaignTaken ends a coordinator whose lease on its campaign another
// coordinator took: it was away from the server, stopped or starved for
// longer than its lease, and found the lease another's when it renewed
// it. It has not acted on the campaign since its lease went stale, and
// leaves it to the new holder. (A lease that went stale and that nobody
// took is renewed, and the coordinator carries on.)
var ErrCampaignTaken = errors.New("the coordinator lost its lease on the campaign")

// coordinatorKey is the key of a campaign's coordinator lease in the
// leases bucket (beside its parts' ID.J).
func coordinatorKey(id string) string { return id + ".coordinator" }

// holdCampaign takes the coordinator's lease on its campaign, before
// anything of the campaign's is deleted or consumed: one coordinator a
// campaign, as one process an output directory (corpus.LockDir) on one
// machine. A coordinator killed and resumed takes it over at once on the
// same host, else after Options.Lease; one started while the holder
// renews it fails with ErrCampaignHeld.
func (e *Executor) holdCampaign(ctx context.Context) error {
	id := e.opt.ID
	leases, err := leasesBucket(ctx, e.js, true)
	if err != nil {
		return fmt.Errorf("KV bucket %s: %w", LeasesBucket, err)
	}
	sp := &leaseSpec{kv: leases, key: coordinatorKey(id), holder: holderName(e.opt.Lease), period: e.opt.Lease, poll: e.opt.Lease / 8,
		what: "campaign", log: e.log,
		// A resume after a kill -9 on the same host need not wait for
		// the dead one's lease to expire. A fresh run never takes a
		// lease over at once: its id came from an --out no one resumes,
		// so a holder is another machine's (which may share this one's
		// host name and not its pids).
		takeGone: e.opt.Resume,
		// Every goroutine of the executor stops at once: nothing of the
		// campaign is this coordinator's any more.
		lost: func() {
			e.failWith(fmt.Errorf("campaign %s: %w", id, ErrCampaignTaken))
			e.cancel()
		}}
	e.lease, err = takeLease(ctx, e.ctx, sp, false)
	var held *LeaseHeldError
	if errors.As(err, &held) {
		return fmt.Errorf("campaign %s is coordinated by %s, which renews its lease: %w", id, held.Holder, ErrCampaignHeld)
	}
	return err
}

// acting waits until the coordinator may act on its campaign's shared
// state (publish a chunk, ack or delete a message, ask a store part):
// its lease is fresh, or was stale and renewed since, nobody having
// taken it. false: it may not, ever (the lease is lost, or the executor
// closing). A coordinator that was starved of CPU or stopped (SIGSTOP)
// past its lease finds out here before it acts, whichever of its
// goroutines wakes first.
func (e *Executor) acting() bool {
	return e.lease == nil || e.lease.await(e.ctx) == nil
}

// Fencing. A coordinator checks its lease before each act (acting), but
// an act checked while the lease was fresh can still reach the server
// after a successor took the campaign over: the process was stopped
// (SIGSTOP), starved or suspended between the check and the sending, or
// the act sat in the client's write buffer (nats.go sends from a
// flusher goroutine), so it leaves the process only when the process
// runs again. A local check cannot close that window; the server must
// refuse such acts (Kleppmann, "How to do distributed locking", 2016:
// fencing tokens). Each coordinator's epoch is its token, and its setup,
// after it holds the lease and before it acts:
//   - sets the work stream's subjects to its own epoch's alone
//     (workSubject): a predecessor's late chunk matches no stream, and
//     its publication fails (no responders) instead of landing;
//   - deletes every coordinator results consumer before it makes its own
//     (coordinatorConsumerOf): a predecessor's late ack names a consumer
//     that no longer exists, and the server drops it.
// A late act that reaches the server before the fence is the
// predecessor's last act, which the successor finds in the streams: the
// work stream is purged, and a result whose ack landed was merged by
// the predecessor's checkpoint or is published again (the chunks
// without a result are published again).

// deleteCoordinatorConsumers deletes the results stream's coordinator
// consumers of every epoch (and of builds before epochs named them).
func deleteCoordinatorConsumers(ctx context.Context, results jetstream.Stream) error {
	names := results.ConsumerNames(ctx)
	var stale []string
	for name := range names.Name() {
		if name == coordinatorConsumer || strings.HasPrefix(name, coordinatorConsumer+"-") {
			stale = append(stale, name)
		}
	}
	if err := names.Err(); err != nil {
		return fmt.Errorf("listing the results stream's consumers: %w", err)
	}
	for _, name := range stale {
		if err := results.DeleteConsumer(ctx, name); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
			return fmt.Errorf("deleting consumer %s: %w", name, err)
		}
	}
	return nil
}

// closeWait bounds how long a closing coordinator tries to renew a stale
// lease before it removes its campaign's header and streams.
const closeWait = 5 * time.Second

// stillHeld reports, as the executor closes, whether its lease is still
// its own and fresh (renewing a stale one once): only then are the
// campaign's header, objects and streams its to remove. A lease lost, or
// not renewed in time, leaves them to whoever holds it, or to a resume.
func (e *Executor) stillHeld() bool {
	if e.lease == nil {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), closeWait)
	defer cancel()
	if e.lease.confirm(ctx) {
		return true
	}
	if e.lease.isLost() {
		e.log.Warn("the campaign's lease was lost: its header, streams and objects are left to the coordinator that holds it")
	} else {
		e.log.Warn("the campaign's lease could not be renewed as the coordinator closed: its header, streams and objects are left for a resume")
	}
	return false
}

// notActing is the error of an act the coordinator may not do (acting is
// false): its lease lost, or the executor closing.
func (e *Executor) notActing() error {
	if e.lease != nil && e.lease.isLost() {
		return fmt.Errorf("campaign %s: %w", e.opt.ID, ErrCampaignTaken)
	}
	if err := e.ctx.Err(); err != nil {
		return err
	}
	return errLeaseLost
}

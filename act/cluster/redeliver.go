package cluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// A share waits in its store process until its simulation is merged (the
// lag), so the part consumers' AckWait is long (10 minutes): it only
// brings back what a store process held when it died. Shares delivered
// to a process that died (kill -9), or that lost its lease while stopped
// and then gave up, or on a connection that a server restart cut (the
// server counts them delivered), would otherwise keep a merge waiting
// that long: bench/cluster-chaos.sh's coordinator exited 3 with "store
// part 0: merge: 64 of 64 shares not received yet after 2m0s" after a
// store process's and the server's kill -9 (issue 47). A consumer made
// again delivers every share not acked at once, to whichever process
// serves the part; the coordinator does so when it starts (setupParts)
// and when a merge's shares stay missing (callPart). A store process
// receives from the new consumer (serveCampaign); the shares it held
// come again and are acked with those held (partState.keep).

// remakeEvery is how long a merge's shares may stay missing before the
// coordinator makes the part's consumer again (and again after as long):
// two of the part's waits for them (shareWait), so that shares merely
// late (a loaded host) are not delivered twice for nothing.
const remakeEvery = 2 * shareWait

// partAckWait is the part consumers' AckWait.
const partAckWait = 10 * time.Minute

// remakePartConsumer deletes store part j's consumer and makes it again,
// so that every share of the part not acked is delivered again at once.
func (e *Executor) remakePartConsumer(ctx context.Context, j int) error {
	id := e.opt.ID
	sts, err := e.js.Stream(ctx, statesStream(id))
	if err != nil {
		return fmt.Errorf("states stream: %w", err)
	}
	if err := sts.DeleteConsumer(ctx, partConsumer(j)); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return fmt.Errorf("store part %d consumer: %w", j, err)
	}
	if _, err := e.js.CreateOrUpdateConsumer(ctx, statesStream(id), jetstream.ConsumerConfig{Durable: partConsumer(j),
		FilterSubject: statesSubject(id, j), AckPolicy: jetstream.AckExplicitPolicy, AckWait: partAckWait, MaxAckPending: -1,
		Description: fmt.Sprintf("actfuzz store part %d", j)}); err != nil {
		return fmt.Errorf("store part %d consumer: %w", j, err)
	}
	return nil
}

// redeliverShares makes part j's consumer again for a merge whose shares
// have been missing for a while (remakeEvery); a failure is logged (the
// merge goes on waiting, until Options.PartTimeout).
func (e *Executor) redeliverShares(ctx context.Context, j int, missing string) {
	if !e.acting() {
		return
	}
	e.log.Warn("a merge's shares still missing: making the store part's consumer again, so that shares held by a process that died or stopped, or lost with a connection, come again at once",
		"part", j, "missing", missing)
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := e.remakePartConsumer(cctx, j); err != nil {
		e.log.Warn("making the store part's consumer again", "part", j, "err", err)
		return
	}
	e.mu.Lock()
	e.stats.Remade++
	e.mu.Unlock()
}

package cluster

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// A share waits in its store process until its simulation is merged (the
// lag), so the part consumers' AckWait is long (10 minutes): it only
// brings back what a store process held when it died. A merge can find
// its shares missing for two reasons, and both made bench/cluster-chaos.sh's
// coordinator exit 3 ("store part 0: merge: 64 of 64 shares not received
// yet after 2m0s"; issue 47):
//
//   - Shares held: delivered to a process that died (kill -9) or gave the
//     part up, or on a connection that a server restart cut (the server
//     counts them delivered). They would come again after AckWait. A
//     consumer made again delivers every share not acked at once, to
//     whichever process serves the part: the coordinator does so when it
//     starts (setupParts) and when a merge's shares stay missing
//     (stillMissing); a store process receives from the new consumer
//     (serveCampaign) and acks the shares it held twice with the ones
//     held (partState.keep).
//   - Shares gone: acked while their results were not. A part acked a
//     share as it merged it, and a coordinator killed before it acked the
//     result, or that lost another part in that merge, continued from its
//     checkpoint with the result in the results stream (it publishes its
//     chunk no more) and no share in the states stream. A part now acks a
//     merge's shares at the next merge (settle.go); a share gone for any
//     other reason (the server's disk) is run again: the configurations
//     of a merge whose shares stay missing after the consumer was made
//     again are published again alone (reissueShares), a host runs each
//     again and publishes the same shares (a simulation is deterministic,
//     and the part merges the share whose SHA-256 the result named), and
//     the results that come with them are duplicates.

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

// missingShares is a request's wait for the shares a part lacks.
type missingShares struct {
	since    time.Time // the wait's start, or the last reissue
	remade   time.Time // the last time the part's consumer was made
	remakes  int
	reissues int
}

// maxShareReissues bounds the times a merge's configurations are
// published again for shares that stay missing.
const maxShareReissues = 3

// reissueBase numbers the publications of a configuration for its shares
// (chunk.attempt), apart from spoiled.go's: each needs its own message id.
const reissueBase = 1 << 20

// stillMissing takes a part's answer that shares are missing: every
// remakeEvery it makes the part's consumer again, and from the second
// time on also publishes the merge's configurations again (at most
// maxShareReissues times), each publication giving them
// Options.PartTimeout more to come. It returns the error that ends the
// wait once they have been missing for PartTimeout since.
func (e *Executor) stillMissing(ctx context.Context, j int, req partRequest, rep partReply, w *missingShares) error {
	if time.Since(w.since) > e.opt.PartTimeout {
		return fmt.Errorf("store part %d: %s: %s after %v", j, req.Op, rep.Err, time.Since(w.since).Round(time.Second))
	}
	if time.Since(w.remade) < remakeEvery {
		return nil
	}
	w.remade = time.Now()
	e.redeliverShares(ctx, j, rep.Err)
	if w.remakes++; w.remakes >= 2 && w.reissues < maxShareReissues && req.Op == opMerge {
		w.reissues++
		if e.reissueShares(j, req.Items, w.reissues) > 0 {
			w.since = time.Now()
		}
	}
	return nil
}

// reissueShares publishes again alone each configuration of a merge's
// items (those of worker hosts), for their shares, and returns how many.
func (e *Executor) reissueShares(j int, items []shareItem, try int) int {
	if !e.acting() {
		return 0
	}
	e.mu.Lock()
	var cs []*chunk
	for _, it := range items {
		i, err := strconv.Atoi(strings.TrimPrefix(it.Key, "i"))
		if err != nil || !strings.HasPrefix(it.Key, "i") || i < e.merged {
			continue // the coordinator's own states, or merged meanwhile
		}
		delete(e.chunks, retryBit|uint64(i)) // a retry published before: a new one
		c, err := e.single(i)
		if err != nil || c == nil {
			continue
		}
		c.attempt, c.again = reissueBase+try, true
		cs = append(cs, c)
	}
	e.stats.Reissued += len(cs)
	e.mu.Unlock()
	e.log.Warn("a merge's shares still missing after its part's consumer was made again: its configurations published again alone, for their shares",
		"part", j, "configs", len(cs), "try", try)
	for _, c := range cs {
		select {
		case e.pubq <- c:
		case <-e.ctx.Done():
			return len(cs)
		}
	}
	return len(cs)
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

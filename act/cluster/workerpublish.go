package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/coverage"
)

// publish publishes the result r of a configuration of chunk c.
func (w *Worker) publish(ctx context.Context, id string, rec record, c *held, r act.Result) error {
	body, err := act.EncodeMessage(r)
	if err != nil {
		return err
	}
	if rec.MaxResult > 0 && len(body) > rec.MaxResult {
		// A cap, not a fault of the subject or of this host: every host
		// would make the same result. The coordinator gets the result
		// without its states, so the simulation's findings are not lost,
		// and counts it as capped (Report.StatesDropped).
		w.log.Warn("result over the coordinator's limit: sent without its states (capped)", "campaign", id,
			"index", r.Index, "bytes", len(body), "max_result", rec.MaxResult)
		size := len(body)
		r.States, r.Decoded, r.StatesDropped = nil, nil, size
		if body, err = act.EncodeMessage(r); err != nil {
			return err
		}
		if len(body) > rec.MaxResult {
			return fmt.Errorf("%w: configuration %d: %d bytes without its states, the coordinator takes at most %d", errTooLarge, r.Index, len(body), rec.MaxResult)
		}
		w.mu.Lock()
		w.stats.Dropped++
		w.mu.Unlock()
	}
	// A result over the server's max_payload goes in parts, which the
	// coordinator puts together (Executor.assemble).
	part := max(int(w.nc.MaxPayload())-partHeadroom, 1024)
	n := (len(body) + part - 1) / part
	for i := range n {
		msg := &nats.Msg{Subject: resultSubject(id), Header: nats.Header{}, Data: body[i*part : min(len(body), (i+1)*part)]}
		msg.Header.Set(hdrCampaign, id)
		msg.Header.Set(hdrWork, c.sum)
		if n > 1 {
			msg.Header.Set(hdrPart, fmt.Sprintf("%d/%d/%d/%d", r.BatchID, r.Index, i, n))
		}
		tooLarge := false
		if err := retry(ctx, func() error {
			pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			_, err := w.js.PublishMsg(pctx, msg)
			if err != nil && !errors.Is(err, context.Canceled) {
				w.log.Warn("publishing a result", "index", r.Index, "part", i, "bytes", len(msg.Data), "err", err)
			}
			if errors.Is(err, nats.ErrMaxPayload) || errors.Is(err, jetstream.ErrStreamMessageExceedsMaximum) {
				tooLarge = true
				return nil // cannot ever go: stop retrying
			}
			return err
		}); err != nil {
			return err
		}
		if tooLarge {
			return fmt.Errorf("%w: configuration %d: a part of %d bytes, the server's max_payload is %d (or the results stream's limit)", errTooLarge, r.Index, len(msg.Data), w.nc.MaxPayload())
		}
	}
	w.mu.Lock()
	if n > 1 {
		w.stats.Parted++
	}
	w.stats.Results++
	w.mu.Unlock()
	return nil
}

// shareStates splits r's states into the shares of the campaign's store
// parts (coverage.Batch.Share), encoded, and returns r without its
// states (the result carries the shares' SHA-256 instead, once they are
// sent). A result whose states are over MaxResult keeps them and has no
// shares (publish drops them: a cap).
func shareStates(rec record, space coverage.Space, r act.Result) (act.Result, [][]byte, error) {
	if rec.MaxResult > 0 && len(r.States) > rec.MaxResult {
		return r, nil, nil
	}
	share, err := coverage.NewBatch(space)
	if err != nil {
		return r, nil, err
	}
	var pos []uint32
	shares := make([][]byte, rec.Parts)
	for j := range rec.Parts {
		pos = r.Decoded.Share(share, pos, j, rec.Parts, rec.Shards)
		shares[j] = coverage.AppendShare(nil, share, pos)
	}
	r.States = nil
	return r, shares, nil
}

// sendShares publishes the shares of configuration index to the
// campaign's store parts, at once (a host away from the server waits one
// round trip for their acks, not one a part: bench/cluster-latency.sh),
// and returns their SHA-256.
func (w *Worker) sendShares(ctx context.Context, id string, index int, shares [][]byte) ([][]byte, error) {
	payload := max(int(w.nc.MaxPayload())-partHeadroom, 1024)
	sums, errs := make([][]byte, len(shares)), make([]error, len(shares))
	var wg sync.WaitGroup
	for j, data := range shares {
		wg.Go(func() { sums[j], errs[j] = publishShare(ctx, w.js, payload, id, j, workerShareKey(index), data) })
	}
	wg.Wait()
	return sums, errors.Join(errs...)
}

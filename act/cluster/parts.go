package cluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/coverage"
)

// The coordinator's side of the store parts (package doc, "Store
// parts"): the Executor is an act.StoreParts when Options.Parts is set.

var _ act.StoreParts = (*Executor)(nil)

// StoreParts implements act.StoreParts.
func (e *Executor) StoreParts() int { return e.opt.Parts }

// ErrPartLost says that a store part is gone: its process does not
// answer, or answers that it has no part (it restarted). The campaign
// continues from its last checkpoint once a process serves the part
// again (`run` does so by itself: act.Options.Resume with a new
// Executor).
var ErrPartLost = errors.New("store part lost")

// callPart sends a request to store part j and returns its answer. It
// asks again while no store process answers (none started yet: it logs
// so every 10 s; for at most Options.PartTimeout but on a load, when the
// store processes may still be starting) and while the part waits for
// shares, up to PartTimeout (the hosts publish a result's shares before
// the result, so they are in the stream when the coordinator merges it).
func (e *Executor) callPart(ctx context.Context, j int, req partRequest) (partReply, error) {
	req.Epoch = e.epoch
	body := req.appendBinary(nil)
	timeout := min(30*time.Second, e.opt.PartTimeout)
	if req.Op == opLoad || req.Op == opSnapshot {
		timeout = 10 * time.Minute
	}
	start, logged := time.Now(), time.Now()
	missing := missingShares{since: start, remade: start}
	for {
		// Only a coordinator that holds its campaign asks its parts
		// (coordlease.go): one stopped past its lease finds out first.
		if !e.acting() {
			return partReply{}, fmt.Errorf("store part %d: %s: %w", j, req.Op, e.notActing())
		}
		// A request in flight when the connection to the server was lost
		// is asked again once it is restored: its answer went with the
		// connection (reconnect.go).
		uctx, stop := untilReconnect(ctx, e.nc)
		rctx, cancel := context.WithTimeout(uctx, timeout)
		// A request in flight to a holder that a standby replaced is
		// asked again of the new one at once (watchLeases).
		e.mu.Lock()
		changed := e.holderChanged[j]
		e.mu.Unlock()
		go func() {
			select {
			case <-changed:
				cancel()
			case <-rctx.Done():
			}
		}()
		m, err := e.nc.RequestWithContext(rctx, partSubject(e.opt.ID, j), body)
		cancel()
		reconnected := stop()
		handed := false
		select {
		case <-changed:
			handed = true
		default:
		}
		var rep partReply
		switch {
		case err == nil:
			if rep, err = decodePartReply(m.Data); err != nil {
				return rep, fmt.Errorf("store part %d: %s: %w", j, req.Op, err)
			}
			if !rep.Missing {
				if rep.NotLoaded {
					return rep, fmt.Errorf("store part %d: %s: %w: %s", j, req.Op, ErrPartLost, rep.Err)
				}
				if rep.Err != "" {
					return rep, fmt.Errorf("store part %d: %s: %s", j, req.Op, rep.Err)
				}
				return rep, nil
			}
			if err := e.stillMissing(ctx, j, req, rep, &missing); err != nil {
				return rep, err
			}
		case ctx.Err() != nil:
			return rep, ctx.Err()
		case handed:
			e.log.Info("store part changed hands: asking its new holder", "part", j, "op", req.Op, "err", err)
		case reconnected:
			e.log.Info("connection to the server restored: asking the store part again", "part", j, "op", req.Op, "err", err)
		case errors.Is(err, nats.ErrNoResponders) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout):
			if req.Op != opLoad && time.Since(start) > e.opt.PartTimeout {
				return rep, fmt.Errorf("store part %d: %s: %w: no answer for %v (is `actfuzz store --part %d` running?): %w",
					j, req.Op, ErrPartLost, e.opt.PartTimeout, j, err)
			}
			if time.Since(logged) > 10*time.Second {
				e.log.Warn("waiting for a store process", "part", j, "op", req.Op, "err", err,
					"start", fmt.Sprintf("actfuzz store --nats URL --part %d", j))
				logged = time.Now()
			}
			select {
			case <-ctx.Done():
				return rep, ctx.Err()
			case <-time.After(250 * time.Millisecond):
			}
		default:
			return rep, fmt.Errorf("store part %d: %s: %w", j, req.Op, err)
		}
	}
}

// eachPart runs f for every part at once and returns their errors.
func (e *Executor) eachPart(f func(j int) error) error {
	errs := make([]error, e.opt.Parts)
	var wg sync.WaitGroup
	for j := range e.opt.Parts {
		wg.Go(func() { errs[j] = f(j) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// LoadParts implements act.StoreParts: each part goes through the object
// store to its store process.
func (e *Executor) LoadParts(ctx context.Context, parts []coverage.PartSource, outOfRange int) error {
	if len(parts) != e.opt.Parts {
		return fmt.Errorf("%d parts for %d store processes", len(parts), e.opt.Parts)
	}
	obs, err := partsStore(ctx, e.nc, e.js, true)
	if err != nil {
		return fmt.Errorf("object store %s: %w", PartsBucket, err)
	}
	err = e.eachPart(func(j int) error {
		// The part is copied from its source as it is put (a checkpoint's
		// part is not held here), and the object's digest, the SHA-256
		// of what was put, is the sum the part checks.
		open := func() io.ReadCloser {
			r, err := parts[j].Open()
			if err != nil {
				return io.NopCloser(failedReader{err})
			}
			return r
		}
		info, err := putObject(ctx, e.nc, obs, jetstream.ObjectMeta{Name: loadObject(e.opt.ID, j)}, e.payload(), open, nil)
		if err != nil {
			return fmt.Errorf("object store %s: part %d: %w", PartsBucket, j, err)
		}
		sum, err := jetstream.DecodeObjectDigest(info.Digest)
		if err != nil || int64(info.Size) != parts[j].Size {
			return fmt.Errorf("object store %s: part %d: put %d bytes of %d (digest %q)", PartsBucket, j, info.Size, parts[j].Size, info.Digest)
		}
		_, err = e.callPart(ctx, j, partRequest{Op: opLoad, Object: loadObject(e.opt.ID, j), Sum: sum, Parts: e.opt.Parts, OutOfRange: outOfRange,
			Memory: max(e.opt.Memory, 0)})
		return err
	})
	e.partSeq = 0
	return err
}

func (e *Executor) payload() int { return max(int(e.nc.MaxPayload())-partHeadroom, 1024) }

// MergeParts implements act.StoreParts. The coordinator's own states
// (Local) go to the parts as the hosts' do, on the states stream.
func (e *Executor) MergeParts(ctx context.Context, items []act.PartItem) ([][]coverage.PartNews, error) {
	// A merge the parts began is finished even if the campaign is
	// interrupted meanwhile: the parts and the index stay in step, and the
	// last checkpoint can be written.
	ctx = context.WithoutCancel(ctx)
	start := time.Now()
	defer func() {
		e.mu.Lock()
		e.stats.PartMerges++
		e.stats.PartMergeWait += time.Since(start)
		e.mu.Unlock()
	}()
	seq := e.partSeq + 1
	n := e.opt.Parts
	perPart := make([][]shareItem, n)
	var share *coverage.Batch
	var pos []uint32
	for i, it := range items {
		if it.Local == nil && len(it.Shares) != n {
			return nil, fmt.Errorf("configuration %d: %d shares for %d store parts", it.Index, len(it.Shares), n)
		}
		for j := range n {
			si := shareItem{Config: it.Config}
			if it.Local != nil {
				if share == nil {
					share, _ = coverage.NewBatch(e.space) // validated by NewExecutor
				}
				pos = it.Local.Share(share, pos, j, n, coverage.DefaultShards)
				si.Key = fmt.Sprintf("l%d.%d.%d", e.epoch, seq, i)
				sum, err := publishShare(ctx, e.js, e.payload(), e.opt.ID, j, si.Key, coverage.AppendShare(nil, share, pos))
				if err != nil {
					return nil, err
				}
				si.Sum = sum
			} else {
				si.Key, si.Sum = workerShareKey(it.Index), it.Shares[j]
			}
			perPart[j] = append(perPart[j], si)
		}
	}
	news := make([][]coverage.PartNews, len(items))
	for i := range news {
		news[i] = make([]coverage.PartNews, n)
	}
	capped := make([]string, n)
	err := e.eachPart(func(j int) error {
		rep, err := e.callPart(ctx, j, partRequest{Op: opMerge, Seq: seq, Items: perPart[j]})
		if err != nil {
			return err
		}
		capped[j] = rep.Capped
		blob := append([]byte(nil), rep.Data...)
		for c := 1; c < rep.Chunks; c++ {
			more, err := e.callPart(ctx, j, partRequest{Op: opNews, Seq: seq, Chunk: c})
			if err != nil {
				return err
			}
			blob = append(blob, more.Data...)
		}
		if sum := sha256.Sum256(blob); len(blob) != rep.Size || !bytes.Equal(sum[:], rep.Sum) {
			return fmt.Errorf("store part %d: the news of merge %d do not match their sum", j, seq)
		}
		for i := range items {
			k, m := binary.Uvarint(blob)
			if m <= 0 || k > uint64(len(blob)-m) {
				return fmt.Errorf("store part %d: malformed news", j)
			}
			if err := news[i][j].UnmarshalBinary(blob[m : m+int(k)]); err != nil {
				return fmt.Errorf("store part %d: %w", j, err)
			}
			blob = blob[m+int(k):]
		}
		if len(blob) != 0 {
			return fmt.Errorf("store part %d: news of more simulations than merged", j)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	e.partSeq = seq
	var over []string
	for _, c := range capped {
		if c != "" {
			over = append(over, c)
		}
	}
	if over != nil {
		return news, fmt.Errorf("%w: %s", act.ErrStoreCapped, strings.Join(over, "; "))
	}
	return news, nil
}

// SnapshotParts implements act.StoreParts: each part puts itself in the
// object store, and the sources it returns read it from there (checked,
// not decoded).
func (e *Executor) SnapshotParts(ctx context.Context) ([]coverage.PartSource, error) {
	obs, err := partsStore(ctx, e.nc, e.js, false)
	if err != nil {
		return nil, fmt.Errorf("object store %s: %w", PartsBucket, err)
	}
	out := make([]coverage.PartSource, e.opt.Parts)
	err = e.eachPart(func(j int) error {
		rep, err := e.callPart(ctx, j, partRequest{Op: opSnapshot, Seq: e.partSeq})
		if err != nil {
			return err
		}
		name := snapObject(e.opt.ID, j)
		// The object's digest is the SHA-256 of its bytes as the part
		// put them, which the part answered: the client hashes what it
		// reads and checks it against the digest at its end (the read
		// then fails). So the snapshot is hashed once, as it is copied
		// into the checkpoint, and never held here whole.
		check := func(info *jetstream.ObjectInfo) error {
			if !digestIs(info, rep.Sum) {
				return fmt.Errorf("store part %d: its snapshot does not match its sum", j)
			}
			return nil
		}
		var info *jetstream.ObjectInfo
		err = againAfterReconnect(ctx, e.nc, func(ctx context.Context) (err error) {
			info, err = obs.GetInfo(ctx, name)
			return err
		})
		if err != nil {
			return fmt.Errorf("object store %s: part %d: %w", PartsBucket, j, err)
		}
		if err := check(info); err != nil {
			return err
		}
		open := func() (io.ReadCloser, error) {
			octx, cancel := objectContext(ctx)
			obj, err := obs.Get(octx, name)
			if err == nil {
				var info *jetstream.ObjectInfo
				if info, err = obj.Info(); err == nil {
					err = check(info)
				}
				if err != nil {
					obj.Close()
				}
			}
			if err != nil {
				cancel()
				return nil, fmt.Errorf("object store %s: part %d: %w", PartsBucket, j, err)
			}
			return objectReader{obj, cancel}, nil
		}
		out[j] = coverage.PartSource{Size: int64(info.Size), Open: open}
		return nil
	})
	return out, err
}

// objectReader is an object being read, and the cancel of its context.
type objectReader struct {
	jetstream.ObjectResult
	cancel context.CancelFunc
}

func (r objectReader) Close() error {
	err := r.ObjectResult.Close()
	r.cancel()
	return err
}

// Pools implements coverage.PoolSource: the part that keeps the states
// answers, as of the last merge, in one request for up to maxPoolKeys of
// them (a selection asks for all its draws of one part at once).
func (e *Executor) Pools(part int, keys [][]uint64) ([][]coverage.Visit, error) {
	out := make([][]coverage.Visit, 0, len(keys))
	for len(keys) > 0 {
		n := min(len(keys), maxPoolKeys)
		var flat []uint64
		for _, k := range keys[:n] {
			flat = append(flat, k...)
		}
		// A selection is finished even if the campaign is interrupted
		// meanwhile: its draws are in the selector's state, which the
		// last checkpoint records.
		e.poolBegin()
		rep, err := e.callPart(context.WithoutCancel(e.ctx), part, partRequest{Op: opPool, Seq: e.partSeq, Key: flat, Keys: n})
		e.poolEnd(n)
		if err != nil {
			return nil, err
		}
		if len(rep.Lens) != n {
			return nil, fmt.Errorf("store part %d: pool: %d pools for %d states", part, len(rep.Lens), n)
		}
		at := 0
		for _, l := range rep.Lens {
			if l < 0 || l > len(rep.Visits)-at {
				return nil, fmt.Errorf("store part %d: pool: pools of %v visits, %d sent", part, rep.Lens, len(rep.Visits))
			}
			out = append(out, rep.Visits[at:at+l:at+l])
			at += l
		}
		if at != len(rep.Visits) {
			return nil, fmt.Errorf("store part %d: pool: pools of %v visits, %d sent", part, rep.Lens, len(rep.Visits))
		}
		keys = keys[n:]
	}
	return out, nil
}

// Count implements coverage.PoolSource.
func (e *Executor) Count(part int, key []uint64) (uint64, error) {
	e.poolBegin()
	rep, err := e.callPart(context.WithoutCancel(e.ctx), part, partRequest{Op: opCount, Seq: e.partSeq, Key: key})
	e.poolEnd(1)
	return rep.Count, err
}

// maxPoolKeys bounds the states of one pool request: its reply, at most
// PoolSize visits a state of up to 20 bytes each, stays far below the
// server's max_payload (1 MB by default) for pools of up to 32 visits.
const maxPoolKeys = 1024

// poolBegin and poolEnd bracket a pool request for n states
// (Stats.PoolRequests, PoolStates, PoolWait: the time some request was
// in flight, so that requests to different parts at once count once).
func (e *Executor) poolBegin() {
	e.mu.Lock()
	if e.poolInFlight == 0 {
		e.poolSince = time.Now()
	}
	e.poolInFlight++
	e.mu.Unlock()
}

func (e *Executor) poolEnd(n int) {
	e.mu.Lock()
	e.stats.PoolRequests++
	e.stats.PoolStates += n
	if e.poolInFlight--; e.poolInFlight == 0 {
		e.stats.PoolWait += time.Since(e.poolSince)
	}
	e.mu.Unlock()
}

// failedReader fails every read with err: a source that could not be
// opened, as putObject's reader.
type failedReader struct{ err error }

func (r failedReader) Read([]byte) (int, error) { return 0, r.err }

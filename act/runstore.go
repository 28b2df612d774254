package act

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/actfuzz/actfuzz/coverage"
)

// runStore is where a campaign's simulations merge: the whole store
// (wholeStore), or the index of store parts kept by the executor's
// worker hosts (partedStore). Either way the loop reads the store
// (campaignRun.store) as the whole store of the merged prefix.
type runStore interface {
	// merge merges simulations into the store in order: a result's
	// states (bs[i]) or, with store parts, its shares (shares[i], when
	// shares and shares[i] are not nil); ids[i] is the configuration.
	merge(ctx context.Context, bs []*coverage.Batch, shares [][][]byte, ids []uint64) ([]coverage.BatchResult, error)
	// save writes a checkpoint with write.
	save(ctx context.Context, write func() error) error
	// capped is the cap a merge reached (nil: none): the campaign ends
	// after that merge's batch.
	capped() error
	// checkpointPeriod is the time from one checkpoint to the next.
	checkpointPeriod() time.Duration
	// checkpointed notes a checkpoint that took the time took.
	checkpointed(took time.Duration)
}

// wholeStore is a store merged here.
type wholeStore struct {
	store *coverage.Store
	every time.Duration // Options.CheckpointEvery
}

func (w wholeStore) merge(_ context.Context, bs []*coverage.Batch, _ [][][]byte, ids []uint64) ([]coverage.BatchResult, error) {
	return w.store.AddBatches(bs, ids), nil
}

func (w wholeStore) save(_ context.Context, write func() error) error { return write() }
func (w wholeStore) capped() error                                    { return nil }
func (w wholeStore) checkpointPeriod() time.Duration                  { return w.every }
func (w wholeStore) checkpointed(time.Duration)                       {}

// partedStore is the index of store parts: a checkpoint writes it with
// the parts' snapshots, which read as the whole store of the merged
// prefix.
type partedStore struct {
	index    *coverage.Store
	parts    StoreParts
	rep      *Report
	log      *slog.Logger
	indexCap int64 // 0: the index is not capped
	// A checkpoint moves every part through the object store, which
	// takes longer as the store grows: pace spaces them (pace.go).
	pace       checkpointPace
	reachedCap error // a store part or the index at its cap
}

// openStore returns the store the run merges into: with store parts,
// it gives the parts their contents (a new campaign's empty parts, or
// a resumed one's) and makes the run's store their index.
func (r *campaignRun) openStore() (runStore, error) {
	opt := &r.opt
	if opt.StoreParts <= 0 {
		return wholeStore{store: r.store, every: opt.CheckpointEvery}, nil
	}
	var parted StoreParts
	var ok bool
	if x, isExt := r.ex.(*external); isExt {
		parted, ok = x.x.(StoreParts)
	}
	if !ok || parted.StoreParts() != opt.StoreParts {
		return nil, fmt.Errorf("%d store parts: the executor does not keep them", opt.StoreParts)
	}
	index := r.store // a resumed campaign's, with partSources
	if r.partSources == nil {
		var blobs [][]byte
		var err error
		if index, blobs, err = coverage.SplitEncoded(r.store, opt.StoreParts); err != nil {
			return nil, err
		}
		r.partSources = coverage.BytesSources(blobs)
	}
	if err := parted.LoadParts(r.ctx, r.partSources, r.oorLimit); err != nil {
		return nil, fmt.Errorf("store parts: %w", err)
	}
	r.partSources = nil
	r.closeParts()
	r.closeParts = func() {}
	index.SetPoolSource(parted)
	*r.store = *index // the selector, the symbolic step and the report hold store
	return &partedStore{index: r.store, parts: parted, rep: r.rep, log: r.log, indexCap: r.indexCap,
		pace: newCheckpointPace(opt.CheckpointEvery)}, nil
}

func (p *partedStore) merge(ctx context.Context, bs []*coverage.Batch, shares [][][]byte, ids []uint64) ([]coverage.BatchResult, error) {
	items := make([]PartItem, len(ids))
	for i := range ids {
		items[i] = PartItem{Config: ids[i], Index: int(ids[i])}
		if shares != nil && shares[i] != nil {
			items[i].Shares = shares[i]
		} else {
			items[i].Local = bs[i]
		}
	}
	news, err := p.parts.MergeParts(ctx, items)
	if errors.Is(err, ErrStoreCapped) && news != nil {
		// Merged: the campaign ends after this batch.
		p.reachedCap, err = err, nil
	}
	if err == nil {
		var res []coverage.BatchResult
		if res, err = p.index.AddNews(news, ids); err == nil {
			if b := int64(p.index.Bytes()); p.indexCap > 0 && b > p.indexCap && p.reachedCap == nil {
				p.reachedCap = fmt.Errorf("%w (%d MB, the share %d MB): continue with a larger memory budget", ErrIndexCapped, b>>20, p.indexCap>>20)
			}
			return res, nil
		}
	}
	return nil, fmt.Errorf("store parts: %w", err)
}

func (p *partedStore) save(ctx context.Context, write func() error) error {
	// The last checkpoint is written however the campaign ended.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Minute)
	defer cancel()
	parts, err := p.parts.SnapshotParts(sctx)
	if err != nil {
		return fmt.Errorf("store parts: %w", err)
	}
	// The checkpoint holds the parts as they come, copied into it: the
	// coordinator decodes none, and holds none. The report is the
	// index's, which answers every count; LoadReport reads the whole
	// store.
	p.rep.writeStore = func(w io.Writer) (int64, error) { return coverage.WriteSplitFrom(w, p.index, parts) }
	defer func() { p.rep.writeStore = nil }()
	return write()
}

func (p *partedStore) capped() error                   { return p.reachedCap }
func (p *partedStore) checkpointPeriod() time.Duration { return p.pace.period }

func (p *partedStore) checkpointed(took time.Duration) {
	p.log.Debug("store parts: checkpoint", "took", took, "next_after", p.pace.record(took))
}

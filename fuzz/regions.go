package fuzz

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/coverage"
)

// RegionStore is the region feedback of the fuzz harnesses: a coverage.Store
// of the states of S reached by every input run so far, persisted in a file
// (coverage's WriteTo/ReadFrom checkpoint) that several fuzzing processes
// share. go-fuzz and `go test -fuzz` run one process per core, so Save merges
// what this process found since its last save into the file under an
// exclusive lock (flock on Unix) and adopts the merged store, so each process
// also learns the others' regions.
//
// Saving is throttled (SaveEvery) to keep it cheap; the pools keep one visit
// per state (PoolSize 1) since only regions matter here.
type RegionStore struct {
	// K is the region size whose novelty counts as new (default 16; a new
	// region at K implies new regions at every smaller size).
	K int
	// SaveEvery throttles Save (default 10 s); Flush saves regardless.
	SaveEvery time.Duration

	mu       sync.Mutex
	path     string
	space    coverage.Space
	seed     uint64
	st       *coverage.Store // everything known: the file at last sync + our adds
	delta    *coverage.Store // our adds since the last sync
	dirty    bool
	lastSave time.Time
	ids      uint64
}

func regionStoreOptions(seed uint64) coverage.Options {
	return coverage.Options{PoolSize: 1, Seed: seed}
}

// OpenRegionStore opens the store persisted at path (created on the first
// save if missing). An existing file over another state space is an error.
// An empty path keeps the store in memory only.
func OpenRegionStore(path string, space coverage.Space, seed uint64) (*RegionStore, error) {
	st, err := coverage.NewStore(space, regionStoreOptions(seed))
	if err != nil {
		return nil, err
	}
	delta, _ := coverage.NewStore(space, regionStoreOptions(seed))
	r := &RegionStore{K: 16, SaveEvery: 10 * time.Second, path: path, space: space, seed: seed,
		st: st, delta: delta, lastSave: time.Now()}
	if path != "" {
		disk, err := r.load()
		if err != nil {
			return nil, err
		}
		if disk != nil {
			r.st = disk
		}
	}
	return r, nil
}

// load reads the file, or returns nil if there is none.
func (r *RegionStore) load() (*coverage.Store, error) {
	f, err := os.Open(r.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := coverage.ReadStore(bufio.NewReader(f))
	if err != nil {
		return nil, fmt.Errorf("region store %s: %w", r.path, err)
	}
	if !st.Space().Equal(r.space) {
		return nil, fmt.Errorf("region store %s: its state space differs from the campaign's (remove it to start over)", r.path)
	}
	return st, nil
}

// Path is the file of the store ("" if in memory).
func (r *RegionStore) Path() string { return r.path }

// Add records the states of one run's batch and returns the region sizes at
// which they reached new regions (see coverage.Store.AddBatch).
func (r *RegionStore) Add(b *coverage.Batch) coverage.Levels {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ids++
	_, m := r.st.AddBatch(b, r.ids)
	if m != 0 {
		r.delta.AddBatch(b, r.ids)
		r.dirty = true
	}
	return m
}

// New reports whether m contains a new region at size K.
func (r *RegionStore) New(m coverage.Levels) bool {
	k := r.K
	if k <= 0 {
		k = 16
	}
	return m.Has(min(k, r.space.MaxK()))
}

// Regions is the number of visited regions at size k known to this process.
func (r *RegionStore) Regions(k int) uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.st.VisitedRegions(k)
}

// Store returns the underlying store; do not use it concurrently with Add.
func (r *RegionStore) Store() *coverage.Store { return r.st }

// Save persists the new regions if SaveEvery has passed since the last save.
func (r *RegionStore) Save() error {
	r.mu.Lock()
	due := r.dirty && time.Since(r.lastSave) >= r.SaveEvery
	r.mu.Unlock()
	if !due {
		return nil
	}
	return r.Flush()
}

// Flush merges the new regions into the file now.
func (r *RegionStore) Flush() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastSave = time.Now()
	if r.path == "" || !r.dirty {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(r.path), 0o755); err != nil {
		return err
	}
	unlock, err := lockFile(r.path + ".lock")
	if err != nil {
		return err
	}
	defer unlock()
	disk, err := r.load()
	if err != nil {
		return err
	}
	if disk == nil {
		disk, _ = coverage.NewStore(r.space, regionStoreOptions(r.seed))
	}
	if err := disk.Merge(r.delta); err != nil {
		return err
	}
	if err := corpus.WriteAtomic(r.path, func(w io.Writer) error {
		_, err := disk.WriteTo(w)
		return err
	}); err != nil {
		return err
	}
	r.st = disk
	r.delta, _ = coverage.NewStore(r.space, regionStoreOptions(r.seed))
	r.dirty = false
	return nil
}

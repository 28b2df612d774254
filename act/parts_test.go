package act

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/actfuzz/actfuzz/coverage"
)

// partsExec is an Executor that keeps the store's parts as act/cluster
// does, in this process: it runs each simulation, sends its states as
// shares (encoded, with their SHA-256 in the Result) and merges them into
// parts that it loads and snapshots through their encodings.
type partsExec struct {
	r      *Runner
	space  coverage.Space
	shards int
	out    chan Result

	mu     sync.Mutex
	shares map[[2]int][]byte // (index, part) → encoded share
	parts  []*coverage.Store
	merges int
	// poolCalls counts the Pools calls: one a part that has some of a
	// selection's draws.
	poolCalls int
}

func (x *partsExec) Dispatch(base int, gs []Config) {
	for i, g := range gs {
		b, _ := coverage.NewBatch(x.space)
		o := x.r.Run(context.Background(), g, b)
		m := Result{Index: base + i, Mean: o.Mean, Best: o.Best, BestAt: o.BestAt, Hits: o.Hits, Fault: o.Fault, Capped: o.Capped, Events: o.Result.Events}
		share, _ := coverage.NewBatch(x.space)
		var pos []uint32
		x.mu.Lock()
		for j := range len(x.parts) {
			pos = b.Share(share, pos, j, len(x.parts), x.shards)
			enc := coverage.AppendShare(nil, share, pos)
			sum := sha256.Sum256(enc)
			x.shares[[2]int{base + i, j}] = enc
			m.Shares = append(m.Shares, sum[:])
		}
		x.mu.Unlock()
		x.out <- m
	}
}
func (x *partsExec) Results() <-chan Result { return x.out }
func (x *partsExec) Failed() <-chan error   { return nil }
func (x *partsExec) Merged(int)             {}
func (x *partsExec) Close()                 {}

func (x *partsExec) StoreParts() int { return len(x.parts) }

func (x *partsExec) LoadParts(_ context.Context, ps []coverage.PartSource, oorLimit int) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if len(ps) != len(x.parts) {
		return fmt.Errorf("%d parts for %d", len(ps), len(x.parts))
	}
	for j, p := range ps {
		r, err := p.Open()
		if err != nil {
			return err
		}
		q, err := coverage.ReadPart(r, j, len(ps))
		r.Close()
		if err != nil {
			return err
		}
		q.LimitOutOfRange(oorLimit)
		x.parts[j] = q
	}
	return nil
}

func (x *partsExec) MergeParts(_ context.Context, items []PartItem) ([][]coverage.PartNews, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.merges++
	news := make([][]coverage.PartNews, len(items))
	ids := make([]uint64, len(items))
	for j, p := range x.parts {
		bs := make([]*coverage.Batch, len(items))
		pos := make([][]uint32, len(items))
		for i, it := range items {
			ids[i] = it.Config
			if it.Local != nil {
				bs[i], _ = coverage.NewBatch(x.space)
				pos[i] = it.Local.Share(bs[i], nil, j, len(x.parts), x.shards)
				continue
			}
			enc := x.shares[[2]int{it.Index, j}]
			if sum := sha256.Sum256(enc); !bytes.Equal(sum[:], it.Shares[j]) {
				return nil, fmt.Errorf("share %d of configuration %d: wrong sum", j, it.Index)
			}
			bs[i], _ = coverage.NewBatch(x.space)
			var err error
			if pos[i], err = bs[i].UnmarshalShare(enc, nil); err != nil {
				return nil, err
			}
		}
		got, err := p.AddShares(bs, pos, ids)
		if err != nil {
			return nil, err
		}
		for i := range got {
			enc, _ := got[i].AppendBinary(nil)
			var n coverage.PartNews
			if err := n.UnmarshalBinary(enc); err != nil {
				return nil, err
			}
			news[i] = append(news[i], n)
		}
	}
	return news, nil
}

func (x *partsExec) SnapshotParts(context.Context) ([]coverage.PartSource, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	var out []coverage.PartSource
	for _, p := range x.parts {
		var buf bytes.Buffer
		if _, err := p.WriteTo(&buf); err != nil {
			return nil, err
		}
		b := buf.Bytes()
		out = append(out, coverage.PartSource{Size: int64(len(b)), Open: func() (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(b)), nil
		}})
	}
	return out, nil
}

func (x *partsExec) Pools(part int, keys [][]uint64) ([][]coverage.Visit, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.poolCalls++
	return coverage.Parts(x.parts).Pools(part, keys)
}

func (x *partsExec) Count(part int, key []uint64) (uint64, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return coverage.Parts(x.parts).Count(part, key)
}

func newPartsExec(t *testing.T, c *Campaign, parts int) (func(context.Context, CampaignHeader) (Executor, error), **partsExec) {
	var last *partsExec
	return func(context.Context, CampaignHeader) (Executor, error) {
		r, err := NewRunner(c, nil, c.Space)
		if err != nil {
			t.Fatal(err)
		}
		last = &partsExec{r: r, space: c.Space, shards: coverage.DefaultShards, out: make(chan Result, 64*64),
			shares: map[[2]int][]byte{}, parts: make([]*coverage.Store, parts)}
		return last, nil
	}, &last
}

// storeBytes is the whole store of the campaign in dir, as its
// checkpoint holds it (with store parts, the report's Store is the
// index), in the whole store's encoding.
func storeBytes(t *testing.T, dir string) []byte {
	t.Helper()
	r, err := LoadReport(dir, "act")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := r.Store.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// A campaign whose store is split into parts kept by the executor (as
// act/cluster's store processes keep them) ends exactly as one with a
// whole store: the same store byte for byte, steps, finding groups and
// seed files; and so does one interrupted and resumed.
func TestRunWithStoreParts(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    *Campaign
	}{
		{"reno", smallCampaign(t)},
		{"symbolic", symCampaign(t)}, // its branches' states are merged from here
	} {
		t.Run(tc.name, func(t *testing.T) { testRunWithStoreParts(t, tc.c) })
	}
}

func testRunWithStoreParts(t *testing.T, c *Campaign) {
	const budget = 448
	wholeDir := t.TempDir()
	whole, err := Run(context.Background(), c, Options{Budget: budget, Out: wholeDir, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	seedFiles := func(r *Report, dir string) (out []string) {
		for _, g := range r.Findings {
			rel, _ := filepath.Rel(dir, g.Path)
			b, _ := os.ReadFile(g.Path)
			out = append(out, rel+"\n"+string(b))
		}
		return out
	}
	check := func(name string, r *Report, dir string) {
		t.Helper()
		if r.Sims != whole.Sims || !bytes.Equal(storeBytes(t, dir), storeBytes(t, wholeDir)) {
			t.Fatalf("%s: %d sims, store differs from the whole store's (%d sims)", name, r.Sims, whole.Sims)
		}
		for _, k := range c.Space.Ks() {
			if a, b := r.Store.VisitedRegions(k), whole.Store.VisitedRegions(k); a != b {
				t.Fatalf("%s: the report's store has %d regions at k=%d, the whole store %d", name, a, k, b)
			}
		}
		for s, n := range whole.StepSims {
			if r.StepSims[s] != n {
				t.Fatalf("%s: steps %v, whole %v", name, r.StepSims, whole.StepSims)
			}
		}
		if !slices.Equal(seedFiles(r, dir), seedFiles(whole, wholeDir)) {
			t.Fatalf("%s: findings or seed files differ", name)
		}
	}
	for _, parts := range []int{1, 3} {
		dir := t.TempDir()
		mk, x := newPartsExec(t, c, parts)
		rep, err := Run(context.Background(), c, Options{Budget: budget, Out: dir, Executor: mk, StoreParts: parts})
		if err != nil {
			t.Fatal(err)
		}
		if (*x).merges == 0 {
			t.Fatal("nothing merged through the parts")
		}
		if rep.Symbolic != nil && rep.Symbolic.Windows == 0 {
			t.Fatal("no symbolic window ran")
		}
		check(fmt.Sprintf("%d parts", parts), rep, dir)
	}

	// Cut at 192 simulations, resumed with the checkpoint's part count
	// and with others (the checkpoint's parts are then split again one
	// new part at a time).
	for _, again := range []int{2, 3, 1} {
		cut := t.TempDir()
		ctx, cancel := context.WithCancel(context.Background())
		mk, _ := newPartsExec(t, c, 2)
		if _, err := Run(ctx, c, Options{Budget: budget, Out: cut, Executor: mk, StoreParts: 2, CheckpointEvery: 1,
			Progress: func(st Status) {
				if st.Sims >= 192 {
					cancel()
				}
			}}); err != nil {
			t.Fatal(err)
		}
		// A file that a coordinator killed while it loaded parts made
		// again would have left.
		if err := os.WriteFile(filepath.Join(cut, ".resplit-123"), []byte("stale"), 0o644); err != nil {
			t.Fatal(err)
		}
		mk, _ = newPartsExec(t, c, again)
		resumed, err := Run(context.Background(), c, Options{Budget: budget, Out: cut, Executor: mk, StoreParts: again, Resume: true})
		if err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("2 parts, resumed with %d", again), resumed, cut)
		if left, _ := filepath.Glob(filepath.Join(cut, ".resplit-*")); len(left) != 0 {
			t.Fatalf("resumed with %d parts: %q left", again, left)
		}
	}

	mk, _ := newPartsExec(t, c, 2)
	if _, err := Run(context.Background(), c, Options{Budget: 64, Executor: mk, StoreParts: 3}); err == nil {
		t.Error("3 store parts ran on an executor of 2")
	}
}

// A store split into parts cannot coarsen: the memory budget caps the
// coordinator's index instead. The merge that takes it over the store's
// share is the campaign's last, with a checkpoint and ErrIndexCapped;
// resumed without a budget, the campaign ends as a whole store's run.
func TestStorePartsIndexCapped(t *testing.T) {
	c := smallCampaign(t)
	const budget = 448
	wholeDir := t.TempDir()
	whole, err := Run(context.Background(), c, Options{Budget: budget, Out: wholeDir, Workers: 2, Memory: -1})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mk, _ := newPartsExec(t, c, 2)
	first, err := Run(context.Background(), c, Options{Budget: budget, Out: dir, Executor: mk, StoreParts: 2, Memory: 1000})
	if !errors.Is(err, ErrIndexCapped) || !errors.Is(err, ErrStoreCapped) || !strings.Contains(err.Error(), "larger memory budget") {
		t.Fatalf("want the index's cap, got %v", err)
	}
	if first == nil || first.Sims != batchSize {
		t.Fatalf("the capped campaign ran %v simulations, want one batch", first)
	}
	saved, err := LoadReport(dir, "act")
	if err != nil || saved.Sims != first.Sims {
		t.Fatalf("the checkpoint after the cap: %v (%v), want %d simulations", saved, err, first.Sims)
	}
	mk, _ = newPartsExec(t, c, 2)
	rep, err := Run(context.Background(), c, Options{Budget: budget, Out: dir, Executor: mk, StoreParts: 2, Resume: true, Memory: -1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sims != whole.Sims || !bytes.Equal(storeBytes(t, dir), storeBytes(t, wholeDir)) {
		t.Fatalf("resumed: %d simulations, store differs from the whole run's (%d)", rep.Sims, whole.Sims)
	}
	// The campaign's budget caps the index when the file gives it, not
	// as its default.
	for _, given := range []bool{false, true} {
		d := *c
		d.Memory, d.MemoryGiven = 1000, given
		mk, _ = newPartsExec(t, &d, 2)
		rep, err := Run(context.Background(), &d, Options{Budget: 2 * batchSize, Executor: mk, StoreParts: 2})
		if capped := errors.Is(err, ErrIndexCapped); capped != given || rep == nil || !given && (err != nil || rep.Sims != 2*batchSize) {
			t.Fatalf("memory: given %v: %v, %v", given, rep, err)
		}
	}
}

package coverage

import (
	"math/rand/v2"
	"runtime"
	"sync"
)

// Shards. Every table of the store (the pooled states and the region set
// of every level) is split into a fixed number of shards by the hash of its
// own key, so that a merge can insert into all shards at once while each
// shard sees its keys in exactly the order a serial merge would: keys equal
// at one level always land in the same shard. The shard count is a property
// of the store (saved in checkpoints), never of the machine, so results do
// not depend on the number of cores or workers.
const (
	// DefaultShards is the shard count of a new store.
	DefaultShards = 16
	// maxShards bounds the shard count; a StateRef holds the shard number
	// in shardBits bits above its local index.
	shardBits = 4
	maxShards = 1 << shardBits
	localBits = 31 - shardBits
	localMask = 1<<localBits - 1
)

// shardOf maps a key hash to a shard. Table slots use the hash's high bits
// (multiply-shift) and tags its low byte, so bits 8… are free for this.
func shardOf(h uint64, mask uint64) int { return int((h >> 8) & mask) }

// sset is a set of keys split into shards, one table each.
type sset struct{ t []table }

func newSSet(n, w, kb int) sset {
	ss := sset{t: make([]table, n)}
	for i := range ss.t {
		ss.t[i] = newTable(w, kb)
	}
	return ss
}

func (ss *sset) len() int {
	n := 0
	for i := range ss.t {
		n += ss.t[i].n
	}
	return n
}

func (ss *sset) bytes() int {
	b := 0
	for i := range ss.t {
		b += ss.t[i].bytes()
	}
	return b
}

// shard is one shard of the pooled states: its table, counts and pools, the
// escape list of their visits and its own reservoir PRNG.
type shard struct {
	st  states
	vc  visitCodec
	src *rand.PCG
	rng *rand.Rand
	// est[l] estimates the visited regions at level l < floor that this
	// shard's merges have seen (HyperLogLog; the union over shards is the
	// store's estimate).
	est []*sketch
}

func newShard(i int, seed uint64, w, kb, poolSize int) *shard {
	sh := &shard{st: newStates(w, kb, poolSize)}
	// Shard 0 keeps the stream a single-shard store always had.
	sh.src = rand.NewPCG(seed, seed^0x6a09e667f3bcc909+uint64(i)*0x9e3779b97f4a7c15)
	sh.rng = rand.New(sh.src)
	return sh
}

// parallel runs f(i) for i in [0, n) on up to GOMAXPROCS goroutines, or
// inline when the work is small; f must touch only shard i's data.
func parallel(n int, small bool, f func(i int)) {
	procs := min(runtime.GOMAXPROCS(0), n)
	if small || procs <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var wg sync.WaitGroup
	var next sync.Mutex
	i := 0
	for range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				next.Lock()
				j := i
				i++
				next.Unlock()
				if j >= n {
					return
				}
				f(j)
			}
		}()
	}
	wg.Wait()
}

package gvisor

import (
	"encoding/binary"
	"math/rand/v2"
	"sync"

	"github.com/actfuzz/actfuzz/netenv/sim"
)

// streamIndexBase separates the gVisor stacks' PRNG streams (sim.StreamMisc,
// index base+k) from anything else of a run.
const streamIndexBase = 1 << 20

// detRand is a thread-safe deterministic source derived from the run seed.
// It serves as both of a stack's random sources: the "insecure" math/rand
// source (processor hashing, endpoint hashes) and the "secure" reader
// (initial sequence numbers, timestamp offsets, ephemeral ports, SYN cookie
// secrets), so that the seed e decides everything gVisor draws.
type detRand struct {
	mu sync.Mutex
	r  *rand.Rand
}

func newDetRand(seed uint64, index int) *detRand {
	return &detRand{r: sim.NewRand(seed, sim.StreamMisc, streamIndexBase+uint64(index))}
}

// Int63 implements math/rand.Source.
func (d *detRand) Int63() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.r.Int64()
}

// Uint64 implements math/rand.Source64.
func (d *detRand) Uint64() uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.r.Uint64()
}

// Seed implements math/rand.Source; the stream is fixed by the run seed.
func (d *detRand) Seed(int64) {}

// Read implements io.Reader for stack.Options.SecureRNG.
func (d *detRand) Read(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var b [8]byte
	for i := 0; i < len(p); i += 8 {
		binary.LittleEndian.PutUint64(b[:], d.r.Uint64())
		copy(p[i:], b[:])
	}
	return len(p), nil
}

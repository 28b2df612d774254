package fuzz

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/netenv"
)

// SeedInputs reads every seed file (*.json, recursively, in lexical order)
// under dir — a campaign's output directory, its corpus/ or findings/ — and
// encodes each configuration G as a fuzzer input for campaign c. Files that
// are not valid seeds are skipped and counted. The seed's own ccai, bytes
// and topology are not part of the input: the fuzzers run G under c.
func SeedInputs(c *act.Campaign, dir string) (inputs [][]byte, skipped int, err error) {
	var paths []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".json") {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	sort.Strings(paths)
	for _, p := range paths {
		s, err := corpus.ReadSeed(p)
		if err != nil {
			skipped++
			continue
		}
		inputs = append(inputs, Encode(c, act.Config{Seed: s.Seed, Schedule: s.Schedule}))
	}
	return inputs, skipped, nil
}

// DefaultInputs is a small built-in seed corpus for campaign c: the default
// environment, a two-phase schedule (a lossy, noisy phase after 2 s), the
// all-ones input (every parameter at its maximum, four phases) and three
// random draws. The all-zeros input (every parameter at its minimum) is
// left out: with the default P its application rate of 1 kbit/s makes a
// run last hours of simulated time, and mutations of it dominate a
// fuzzer's time without reaching S.
func DefaultInputs(c *act.Campaign) [][]byte {
	def := act.Config{Seed: 1, Schedule: netenv.Constant(netenv.DefaultEnv())}
	lossy := netenv.DefaultEnv()
	lossy.Loss, lossy.QShape, lossy.QScale = 0.01, 2, 1.5
	two := act.Config{Seed: 2, Schedule: netenv.Schedule{{Env: netenv.DefaultEnv(), Until: 2 * time.Second}, {Env: lossy}}}
	ff := make([]byte, MaxInputLen)
	for i := range ff {
		ff[i] = 0xff
	}
	out := [][]byte{Encode(c, def), Encode(c, two), ff}
	rng := rand.New(rand.NewPCG(10, 10))
	for i := 0; i < 3; i++ {
		out = append(out, randomInput(rng))
	}
	return out
}

func inputName(data []byte) string {
	h := sha1.Sum(data)
	return hex.EncodeToString(h[:])
}

// WriteGoFuzzCorpus writes inputs into a go-fuzz corpus directory (one file
// per input, named by its SHA-1 as go-fuzz does) and returns how many were
// new.
func WriteGoFuzzCorpus(dir string, inputs [][]byte) (int, error) {
	return writeCorpus(dir, inputs, func(b []byte) []byte { return b })
}

// WriteNativeCorpus writes inputs for a `go test -fuzz` target taking one
// []byte argument, in the testing package's corpus file format, into dir
// (testdata/fuzz/<FuzzName> for a seed corpus that plain `go test` also
// runs, or $(go env GOCACHE)/fuzz/<module path>/fuzz/<FuzzName>).
func WriteNativeCorpus(dir string, inputs [][]byte) (int, error) {
	return writeCorpus(dir, inputs, NativeCorpusFile)
}

// NativeCorpusFile is the `go test fuzz v1` file for one []byte input.
func NativeCorpusFile(data []byte) []byte {
	return fmt.Appendf(nil, "go test fuzz v1\n[]byte(%q)\n", data)
}

func writeCorpus(dir string, inputs [][]byte, format func([]byte) []byte) (int, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	n := 0
	for _, in := range inputs {
		b := format(in)
		p := filepath.Join(dir, inputName(b))
		if _, err := os.Stat(p); err == nil {
			continue
		}
		if err := corpus.WriteFileAtomic(p, b); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

package coverage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
)

func checkpointStore(t testing.TB) *Store {
	sp := DefaultSpace().With(Var{Name: "prior_cwnd", Min: 1, Max: 1024, Step: 1})
	s := mustStore(t, sp, Options{PoolSize: 3, Seed: 5})
	rng := rand.New(rand.NewPCG(1, 1))
	for i := range 3000 {
		st := randomState(rng, sp)
		if i%10 == 0 {
			st[1] = 0x7fffffff
		}
		s.Add(st, Visit{Config: uint64(i % 40), At: int64(i) << 34})
		s.Add(st, Visit{Config: uint64(i%40) + 1000, At: -int64(i)})
	}
	return s
}

func sameStore(t *testing.T, a, b *Store) {
	t.Helper()
	if !a.Space().Equal(b.Space()) || a.Options() != b.Options() {
		t.Fatal("space or options differ")
	}
	if !slices.Equal(a.Snapshot("", 0).Visited, b.Snapshot("", 0).Visited) {
		t.Fatal("visited counts differ")
	}
	ao, av := a.OutOfRange()
	bo, bv := b.OutOfRange()
	if ao != bo || av != bv || a.Visits() != b.Visits() || a.Configs() != b.Configs() {
		t.Fatal("totals differ")
	}
	for _, seq := range []func(*Store) []StateRef{
		func(s *Store) []StateRef { return slices.Collect(s.States()) },
		func(s *Store) []StateRef { return slices.Collect(s.OutOfRangeStates()) },
	} {
		ra, rb := seq(a), seq(b)
		if !slices.Equal(ra, rb) {
			t.Fatal("refs differ")
		}
		for _, r := range ra {
			if !slices.Equal(a.State(r), b.State(r)) || a.Count(r) != b.Count(r) || !slices.Equal(a.Pool(r), b.Pool(r)) {
				t.Fatalf("state %#x differs", r)
			}
		}
	}
}

func TestCheckpointRoundTrip(t *testing.T) {
	s := checkpointStore(t)
	var buf bytes.Buffer
	n, err := s.WriteTo(&buf)
	if err != nil || n != int64(buf.Len()) {
		t.Fatalf("WriteTo = %d, %v (buffer %d)", n, err, buf.Len())
	}
	data := buf.Bytes()
	r, err := ReadStore(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	sameStore(t, s, r)
	// The PRNG state is restored: further identical adds give identical pools.
	rng1, rng2 := rand.New(rand.NewPCG(9, 9)), rand.New(rand.NewPCG(9, 9))
	fillSynth(s, rng1, 5, 300, 50)
	fillSynth(r, rng2, 5, 300, 50)
	sameStore(t, s, r)
	t.Logf("checkpoint of %d states: %d bytes", s.Len(), len(data))
}

func TestCheckpointCorrupt(t *testing.T) {
	s := checkpointStore(t)
	var buf bytes.Buffer
	if _, err := s.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	for _, cut := range []int{0, 3, 8, 50, len(data) / 2, len(data) - 5, len(data) - 1} {
		if _, err := ReadStore(bytes.NewReader(data[:cut])); err == nil {
			t.Errorf("truncated at %d of %d: no error", cut, len(data))
		} else if cut > 8 && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Logf("truncated at %d: %v", cut, err)
		}
	}
	for _, at := range []int{10, len(data) / 3, len(data) - 10} {
		bad := slices.Clone(data)
		bad[at] ^= 0x40
		if _, err := ReadStore(bytes.NewReader(bad)); err == nil {
			t.Errorf("byte %d flipped: no error", at)
		}
	}
	bad := slices.Clone(data)
	bad[0] = 'X'
	if _, err := ReadStore(bytes.NewReader(bad)); err == nil {
		t.Error("bad magic accepted")
	}
	// A failed read leaves the store unchanged.
	keep := checkpointStore(t)
	if _, err := keep.ReadFrom(bytes.NewReader(data[:len(data)/2])); err == nil {
		t.Fatal("no error")
	}
	sameStore(t, s, keep)
}

func TestCheckpointEmpty(t *testing.T) {
	s := mustStore(t, DefaultSpace(), Options{})
	var buf bytes.Buffer
	if _, err := s.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	r, err := ReadStore(&buf)
	if err != nil {
		t.Fatal(err)
	}
	sameStore(t, s, r)
}

// TestCheckpointOldVersions: a checkpoint of an older version (written
// by that build: testdata/checkpoint-vN.bin, a store of 4 synthetic
// simulations and states outside S, seed 2; version 3 wrote those states
// as they are, version 4 as deltas, version 5 compresses what version 4
// wrote) reads as the store that wrote it, and is written again in the
// current version.
func TestCheckpointOldVersions(t *testing.T) {
	for _, tc := range []struct {
		version uint16
		outside [][]float64 // the states outside S added after the synthetic ones
		visits  []Visit
	}{
		{2, [][]float64{{1e12, 1e12, 1, 1, 0}}, []Visit{{Config: 3, At: 7}}},
		{3, [][]float64{{1e12, 1e12, 1, 1, 0}, {2e12, 1e12, 1, 1, 0}, {1e12, 3e12, 1, 1, 0}, {1e12, 1e12, 1, 1, 0}},
			[]Visit{{Config: 3, At: 7}, {Config: 1, At: 9}, {Config: 2, At: 5}, {Config: 0, At: 3}}},
		{4, [][]float64{{1e12, 1e12, 1, 1, 0}, {2e12, 1e12, 1, 1, 0}, {1e12, 3e12, 1, 1, 0}, {1e12, 1e12, 1, 1, 0}},
			[]Visit{{Config: 3, At: 7}, {Config: 1, At: 9}, {Config: 2, At: 5}, {Config: 0, At: 3}}},
	} {
		t.Run(fmt.Sprint("v", tc.version), func(t *testing.T) {
			old, err := os.ReadFile(fmt.Sprintf("testdata/checkpoint-v%d.bin", tc.version))
			if err != nil {
				t.Fatal(err)
			}
			if v := binary.LittleEndian.Uint16(old[len(codecMagic):]); v != tc.version {
				t.Fatalf("the file is version %d", v)
			}
			s, err := ReadStore(bytes.NewReader(old))
			if err != nil {
				t.Fatal(err)
			}
			want := mustStore(t, DefaultSpace(), Options{Seed: 2})
			fillSynth(want, rand.New(rand.NewPCG(5, 5)), 4, 200, 0)
			for i, x := range tc.outside {
				want.Add(x, tc.visits[i])
			}
			if n, _ := want.OutOfRange(); n == 0 {
				t.Fatal("no state outside S: the test checks nothing of their encoding")
			}
			var got, exp bytes.Buffer
			if _, err := s.WriteTo(&got); err != nil {
				t.Fatal(err)
			}
			if _, err := want.WriteTo(&exp); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), exp.Bytes()) {
				t.Fatalf("the version %d checkpoint does not read as the store that wrote it", tc.version)
			}
		})
	}
}

// TestCheckpointKeepsDropped: the visits of states outside S not kept
// (the out-of-range cap) are counted across a checkpoint, whole or split,
// however it is read.
func TestCheckpointKeepsDropped(t *testing.T) {
	s := mustStore(t, DefaultSpace(), Options{Seed: 3})
	s.LimitOutOfRange(2)
	for i := range 5 {
		s.Add([]float64{1e12 + float64(i), 1e12, 1, 1, 0}, Visit{Config: uint64(i), At: 1})
	}
	fillSynth(s, rand.New(rand.NewPCG(1, 1)), 3, 100, 10)
	d := s.OutOfRangeDropped()
	if d < 3 {
		t.Fatalf("%d dropped, want at least 3", d)
	}
	var whole bytes.Buffer
	if _, err := s.WriteTo(&whole); err != nil {
		t.Fatal(err)
	}
	r, err := ReadStore(bytes.NewReader(whole.Bytes()))
	if err != nil || r.OutOfRangeDropped() != d {
		t.Fatalf("whole: %d dropped (%v)", r.OutOfRangeDropped(), err)
	}
	index, blobs, err := SplitEncoded(r, 2)
	if err != nil || index.OutOfRangeDropped() != d {
		t.Fatalf("split: %d dropped (%v)", index.OutOfRangeDropped(), err)
	}
	var split bytes.Buffer
	if _, err := WriteSplit(&split, index, blobs); err != nil {
		t.Fatal(err)
	}
	w, err := ReadCheckpoint(bytes.NewReader(split.Bytes()))
	if err != nil || w.OutOfRangeDropped() != d {
		t.Fatalf("split checkpoint read whole: %d dropped (%v)", w.OutOfRangeDropped(), err)
	}
	i2, _, err := ReadSplit(bytes.NewReader(split.Bytes()), int64(split.Len()), 2)
	if err != nil || i2.OutOfRangeDropped() != d {
		t.Fatalf("split checkpoint read split: %d dropped (%v)", i2.OutOfRangeDropped(), err)
	}
}

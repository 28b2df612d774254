package fuzz

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime/coverage"
	"slices"
	"sync"
)

// FeedbackGoCover is real Go code coverage: the statement-block counters
// that `go build -cover` inserts, read with runtime/coverage between runs.
// It needs a binary (or test binary) built with -cover -covermode=atomic
// and a -coverpkg that names the code under test and not the harness, e.g.
//
//	go test -cover -covermode=atomic \
//	  -coverpkg=github.com/actfuzz/actfuzz/netenv/...,github.com/actfuzz/actfuzz/ccai ./fuzz ...
//
// The counters are global to the process, so the simulations of a
// FeedbackGoCover run are serialized (clear the counters, run one
// simulation, read them) whatever the number of workers; the code the
// harness runs meanwhile on other goroutines is counted too if -coverpkg
// instruments it. Features are (package, function, block) with AFL's
// hit-count buckets, hashed into the same 64 Ki map as the proxy.
const FeedbackGoCover Feedback = "gocover"

var goCov struct {
	sync.Mutex
	once sync.Once
	err  error
	buf  bytes.Buffer
}

// GoCoverAvailable reports why FeedbackGoCover cannot run in this binary,
// or nil if it can.
func GoCoverAvailable() error {
	goCov.once.Do(func() {
		// WriteCounters needs the meta-data hash, computed when the
		// meta-data is first written.
		if err := coverage.WriteMeta(io.Discard); err != nil {
			goCov.err = fmt.Errorf("fuzz: %s feedback needs a binary built with -cover -covermode=atomic: %w", FeedbackGoCover, err)
			return
		}
		if err := coverage.ClearCounters(); err != nil {
			goCov.err = fmt.Errorf("fuzz: %s feedback needs a binary built with -cover -covermode=atomic: %w", FeedbackGoCover, err)
		}
	})
	return goCov.err
}

// goCoverRun clears the process's counters, runs f alone, and returns the
// features of the counters f set.
func goCoverRun(f func()) ([]uint32, error) {
	goCov.Lock()
	defer goCov.Unlock()
	if err := coverage.ClearCounters(); err != nil {
		return nil, err
	}
	f()
	goCov.buf.Reset()
	if err := coverage.WriteCounters(&goCov.buf); err != nil {
		return nil, err
	}
	return parseCounters(goCov.buf.Bytes())
}

// parseCounters reads a counter-data file (internal/coverage's format,
// version 1: a 32-byte header, then per segment a 16-byte header, the
// string and args tables, and per live function nCtrs, pkgID, funcID and
// the counters, all as uint32 or ULEB128 per the header's flavor) and
// returns one feature per non-zero counter: hash(pkg, func, block) in the
// edge map, with the AFL bucket of its count.
func parseCounters(b []byte) ([]uint32, error) {
	const (
		hdrLen    = 32
		segHdrLen = 16
		flavorRaw = 1
		flavorLEB = 2
	)
	bad := errors.New("fuzz: malformed coverage counter data")
	if len(b) < hdrLen || !bytes.Equal(b[:4], []byte{0, 'c', 'w', 'm'}) {
		return nil, bad
	}
	if v := binary.LittleEndian.Uint32(b[4:]); v != 1 {
		return nil, fmt.Errorf("fuzz: coverage counter data version %d, want 1", v)
	}
	flavor, bigEndian := b[24], b[25] != 0
	var order binary.ByteOrder = binary.LittleEndian
	if bigEndian {
		order = binary.BigEndian
	}
	p := b[hdrLen:]
	if len(p) < segHdrLen {
		return nil, bad
	}
	nfn := binary.LittleEndian.Uint64(p)
	skip := uint64(binary.LittleEndian.Uint32(p[8:])) + uint64(binary.LittleEndian.Uint32(p[12:]))
	if uint64(len(p)) < segHdrLen+skip {
		return nil, bad
	}
	p = p[segHdrLen+skip:]
	next := func() (uint32, bool) {
		switch flavor {
		case flavorRaw:
			if len(p) < 4 {
				return 0, false
			}
			v := order.Uint32(p)
			p = p[4:]
			return v, true
		case flavorLEB:
			v, n := binary.Uvarint(p) // ULEB128 is Go's uvarint
			if n <= 0 || v > 1<<32-1 {
				return 0, false
			}
			p = p[n:]
			return uint32(v), true
		}
		return 0, false
	}
	var feats []uint32
	for fn := uint64(0); fn < nfn; fn++ {
		nc, ok1 := next()
		pkg, ok2 := next()
		fid, ok3 := next()
		if !ok1 || !ok2 || !ok3 || uint64(nc) > uint64(len(p)) {
			return nil, bad
		}
		for i := uint32(0); i < nc; i++ {
			v, ok := next()
			if !ok {
				return nil, bad
			}
			if v == 0 {
				continue
			}
			h := uint32(mix(uint64(pkg)<<48^uint64(fid)<<24^uint64(i)) & (EdgeMapSize - 1))
			feats = append(feats, h<<4|bucket(v))
		}
	}
	slices.Sort(feats)
	return slices.Compact(feats), nil
}

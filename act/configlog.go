package act

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"os"
	"slices"
	"time"

	"github.com/actfuzz/actfuzz/netenv"
)

// configLog holds every configuration a campaign chose, in order, on disk:
// the pools of the coverage store name visits by configuration index, so
// any of them may be read again, but keeping them all in memory grew by a
// few hundred bytes per simulation for the whole night. Records are
// appended to a file; an index keeps the offset of every 64th record
// (8 bytes per 64 simulations), and a read reads that block, through a
// one-block cache, and decodes its record alone: the selector's reads are
// random, and decoding all 64 records of a block per read was a third of
// the selector's time in an aged campaign (bench/results/selection-older-campaign-20261124.md). The
// log file is the campaign's coverage/configs-METHOD.log (a checkpoint
// records how many of its records it covers), or a temporary file when the
// campaign writes nothing.
//
// Record: seed u64 | step u8 | phases uvarint | per phase: until varint (ns),
// then each parameter of the netenv table as a float64 bits u64.
type configLog struct {
	f      *os.File
	w      *bufio.Writer
	temp   bool
	n      int
	size   int64   // bytes written (flushed or not)
	blocks []int64 // offset of records 0, 64, 128, …
	// the last block read: its bytes, and where each record starts in
	// them
	cacheBlock int
	raw        []byte
	offs       []int
	buf        []byte
}

const logBlock = 64

// openConfigLog opens (or creates) the log at path, keeping its first keep
// records and dropping the rest (chosen after the checkpoint that is being
// resumed). An empty path makes a temporary log.
func openConfigLog(path string, keep int) (*configLog, error) {
	l := &configLog{cacheBlock: -1}
	var err error
	if path == "" {
		l.f, err = os.CreateTemp("", "actfuzz-configs-*.log")
		l.temp = true
	} else {
		l.f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	}
	if err != nil {
		return nil, fmt.Errorf("configuration log: %w", err)
	}
	if keep > 0 {
		r := bufio.NewReaderSize(l.f, 1<<16)
		var off int64
		for l.n < keep {
			if l.n%logBlock == 0 {
				l.blocks = append(l.blocks, off)
			}
			m, err := skipRecord(r)
			if err != nil {
				l.f.Close()
				return nil, fmt.Errorf("configuration log %s: record %d of %d: %w", path, l.n, keep, err)
			}
			off += m
			l.n++
		}
		l.size = off
	}
	if err := l.f.Truncate(l.size); err != nil {
		l.f.Close()
		return nil, fmt.Errorf("configuration log: %w", err)
	}
	if _, err := l.f.Seek(l.size, io.SeekStart); err != nil {
		l.f.Close()
		return nil, fmt.Errorf("configuration log: %w", err)
	}
	l.w = bufio.NewWriterSize(l.f, 1<<16)
	return l, nil
}

func (l *configLog) len() int { return l.n }

func encodeConfig(b []byte, g Config) []byte {
	b = binary.LittleEndian.AppendUint64(b, g.Seed)
	b = append(b, byte(g.Step))
	b = binary.AppendUvarint(b, uint64(len(g.Schedule)))
	for _, ph := range g.Schedule {
		b = binary.AppendVarint(b, int64(ph.Until))
		for i := range netenv.NumParams {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(ph.Env.Get(i)))
		}
	}
	return b
}

// append adds g as record len().
func (l *configLog) append(g Config) error {
	if l.n%logBlock == 0 {
		l.blocks = append(l.blocks, l.size)
	}
	l.buf = encodeConfig(l.buf[:0], g)
	if _, err := l.w.Write(l.buf); err != nil {
		return fmt.Errorf("configuration log: %w", err)
	}
	l.size += int64(len(l.buf))
	l.n++
	if (l.n-1)/logBlock == l.cacheBlock {
		l.cacheBlock = -1 // the cached block grew
	}
	return nil
}

// get reads record i.
func (l *configLog) get(i int) (Config, error) {
	if i < 0 || i >= l.n {
		return Config{}, fmt.Errorf("configuration log: record %d of %d", i, l.n)
	}
	b := i / logBlock
	if b != l.cacheBlock {
		if err := l.readBlock(b); err != nil {
			return Config{}, err
		}
	}
	r := i % logBlock
	if r >= len(l.offs) {
		return Config{}, fmt.Errorf("configuration log: record %d: its block holds %d records", i, len(l.offs))
	}
	g, _, err := decodeConfig(l.raw[l.offs[r]:])
	if err != nil {
		return Config{}, fmt.Errorf("configuration log: record %d: %w", i, err)
	}
	return g, nil
}

// readBlock reads block b into the cache and finds its records.
func (l *configLog) readBlock(b int) error {
	start, end := l.blocks[b], l.size
	if b+1 < len(l.blocks) {
		end = l.blocks[b+1]
	}
	// Flush only when the block is not all in the file yet: a flush per
	// read was a write per read.
	if end > l.size-int64(l.w.Buffered()) {
		if err := l.w.Flush(); err != nil {
			return fmt.Errorf("configuration log: %w", err)
		}
	}
	l.cacheBlock = -1
	l.raw = slices.Grow(l.raw[:0], int(end-start))[:end-start]
	if _, err := l.f.ReadAt(l.raw, start); err != nil {
		return fmt.Errorf("configuration log: %w", err)
	}
	l.offs = l.offs[:0]
	for off := 0; off < len(l.raw); {
		l.offs = append(l.offs, off)
		m, err := recordLen(l.raw[off:])
		if err != nil {
			return fmt.Errorf("configuration log: record %d: %w", b*logBlock+len(l.offs)-1, err)
		}
		off += m
	}
	l.cacheBlock = b
	return nil
}

var errRecord = errors.New("truncated or malformed record")

func decodeConfig(b []byte) (Config, int, error) {
	var g Config
	if len(b) < 9 {
		return g, 0, errRecord
	}
	g.Seed = binary.LittleEndian.Uint64(b)
	g.Step = Step(b[8])
	p := 9
	n, m := binary.Uvarint(b[p:])
	if m <= 0 || n > 1<<20 {
		return g, 0, errRecord
	}
	p += m
	g.Schedule = make(netenv.Schedule, n)
	for k := range g.Schedule {
		u, m := binary.Varint(b[p:])
		if m <= 0 {
			return g, 0, errRecord
		}
		p += m
		g.Schedule[k].Until = time.Duration(u)
		if len(b)-p < 8*netenv.NumParams {
			return g, 0, errRecord
		}
		for i := range netenv.NumParams {
			g.Schedule[k].Env.Set(i, math.Float64frombits(binary.LittleEndian.Uint64(b[p:])))
			p += 8
		}
	}
	return g, p, nil
}

// recordLen is the length of the record that b starts with.
func recordLen(b []byte) (int, error) {
	if len(b) < 9 {
		return 0, errRecord
	}
	n, m := binary.Uvarint(b[9:])
	if m <= 0 || n > 1<<20 {
		return 0, errRecord
	}
	p := 9 + m
	for range n {
		_, m := binary.Varint(b[p:])
		if m <= 0 {
			return 0, errRecord
		}
		p += m
		if len(b)-p < 8*netenv.NumParams {
			return 0, errRecord
		}
		p += 8 * netenv.NumParams
	}
	return p, nil
}

// uvarintLen is the length of x as a uvarint.
func uvarintLen(x uint64) int { return (bits.Len64(x|1) + 6) / 7 }

// skipRecord reads past one record and returns its length.
func skipRecord(r *bufio.Reader) (int64, error) {
	var hdr [9]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, err
	}
	n, err := binary.ReadUvarint(r)
	if err != nil || n > 1<<20 {
		return 0, errRecord
	}
	size := int64(9 + uvarintLen(n))
	for range n {
		u, err := binary.ReadVarint(r)
		if err != nil {
			return 0, err
		}
		size += int64(uvarintLen(uint64(u)<<1 ^ uint64(u>>63))) // zigzag, as Varint
		if _, err := r.Discard(8 * netenv.NumParams); err != nil {
			return 0, err
		}
		size += int64(8 * netenv.NumParams)
	}
	return size, nil
}

// sync makes every record so far durable, before a checkpoint names them.
func (l *configLog) sync() error {
	if err := l.w.Flush(); err != nil {
		return fmt.Errorf("configuration log: %w", err)
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("configuration log: %w", err)
	}
	return nil
}

// close closes the log, removing it if it was temporary.
func (l *configLog) close() error {
	err := l.w.Flush()
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	if l.temp {
		os.Remove(l.f.Name())
	}
	if err != nil {
		return fmt.Errorf("configuration log: %w", err)
	}
	return nil
}

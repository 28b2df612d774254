package act

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/actfuzz/actfuzz/netenv"
)

// configLog holds every configuration a campaign chose, in order, on disk:
// the pools of the coverage store name visits by configuration index, so
// any of them may be read again, but keeping them all in memory grew by a
// few hundred bytes per simulation for the whole night. Records are
// appended to a file; an index keeps the offset of every 64th record
// (8 bytes per 64 simulations), and a read decodes forward from there,
// through a one-block cache, since the selector's reads are random. The
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
	// the last block read, decoded
	cacheBlock int
	cache      []Config
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
		if err := l.w.Flush(); err != nil {
			return Config{}, fmt.Errorf("configuration log: %w", err)
		}
		end := l.size
		if b+1 < len(l.blocks) {
			end = l.blocks[b+1]
		}
		raw := make([]byte, end-l.blocks[b])
		if _, err := l.f.ReadAt(raw, l.blocks[b]); err != nil {
			return Config{}, fmt.Errorf("configuration log: %w", err)
		}
		l.cache = l.cache[:0]
		for len(raw) > 0 {
			g, m, err := decodeConfig(raw)
			if err != nil {
				return Config{}, fmt.Errorf("configuration log: record %d: %w", b*logBlock+len(l.cache), err)
			}
			l.cache = append(l.cache, g)
			raw = raw[m:]
		}
		l.cacheBlock = b
	}
	return l.cache[i%logBlock], nil
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
	size := int64(9 + len(binary.AppendUvarint(nil, n)))
	for range n {
		u, err := binary.ReadVarint(r)
		if err != nil {
			return 0, err
		}
		size += int64(len(binary.AppendVarint(nil, u)))
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

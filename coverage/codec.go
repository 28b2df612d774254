package coverage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/rand/v2"
)

// Checkpoint format (little endian, varints as in encoding/binary; "δ" is
// the zigzag varint of the difference from the previous value of the same
// field, which keeps trajectory-ordered keys and pool visits to a few bytes):
//
//	magic "ACTCOV" | version u16
//	space: nvars, then per variable name, nvalues, values or min/max/step (f64)
//	pool size, seed u64, shards, pool level, floor level
//	PRNG state of the out-of-range pools, then of every shard
//	visits, out-of-range visits, out-of-range visits not kept (from
//	  version 3: before, a resumed store counted them from 0)
//	configs: n, then n × u64
//	per shard, the pooled regions: n, then per region δ of each key word,
//	  count, and per pool visit δ config, δ time
//	per level l ≥ floor other than the pool level, per shard, the exact
//	  set in insertion order: n, δ key words
//	per level l < floor, the HyperLogLog sketch of its regions: n, registers
//	states outside S: n, then per state one signed granule index per
//	  variable, count, pool visits (config, time); from version 4 each
//	  granule index, config and time as δ (before, as they are: 18.7 of
//	  the 76 MB of a 2,000-simulation make-run checkpoint, 13.7 as δ,
//	  bench/results/checkpoint-size-20261128.md)
//	CRC-32C of everything above, u32
//	from version 5, everything after the version is one zstd frame
//	  (codec_body.go)
//
// Every table is stored in its insertion order, which is what a coarsening
// turns into the order of the pooled regions: a resumed store then
// coarsens into exactly the refs and pools the uninterrupted one has.
const (
	codecMagic   = "ACTCOV"
	codecVersion = 5
	// codecOldest is the oldest version ReadFrom reads.
	codecOldest = 2
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrChecksum is returned by ReadFrom when the checkpoint's checksum does not
// match its contents.
var ErrChecksum = errors.New("coverage: checkpoint checksum mismatch")

// encoder appends to a buffer that it checksums and writes out in large
// chunks: a checkpoint of tens of millions of states is mostly varints of
// one or two bytes, which cost more to write one by one than to encode.
type encoder struct {
	w   io.Writer
	buf []byte
	crc uint32
	err error
}

const encoderChunk = 1 << 20

func (e *encoder) flush() {
	if e.err != nil || len(e.buf) == 0 {
		return
	}
	e.crc = crc32.Update(e.crc, castagnoli, e.buf)
	_, e.err = e.w.Write(e.buf)
	e.buf = e.buf[:0]
}

func (e *encoder) grown() {
	if len(e.buf) >= encoderChunk {
		e.flush()
	}
}

func (e *encoder) bytes(p []byte)   { e.buf = append(e.buf, p...); e.grown() }
func (e *encoder) uvarint(x uint64) { e.buf = binary.AppendUvarint(e.buf, x); e.grown() }
func (e *encoder) varint(x int64)   { e.buf = binary.AppendVarint(e.buf, x); e.grown() }
func (e *encoder) u64(x uint64)     { e.buf = binary.LittleEndian.AppendUint64(e.buf, x); e.grown() }
func (e *encoder) f64(x float64)    { e.u64(math.Float64bits(x)) }
func (e *encoder) str(s string)     { e.uvarint(uint64(len(s))); e.bytes([]byte(s)) }

// keyDelta writes each word of key as the zigzag difference from prev, and
// moves prev to key.
func (e *encoder) keyDelta(key, prev []uint64) {
	for i, x := range key {
		e.varint(int64(x - prev[i]))
		prev[i] = x
	}
}

// WriteTo writes a versioned, checksummed binary checkpoint of the store to w.
// It implements io.WriterTo.
func (s *Store) WriteTo(w io.Writer) (int64, error) {
	if s.role == roleIndex {
		return 0, errors.New("coverage: an index has no checkpoint of its own: write the Join of it and its parts")
	}
	cw := &countingWriter{w: w}
	e := &encoder{w: cw, buf: make([]byte, 0, encoderChunk+64)}
	e.bytes([]byte(codecMagic))
	e.bytes(binary.LittleEndian.AppendUint16(nil, codecVersion))
	zw := e.compressBody()
	e.uvarint(uint64(len(s.ly.sp.Vars)))
	for _, v := range s.ly.sp.Vars {
		e.str(v.Name)
		e.uvarint(uint64(len(v.Values)))
		if v.Categorical() {
			for _, x := range v.Values {
				e.str(x)
			}
		} else {
			e.f64(v.Min)
			e.f64(v.Max)
			e.f64(v.Step)
		}
	}
	e.uvarint(uint64(s.opt.PoolSize))
	e.u64(s.opt.Seed)
	e.uvarint(uint64(s.opt.Shards))
	e.uvarint(uint64(s.pool))
	e.uvarint(uint64(s.floor))
	srcs := []*rand.PCG{s.src}
	for _, sh := range s.pooled {
		srcs = append(srcs, sh.src)
	}
	for _, src := range srcs {
		pcg, _ := src.MarshalBinary()
		e.uvarint(uint64(len(pcg)))
		e.bytes(pcg)
	}
	e.uvarint(s.visits)
	e.uvarint(s.oVisits)
	e.uvarint(s.oorDropped)
	e.uvarint(uint64(len(s.cfgIDs)))
	for _, c := range s.cfgIDs {
		e.u64(c)
	}
	prev := make([]uint64, s.ly.w)
	for _, sh := range s.pooled {
		e.uvarint(uint64(sh.st.len()))
		clear(prev)
		var pc, pat int64
		for r := range sh.st.len() {
			e.keyDelta(sh.st.t.key(uint32(r)), prev)
			e.uvarint(uint64(sh.st.count[r]))
			for i := range sh.st.poolLen(uint32(r)) {
				c, at := sh.vc.dec(sh.st.get(uint32(r), i))
				e.varint(int64(c) - pc)
				e.varint(at - pat)
				pc, pat = int64(c), at
			}
		}
	}
	for l := s.floor; l <= s.ly.L; l++ {
		if l == s.pool {
			continue
		}
		for j := range s.pooled {
			tb := &s.levels[l].t[j]
			e.uvarint(uint64(tb.n))
			clear(prev)
			for r := range tb.n {
				e.keyDelta(tb.key(uint32(r)), prev)
			}
		}
	}
	for l := range s.floor {
		u := newSketch()
		for _, sh := range s.pooled {
			u.merge(sh.est[l])
		}
		e.uvarint(uint64(len(u.reg)))
		e.bytes(u.reg)
	}
	raw := make([]uint64, s.ly.d)
	prevRaw := make([]uint64, s.ly.d)
	e.uvarint(uint64(s.oor.len()))
	var pc, pat int64
	for r := range s.oor.len() {
		s.oc.raw(s.oor.t.key(uint32(r)), raw)
		e.keyDelta(raw, prevRaw)
		e.uvarint(uint64(s.oor.count[r]))
		for i := range s.oor.poolLen(uint32(r)) {
			c, at := s.ovc.dec(s.oor.get(uint32(r), i))
			e.varint(int64(c) - pc)
			e.varint(at - pat)
			pc, pat = int64(c), at
		}
	}
	e.flush()
	if e.err == nil {
		_, e.err = e.w.Write(binary.LittleEndian.AppendUint32(nil, e.crc))
	}
	if err := zw.Close(); err != nil && e.err == nil {
		e.err = fmt.Errorf("coverage: writing checkpoint: %w", err)
	}
	return cw.n, e.err
}

// decoder reads from r through its own buffer, so that the CRC covers exactly
// the bytes consumed.
type decoder struct {
	r      io.Reader
	buf    []byte
	i, end int // unread bytes are buf[i:end]
	crcd   int // buf[:crcd] is already in crc
	crc    uint32
	n      int64
	err    error
	// keysOnly reads the states (pooled and outside S) as keys alone: their
	// counts and pools are checked and dropped, as an index keeps them
	// (ReadSplit).
	keysOnly bool
	// skip, when set, names pooled shards whose states are read and
	// dropped unchecked (a re-split reads each shard whole in one pass,
	// and skips it in the others: ReadSplit).
	skip func(sh int) bool
	// pooledKey, when set, is given the key of each state of the pooled
	// shards (and its shard) instead of the shard's table: an index's
	// slimLoader (ReadSplitIn). The key is the decoder's, reused. It
	// needs keysOnly.
	pooledKey func(sh int, key []uint64) error
	// limit, when not 0, bounds the size of the whole encoding: a table
	// is then reserved for as many keys as it can hold, instead of at most
	// 2^20 and grown, each time by half, while it is read.
	limit int64
}

// newDecoder returns a decoder of r. When r knows how many bytes it has
// left (a bytes.Reader: a store part a store process loads, a part's
// encoding in a split checkpoint), that is the decoder's limit.
func newDecoder(r io.Reader) *decoder {
	d := &decoder{r: r, buf: make([]byte, 1<<16)}
	if l, ok := r.(interface{ Len() int }); ok {
		d.limit = int64(max(l.Len(), 1))
	}
	return d
}

// reserveFor is the number of keys to reserve a table for when a count
// says n: a corrupted count must not allocate more than the encoding
// can hold (a state takes at least 4 bytes: a key word, a count and a
// visit of two varints; a region at least 1).
func (d *decoder) reserveFor(n, minBytes int) int {
	if d.limit > 0 {
		return min(n, int(d.limit/int64(minBytes)))
	}
	return min(n, 1<<20)
}

func (d *decoder) fill() bool {
	if d.err != nil {
		return false
	}
	d.crc = crc32.Update(d.crc, castagnoli, d.buf[d.crcd:d.i])
	copy(d.buf, d.buf[d.i:d.end])
	d.end -= d.i
	d.i, d.crcd = 0, 0
	m, err := d.r.Read(d.buf[d.end:])
	d.end += m
	if m == 0 {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		d.err = fmt.Errorf("coverage: reading checkpoint: %w", err)
		return false
	}
	return true
}

func (d *decoder) ReadByte() (byte, error) {
	for d.i == d.end {
		if !d.fill() {
			return 0, d.err
		}
	}
	d.i++
	d.n++
	return d.buf[d.i-1], nil
}

func (d *decoder) bytes(p []byte) {
	for k := 0; k < len(p); {
		if d.i == d.end && !d.fill() {
			return
		}
		c := copy(p[k:], d.buf[d.i:d.end])
		d.i += c
		d.n += int64(c)
		k += c
	}
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("coverage: reading checkpoint: "+format, args...)
	}
}

// fast reports whether a whole varint is surely in the buffer.
func (d *decoder) fast() bool { return d.end-d.i >= binary.MaxVarintLen64 }

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	if d.fast() {
		if x, m := binary.Uvarint(d.buf[d.i:d.end]); m > 0 {
			d.i += m
			d.n += int64(m)
			return x
		}
	}
	x, err := binary.ReadUvarint(d)
	if err != nil {
		d.fail("%v", err)
	}
	return x
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	if d.fast() {
		if x, m := binary.Varint(d.buf[d.i:d.end]); m > 0 {
			d.i += m
			d.n += int64(m)
			return x
		}
	}
	x, err := binary.ReadVarint(d)
	if err != nil {
		d.fail("%v", err)
	}
	return x
}

func (d *decoder) u64() uint64 {
	var b [8]byte
	d.bytes(b[:])
	return binary.LittleEndian.Uint64(b[:])
}

func (d *decoder) f64() float64 { return math.Float64frombits(d.u64()) }

// keyDelta reads a key written by encoder.keyDelta; key holds the previous
// key and receives the new one.
func (d *decoder) keyDelta(key []uint64) {
	for i := range key {
		key[i] += uint64(d.varint())
	}
}

// count reads a length and checks it against a limit.
func (d *decoder) count(limit uint64, what string) int {
	n := d.uvarint()
	if n > limit {
		d.fail("%s count %d exceeds %d", what, n, limit)
		return 0
	}
	return int(n)
}

func (d *decoder) str() string {
	n := d.count(1<<20, "string")
	b := make([]byte, n)
	d.bytes(b)
	return string(b)
}

// ReadStore reads a checkpoint written by WriteTo into a new store.
func ReadStore(r io.Reader) (*Store, error) {
	s := new(Store)
	if _, err := s.ReadFrom(r); err != nil {
		return nil, err
	}
	return s, nil
}

// ReadFrom replaces the contents of s (space, options, PRNG state, states,
// pools and configs) with a checkpoint written by WriteTo. A truncated or
// corrupted checkpoint is an error and leaves s unchanged. It implements
// io.ReaderFrom, n counting the bytes decoded (from version 5, the header
// and the uncompressed body). It buffers, so it may read past the end of the
// checkpoint: do not share r with other readers.
func (s *Store) ReadFrom(r io.Reader) (int64, error) {
	d := newDecoder(r)
	ns, err := d.read()
	if err != nil {
		return d.n, err
	}
	*s = *ns
	return d.n, nil
}

// skipPooled reads the n pooled states of a shard and drops them.
func (d *decoder) skipPooled(n int, key []uint64, poolSize int) {
	for range n {
		if d.err != nil {
			return
		}
		d.keyDelta(key)
		cnt := d.uvarint()
		for range min(cnt, uint64(poolSize)) {
			d.varint()
			d.varint()
		}
	}
}

func (d *decoder) read() (*Store, error) {
	var hdr [len(codecMagic) + 2]byte
	d.bytes(hdr[:])
	if d.err != nil {
		return nil, d.err
	}
	if string(hdr[:len(codecMagic)]) != codecMagic {
		return nil, errors.New("coverage: not a coverage checkpoint")
	}
	version := binary.LittleEndian.Uint16(hdr[len(codecMagic):])
	if version < codecOldest || version > codecVersion {
		return nil, fmt.Errorf("coverage: checkpoint version %d, want %d to %d", version, codecOldest, codecVersion)
	}
	if version >= codecCompressed {
		defer d.decompressBody()()
	}
	var sp Space
	nv := d.count(1<<16, "variable")
	for range nv {
		v := Var{Name: d.str()}
		if nval := d.count(1<<16, "value"); nval > 0 {
			for range nval {
				v.Values = append(v.Values, d.str())
			}
		} else {
			v.Min, v.Max, v.Step = d.f64(), d.f64(), d.f64()
		}
		sp.Vars = append(sp.Vars, v)
	}
	var opt Options
	opt.PoolSize = d.count(1<<16, "pool size")
	opt.Seed = d.u64()
	opt.Shards = d.count(maxShards, "shard")
	if d.err != nil {
		return nil, d.err
	}
	s, err := NewStore(sp, opt)
	if err != nil {
		return nil, fmt.Errorf("coverage: reading checkpoint: %w", err)
	}
	ly := s.ly
	pool, floor := d.count(uint64(ly.L), "pool level"), d.count(uint64(ly.L), "floor level")
	if floor > pool {
		d.fail("floor level %d above pool level %d", floor, pool)
	}
	srcs := []*rand.PCG{s.src}
	for _, sh := range s.pooled {
		srcs = append(srcs, sh.src)
	}
	for _, src := range srcs {
		pcg := make([]byte, d.count(1<<10, "PRNG state"))
		d.bytes(pcg)
		if d.err != nil {
			return nil, d.err
		}
		if err := src.UnmarshalBinary(pcg); err != nil {
			return nil, fmt.Errorf("coverage: reading checkpoint: %w", err)
		}
	}
	s.visits = d.uvarint()
	s.oVisits = d.uvarint()
	if version >= 3 {
		s.oorDropped = d.uvarint()
	}
	nc := d.count(1<<32-1, "config")
	for range nc {
		if d.err != nil {
			return nil, d.err
		}
		s.intern(d.u64())
	}
	if len(s.cfgIDs) != nc && d.err == nil {
		d.fail("duplicate config ids")
	}
	// Levels: move the empty pooled tables to the checkpoint's pool level.
	s.pool, s.floor = pool, floor
	for l := range floor {
		s.levels[l] = sset{}
	}
	if pool > 0 {
		s.levels[0] = newSSet(opt.Shards, ly.w, ly.kb)
		s.levels[pool] = sset{}
	}
	for l := floor; l <= ly.L; l++ {
		if l != pool && len(s.levels[l].t) == 0 {
			s.levels[l] = newSSet(opt.Shards, ly.w, ly.kb)
		}
	}
	if d.keysOnly {
		for _, sh := range s.pooled {
			sh.st.c, sh.st.inl = 0, 0
		}
		s.oor.c, s.oor.inl = 0, 0
	}
	if err := d.readPooled(s, pool, nc); err != nil {
		return nil, err
	}
	if err := d.readRegions(s, floor, pool); err != nil {
		return nil, err
	}
	for range floor {
		sk := newSketch()
		if n := d.count(sketchM, "sketch"); n != sketchM && d.err == nil {
			d.fail("sketch of %d registers, want %d", n, sketchM)
		}
		d.bytes(sk.reg)
		if d.err != nil {
			return nil, d.err
		}
		s.pooled[0].est = append(s.pooled[0].est, sk)
		for _, sh := range s.pooled[1:] {
			sh.est = append(sh.est, newSketch())
		}
	}
	if err := d.readOutside(s, version, nc); err != nil {
		return nil, err
	}
	if d.err != nil {
		return nil, d.err
	}
	d.crc = crc32.Update(d.crc, castagnoli, d.buf[d.crcd:d.i])
	d.crcd = d.i
	want := d.crc
	var sum [4]byte
	d.bytes(sum[:])
	if d.err != nil {
		return nil, d.err
	}
	if binary.LittleEndian.Uint32(sum[:]) != want {
		return nil, ErrChecksum
	}
	s.lastOK = false
	return s, nil
}

package coverage

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
)

// The checkpoint of a split store: the index's regions and the parts'
// encodings in one file (WriteSplit), read back as the whole store
// (ReadCheckpoint) or as the index and the parts' encodings again
// (ReadSplit), also into a different number of parts (resplit).

// splitMagic starts the checkpoint of a store split into parts
// (WriteSplit).
const (
	splitMagic   = "ACTSPL"
	splitVersion = 1
)

// WriteSplit writes the checkpoint of the store that index and its parts
// make, the parts given as their encodings (partBlobs[j]: part j's
// WriteTo); see [WriteSplitFrom].
func WriteSplit(w io.Writer, index *Store, partBlobs [][]byte) (int64, error) {
	return WriteSplitFrom(w, index, BytesSources(partBlobs))
}

// PartSource is a store part's encoding (its WriteTo), to copy without
// holding it: its size, and its bytes, read from the start at each Open. A
// reader that finds them not to be the part's (a checksum it verifies at
// the end) returns an error instead of io.EOF.
type PartSource struct {
	Size int64
	Open func() (io.ReadCloser, error)
}

// WriteSplitFrom writes the checkpoint of the store that index and its
// parts make: "ACTSPL", a version (u16), the part count, each part's
// length and bytes, copied from its source as they come, then the index's
// regions and counts in the whole store's format (WriteTo) with no pooled
// state. It decodes no part, and holds none: a coordinator with store
// parts writes its checkpoint without holding their encodings, which
// together are about the size of the whole store's. Each source must give
// exactly its Size bytes. [ReadCheckpoint] reads the whole store,
// [ReadSplit] the index and the parts' encodings.
func WriteSplitFrom(w io.Writer, index *Store, parts []PartSource) (int64, error) {
	if index.role != roleIndex || len(parts) != index.parts {
		return 0, fmt.Errorf("coverage: split checkpoint: an index of %d parts and %d parts", index.parts, len(parts))
	}
	buf := append([]byte(splitMagic), 0, 0)
	binary.LittleEndian.PutUint16(buf[len(splitMagic):], splitVersion)
	buf = binary.AppendUvarint(buf, uint64(len(parts)))
	n, err := w.Write(buf)
	total := int64(n)
	for j, p := range parts {
		if err != nil {
			return total, err
		}
		n, err = w.Write(binary.AppendUvarint(nil, uint64(p.Size)))
		total += int64(n)
		if err == nil {
			var m int64
			m, err = copyPart(w, p)
			total += m
			if err != nil {
				err = fmt.Errorf("coverage: split checkpoint: part %d: %w", j, err)
			}
		}
	}
	if err != nil {
		return total, err
	}
	// The index as a whole store without pooled states: its regions,
	// counts and configs.
	view := &Store{ly: index.ly, opt: index.opt, mask: index.mask, levels: index.levels, src: index.src, rng: index.rng,
		oc: index.oc, oor: newStates(index.oc.w, 4*index.ly.d, index.opt.PoolSize), cfgIDs: index.cfgIDs,
		visits: index.visits, oVisits: index.oVisits, oorDropped: index.oorDropped}
	for i := range index.pooled {
		view.pooled = append(view.pooled, newShard(i, index.opt.Seed, index.ly.w, index.ly.kb, index.opt.PoolSize))
	}
	m, err := view.WriteTo(w)
	return total + m, err
}

// copyPart copies p's Size bytes to w, and reads on to its end, where its
// reader checks what it gave.
//
// It writes copyChunk bytes at a time. io.CopyN would not: a checkpoint's
// w is a file behind a bufio.Writer, whose ReadFrom hands the copy to the
// file's, which writes 32 KiB at a time. In an aged campaign (parts of
// 927 MB in all), the coordinator's checkpoints over a resumed stretch
// of 5,000 simulations cost it 6.2–9.7 CPU-seconds with those writes and
// 4.0–4.4 with these (bench/results/rehash-checkpoint-writes-20261124.md,
// "Checkpoints in large writes").
func copyPart(w io.Writer, p PartSource) (int64, error) {
	if p.Size < 0 || p.Size > maxPartBlob {
		return 0, fmt.Errorf("size %d", p.Size)
	}
	r, err := p.Open()
	if err != nil {
		return 0, err
	}
	defer r.Close()
	buf := make([]byte, min(p.Size, copyChunk))
	var n int64
	for n < p.Size {
		m, err := io.ReadFull(r, buf[:min(int64(len(buf)), p.Size-n)])
		if m > 0 {
			k, werr := w.Write(buf[:m])
			n += int64(k)
			if werr != nil {
				return n, werr
			}
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return n, fmt.Errorf("%d bytes of %d", n, p.Size)
		}
		if err != nil {
			return n, err
		}
	}
	var one [1]byte
	switch m, err := io.ReadFull(r, one[:]); {
	case m > 0:
		return n, fmt.Errorf("more than its %d bytes", p.Size)
	case err != io.EOF:
		return n, err
	}
	return n, nil
}

// copyChunk is the size of copyPart's reads and writes.
const copyChunk = 8 << 20

// maxPartBlob bounds a part's encoding in a split checkpoint.
const maxPartBlob = 1 << 40

// ReadCheckpoint reads a whole store from a checkpoint written by
// Store.WriteTo or by WriteSplit (whose parts and index it joins). It
// buffers, so it may read past the end of the checkpoint.
func ReadCheckpoint(r io.Reader) (*Store, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	n, err := readSplitHeader(br)
	if err != nil {
		return nil, err
	}
	return readWhole(br, n)
}

// readWhole reads the rest of a checkpoint whose split header said n
// parts (0: a whole store's, which has none) as the whole store.
func readWhole(br *bufio.Reader, n int) (*Store, error) {
	if n == 0 {
		return ReadStore(br)
	}
	return readSplitWhole(br, n)
}

// ReadSplit reads the checkpoint in ra's bytes [0, size) (Store.WriteTo's
// or WriteSplit's) as the index of n store parts and the parts' encodings
// (each as Store.WriteTo writes a part), for a coordinator that resumes a
// campaign with store parts. Of a split checkpoint of n parts it decodes
// the index's regions and the parts' keys, checking their counts and
// pools but keeping neither (a slim index's bits are set as the keys are
// read: indexOfParts), and returns the parts' encodings as sources
// that read them from ra when opened: the caller never holds the whole
// store, which a store split into parts may not fit in one process, nor
// the parts' encodings. A split checkpoint of another part count is read
// the same way, then split again one new part at a time (resplit): the
// caller holds the new parts' encodings, never the whole store. A whole
// store's checkpoint is read whole and split (Split), and its parts
// encoded in memory. Either way the index and parts are those Split makes
// of the store ReadCheckpoint reads; the index has no pool source yet. ra
// must stay readable, and unchanged, until the sources have been read.
func ReadSplit(ra io.ReaderAt, size int64, n int) (index *Store, parts []PartSource, err error) {
	index, parts, _, err = ReadSplitIn(ra, size, n, "")
	return index, parts, err
}

// ResplitPattern is the pattern of the names of the files ReadSplitIn
// writes (filepath.Match's and os.CreateTemp's).
const ResplitPattern = ".resplit-*"

// ReadSplitIn is [ReadSplit], except that the parts it makes again from a
// split checkpoint of another part count are written to files in dir
// (hidden, named by ResplitPattern), so that the caller holds neither the
// whole store nor those parts' encodings. remove deletes the files once
// the sources have been read; it is never nil without an error. With dir
// "", the parts are encoded in memory, as ReadSplit's.
func ReadSplitIn(ra io.ReaderAt, size int64, n int, dir string) (index *Store, parts []PartSource, remove func(), err error) {
	var files []string
	remove = func() {
		for _, f := range files {
			os.Remove(f)
		}
	}
	index, parts, err = readSplitPut(ra, size, n, func(i int, p *Store) (PartSource, error) {
		if dir == "" {
			var buf bytes.Buffer
			if _, err := p.WriteTo(&buf); err != nil {
				return PartSource{}, err
			}
			return BytesSources([][]byte{buf.Bytes()})[0], nil
		}
		f, err := os.CreateTemp(dir, ResplitPattern)
		if err != nil {
			return PartSource{}, err
		}
		files = append(files, f.Name())
		sz, err := p.WriteTo(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return PartSource{}, err
		}
		name := f.Name()
		return PartSource{Size: sz, Open: func() (io.ReadCloser, error) { return os.Open(name) }}, nil
	})
	if err != nil {
		remove()
		return nil, nil, nil, err
	}
	return index, parts, remove, nil
}

// readSplitPut is ReadSplitIn, with put to keep the parts a re-split makes.
func readSplitPut(ra io.ReaderAt, size int64, n int, put func(i int, p *Store) (PartSource, error)) (index *Store, parts []PartSource, err error) {
	sr := io.NewSectionReader(ra, 0, size)
	br := bufio.NewReaderSize(sr, 1<<16)
	// at is the offset in ra of br's next byte.
	at := func() int64 {
		pos, _ := sr.Seek(0, io.SeekCurrent)
		return pos - int64(br.Buffered())
	}
	m, err := readSplitHeader(br)
	if err != nil {
		return nil, nil, err
	}
	if m == 0 {
		whole, err := readWhole(br, m)
		if err != nil {
			return nil, nil, err
		}
		index, blobs, err := SplitEncoded(whole, n)
		if err != nil {
			return nil, nil, err
		}
		return index, BytesSources(blobs), nil
	}
	parts = make([]PartSource, m)
	for j := range m {
		sz, err := readPartSize(br, j)
		if err != nil {
			return nil, nil, err
		}
		off := at()
		if off+sz > size {
			return nil, nil, fmt.Errorf("coverage: reading a split checkpoint: part %d: truncated", j)
		}
		parts[j] = PartSource{Size: sz, Open: func() (io.ReadCloser, error) {
			return io.NopCloser(io.NewSectionReader(ra, off, sz)), nil
		}}
		if _, err := sr.Seek(off+sz, io.SeekStart); err != nil {
			return nil, nil, err
		}
		br.Reset(sr)
	}
	index, err = indexOfParts(br, parts, n)
	if err != nil {
		return nil, nil, err
	}
	if m == n {
		return index, parts, nil
	}
	parts, err = resplit(index, parts, m, n, put)
	if err != nil {
		return nil, nil, fmt.Errorf("coverage: reading a split checkpoint of %d parts as %d: %w", m, n, err)
	}
	return index, parts, nil
}

// resplit makes the encodings of the n parts of the store that index
// stands for from the encodings of its m parts (another split of it;
// their keys are checked), as Split would make them from the whole
// store: a shard moves whole from the part that keeps it among m to the
// one that keeps it among n. It holds one new part at a time: for each,
// it reads the old parts that keep some of its shards, skipping their
// other shards, so that a coordinator resumed with another part count
// never holds the whole store. put keeps each new part's encoding.
func resplit(index *Store, old []PartSource, m, n int, put func(i int, p *Store) (PartSource, error)) ([]PartSource, error) {
	parts := make([]PartSource, n)
	for i := range n {
		pooled := make([]*shard, len(index.pooled))
		var oor *Store // old part 0, for new part 0's states outside S
		for j := range m {
			needed := i == 0 && j == 0
			for sh := range pooled {
				needed = needed || partOf(sh, n) == i && partOf(sh, m) == j
			}
			if !needed {
				continue
			}
			p, err := readPartSkipping(old[j], j, m, func(sh int) bool { return partOf(sh, n) != i })
			if err != nil {
				return nil, fmt.Errorf("part %d: %w", j, err)
			}
			for sh := range pooled {
				if partOf(sh, n) == i && partOf(sh, m) == j {
					pooled[sh] = p.pooled[sh]
				}
			}
			if j == 0 {
				oor = p
			}
		}
		p, err := assemblePart(index, i, n, pooled, oor)
		if err != nil {
			return nil, err
		}
		if parts[i], err = put(i, p); err != nil {
			return nil, fmt.Errorf("encoding store part %d: %w", i, err)
		}
	}
	return parts, nil
}

// readPartSkipping reads part j of m from src, without the states of the
// shards skip names.
func readPartSkipping(src PartSource, j, m int, skip func(sh int) bool) (*Store, error) {
	rc, err := src.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	d := newDecoder(rc)
	d.skip, d.limit = skip, max(src.Size, 1)
	p, err := d.read()
	if err != nil {
		return nil, err
	}
	if err := p.checkPart(j, m); err != nil {
		return nil, err
	}
	return p, nil
}

// BytesSources returns parts' encodings as sources.
func BytesSources(blobs [][]byte) []PartSource {
	srcs := make([]PartSource, len(blobs))
	for j, b := range blobs {
		srcs[j] = PartSource{Size: int64(len(b)), Open: func() (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(b)), nil
		}}
	}
	return srcs
}

// SplitEncoded splits whole store s as Split does, and returns the parts'
// encodings (Store.WriteTo) instead of the parts; the index has no pool
// source. s must not be used afterwards.
func SplitEncoded(s *Store, n int) (index *Store, parts [][]byte, err error) {
	index, ps, err := Split(s, n)
	if err != nil {
		return nil, nil, err
	}
	parts = make([][]byte, n)
	for j, p := range ps {
		var buf bytes.Buffer
		if _, err := p.WriteTo(&buf); err != nil {
			return nil, nil, fmt.Errorf("coverage: encoding store part %d: %w", j, err)
		}
		parts[j], ps[j] = buf.Bytes(), nil
	}
	index.pools = nil
	return index, parts, nil
}

// readSplitHeader reads the header of a split checkpoint and returns its
// part count, or 0, reading nothing, when the checkpoint is a whole
// store's.
func readSplitHeader(br *bufio.Reader) (int, error) {
	head, err := br.Peek(len(splitMagic))
	if err != nil || string(head) != splitMagic {
		return 0, nil
	}
	var hdr [len(splitMagic) + 2]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return 0, fmt.Errorf("coverage: reading a split checkpoint: %w", err)
	}
	if v := binary.LittleEndian.Uint16(hdr[len(splitMagic):]); v != splitVersion {
		return 0, fmt.Errorf("coverage: split checkpoint version %d, want %d", v, splitVersion)
	}
	n, err := binary.ReadUvarint(br)
	if err != nil || n < 1 || n > maxShards {
		return 0, errors.New("coverage: reading a split checkpoint: bad part count")
	}
	return int(n), nil
}

// readPartSize reads the length of part j's encoding.
func readPartSize(br *bufio.Reader, j int) (int64, error) {
	size, err := binary.ReadUvarint(br)
	if err != nil || size > maxPartBlob {
		return 0, fmt.Errorf("coverage: reading a split checkpoint: part %d: bad length", j)
	}
	return int64(size), nil
}

// readSplitWhole reads the rest of a split checkpoint of n parts as the
// whole store.
func readSplitWhole(br *bufio.Reader, n int) (*Store, error) {
	parts := make([]*Store, n)
	for j := range parts {
		size, err := readPartSize(br, j)
		if err != nil {
			return nil, err
		}
		lr := io.LimitReader(br, size)
		if parts[j], err = ReadPart(lr, j, n); err != nil {
			return nil, fmt.Errorf("coverage: reading a split checkpoint: part %d: %w", j, err)
		}
		if _, err := io.Copy(io.Discard, lr); err != nil {
			return nil, fmt.Errorf("coverage: reading a split checkpoint: part %d: %w", j, err)
		}
	}
	w, err := readSplitView(br)
	if err != nil {
		return nil, err
	}
	if err := w.adoptParts(parts); err != nil {
		return nil, fmt.Errorf("coverage: reading a split checkpoint: %w", err)
	}
	if err := w.checkPooledRegions(); err != nil {
		return nil, err
	}
	return w, nil
}

// readSplitView reads the index's part of a split checkpoint: a whole
// store with no pooled state.
func readSplitView(br *bufio.Reader) (*Store, error) {
	w, err := ReadStore(br)
	if err != nil {
		return nil, fmt.Errorf("coverage: reading a split checkpoint: the index: %w", err)
	}
	if w.pool != 0 || w.floor != 0 {
		return nil, errors.New("coverage: reading a split checkpoint: the index has coarsened")
	}
	return w, nil
}

// indexOfParts reads the index's part of a split checkpoint (br, after
// the parts) and makes the index of n parts Split would make, with the
// pooled keys of the checkpoint's parts, read from parts as keys alone.
//
// A slim index needs the parts' keys only to set its bits: each part's
// decoder hands them to a slimLoader as it reads them, the parts at once
// on every core, so that they are never held. Held in tables, as they
// were, they cost a resumed coordinator of the aged bench campaign most
// of its loading's CPU (their inserts) and the top of its memory
// (bench/results/resume-without-keys-20261125.md).
func indexOfParts(br *bufio.Reader, parts []PartSource, n int) (*Store, error) {
	m := len(parts)
	view, err := readSplitView(br)
	if err != nil {
		return nil, err
	}
	index, err := NewIndex(view.Space(), view.opt, n, nil)
	if err != nil {
		return nil, fmt.Errorf("coverage: reading a split checkpoint: %w", err)
	}
	index.levels = view.levels
	index.visits, index.oVisits, index.oorDropped = view.visits, view.oVisits, view.oorDropped
	index.cfgIDs, index.cfgIdx = view.cfgIDs, view.cfgIdx
	var loaders []*slimLoader
	if index.sl.on {
		index.slimClear()
		loaders = make([]*slimLoader, m)
		for j := range loaders {
			loaders[j] = index.newSlimLoader(j, m)
		}
	}
	keys := make([]*Store, m) // each part's states as keys alone (none for a slim index)
	bad := make([]error, m)
	parallel(m, !index.sl.on, func(j int) {
		rc, err := parts[j].Open()
		if err != nil {
			bad[j] = fmt.Errorf("coverage: reading a split checkpoint: part %d: %w", j, err)
			return
		}
		defer rc.Close()
		d := newDecoder(rc)
		d.keysOnly, d.limit = true, max(parts[j].Size, 1)
		if loaders != nil {
			d.pooledKey = loaders[j].add
		}
		if keys[j], err = d.read(); err == nil && loaders != nil {
			err = loaders[j].flush()
		}
		if err == nil {
			err = keys[j].checkPart(j, m)
		}
		if err != nil {
			bad[j] = fmt.Errorf("coverage: reading a split checkpoint: part %d: %w", j, err)
		}
	})
	if err := errors.Join(bad...); err != nil {
		return nil, err
	}
	if err := view.checkPartsOf(keys); err != nil {
		return nil, fmt.Errorf("coverage: reading a split checkpoint: %w", err)
	}
	index.oorNew = uint64(keys[0].oor.len())
	if index.sl.on {
		counts := make([][]int, m)
		for j, ld := range loaders {
			counts[j] = ld.n
		}
		if err := index.slimDone(counts); err != nil {
			return nil, fmt.Errorf("coverage: reading a split checkpoint: %w", err)
		}
		return index, nil
	}
	for sh := range index.pooled {
		index.pooled[sh].st.t = keys[partOf(sh, m)].pooled[sh].st.t
	}
	if err := index.checkPooledRegions(); err != nil {
		return nil, err
	}
	return index, nil
}

// checkPooledRegions checks that every region at k = 2 holds a pooled
// state, and every pooled state's region is there: that the index's
// regions and the parts' states, read from a split checkpoint, are of one
// store.
//
// It looks up every pooled state's region: tens of millions of lookups in
// tables larger than the caches in an aged campaign. So the shards are
// checked on every core, and each shard's regions touchAhead at a time,
// touching their slots first so that the cache misses overlap (as
// merger.shardLevel does).
func (w *Store) checkPooledRegions() error {
	if len(w.levels) < 2 {
		return nil
	}
	missing := make([]bool, len(w.pooled))
	sinks := make([]uint32, len(w.pooled)) // keeps the touches
	parallel(len(w.pooled), false, func(sh int) {
		st := &w.pooled[sh].st
		var rks [touchAhead][]uint64
		var hs [touchAhead]uint64
		var tbs [touchAhead]*table
		for i := range rks {
			rks[i] = make([]uint64, w.ly.w)
		}
		var sink uint32
		for g := 0; g < st.len(); g += touchAhead {
			n := min(touchAhead, st.len()-g)
			for i := range n {
				w.ly.regionKey(st.t.key(uint32(g+i)), rks[i], 1)
				hs[i] = hashKey(rks[i])
				tbs[i] = w.table(1, shardOf(hs[i], w.mask))
				sink += tbs[i].touch(hs[i])
			}
			for i := range n {
				if !tbs[i].lookupHashed(rks[i], hs[i]) {
					missing[sh] = true
					return
				}
			}
		}
		sinks[sh] = sink
	})
	if slices.Contains(missing, true) {
		return errors.New("coverage: reading a split checkpoint: a part's state has no region in the index")
	}
	pooled := 0
	for _, sh := range w.pooled {
		pooled += sh.st.len()
	}
	if pooled < int(w.levels[1].len()) {
		return errors.New("coverage: reading a split checkpoint: the index has regions without states in the parts")
	}
	return nil
}

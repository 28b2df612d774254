package coverage

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"io"
	"slices"

	"github.com/klauspost/compress/zstd"
)

// From codecCompressed on, everything after the magic and the version
// (the body and its CRC-32C, which covers the uncompressed bytes as in
// older versions) is one zstd frame (RFC 8878). The body is mostly small
// varints whose bytes repeat (pool configs, counts, key words): on make
// run's 2,000-simulation campaign zstd takes the version 4 checkpoint from
// 71.2 MB to 55.7 MB (bench/results/checkpoint-zstd-20261128.md).
const codecCompressed = 5

// bodyDecoderMaxMemory bounds what a corrupted frame can make the zstd
// decoder allocate for its window.
const bodyDecoderMaxMemory = 1 << 30

// countingWriter counts the bytes written to w: WriteTo returns what reached
// its writer, not the uncompressed size.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	m, err := c.w.Write(p)
	c.n += int64(m)
	return m, err
}

// compressBody flushes the header written so far as it is and sends the rest
// of the encoding through a zstd encoder, which the caller closes.
func (e *encoder) compressBody() *zstd.Encoder {
	e.flush()
	zw, err := zstd.NewWriter(e.w, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
	if err != nil && e.err == nil {
		e.err = fmt.Errorf("coverage: writing checkpoint: %w", err)
	}
	e.w = zw
	return zw
}

// decompressBody makes the rest of the encoding (what the decoder has
// buffered past the header, then r) the input of a zstd decoder. The
// decoder's limit no longer bounds the uncompressed size, so it is dropped:
// tables are then reserved for at most 2^20 keys and grown as they are read.
// The returned function releases the zstd decoder.
func (d *decoder) decompressBody() func() {
	if d.err != nil {
		return func() {}
	}
	d.crc = crc32.Update(d.crc, castagnoli, d.buf[d.crcd:d.i])
	rest := bytes.NewReader(slices.Clone(d.buf[d.i:d.end]))
	zr, err := zstd.NewReader(io.MultiReader(rest, d.r),
		zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(bodyDecoderMaxMemory))
	if err != nil {
		d.fail("%v", err)
		return func() {}
	}
	d.r = zr
	d.i, d.end, d.crcd = 0, 0, 0
	d.limit = 0
	return zr.Close
}

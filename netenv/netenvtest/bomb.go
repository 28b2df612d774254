package netenvtest

import (
	"bytes"
	"compress/gzip"

	"github.com/actfuzz/actfuzz/netenv"
)

// GzipBomb is a gzip stream of a few kilobytes that expands to 1 MiB more
// than netenv.MaxLinkTraceBytes of zeros: a link trace that must be
// refused by its decompressed size (max_trace_bytes) without being read
// into memory whole.
func GzipBomb() []byte {
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	zero := make([]byte, 1<<20)
	for range netenv.MaxLinkTraceBytes>>20 + 1 {
		_, _ = w.Write(zero)
	}
	_ = w.Close()
	return z.Bytes()
}

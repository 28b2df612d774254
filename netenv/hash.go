package netenv

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/actfuzz/actfuzz/netenv/tcp"
)

// TraceHasher computes Result.TraceSHA256 exactly as Run does, for
// subjects that produce state records some other way (the ns-3 subject):
// the same records give the same trace_sha256 whichever subject made them.
type TraceHasher struct{ t traceHasher }

// NewTraceHasher hashes every record it observes, then passes it on to
// next (which may be nil).
func NewTraceHasher(next tcp.Observer) *TraceHasher {
	return &TraceHasher{t: traceHasher{h: sha256.New(), next: next}}
}

// Observe folds rec into the hash and forwards it.
func (h *TraceHasher) Observe(rec *tcp.StateRecord) { h.t.Observe(rec) }

// Sum is the hex SHA-256 of the records observed so far.
func (h *TraceHasher) Sum() string { return hex.EncodeToString(h.t.h.Sum(nil)) }

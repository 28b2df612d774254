package netenv

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"math"

	"github.com/actfuzz/actfuzz/netenv/observe"
)

// TraceHasher computes Result.TraceSHA256 exactly as Run does, for
// subjects that produce state records some other way (the ns-3 subject):
// the same records give the same trace_sha256 whichever subject made them.
type TraceHasher struct{ t *traceHasher }

// NewTraceHasher hashes every record it observes, then passes it on to
// next (which may be nil).
func NewTraceHasher(next observe.Observer) *TraceHasher {
	return &TraceHasher{t: newTraceHasher(next)}
}

// Observe folds rec into the hash and forwards it.
func (h *TraceHasher) Observe(rec *observe.Record) { h.t.Observe(rec) }

// Sum is the hex SHA-256 of the records observed so far.
func (h *TraceHasher) Sum() string { return h.t.sum() }

// hashBatch is how many bytes of records are collected before they are
// folded into the SHA-256: one Write per record and per variable cost more
// than hashing the bytes themselves (a record is ~60 bytes plus 8 per
// variable), and the digest of a byte stream does not depend on how it is
// cut into writes.
const hashBatch = 8 << 10

// traceHasher folds every state record into a SHA-256 in a fixed binary
// layout, then passes it on.
type traceHasher struct {
	h    hash.Hash
	pend []byte // records not yet written to h
	next observe.Observer
}

func newTraceHasher(next observe.Observer) *traceHasher {
	return &traceHasher{h: sha256.New(), pend: make([]byte, 0, hashBatch+512), next: next}
}

func (t *traceHasher) Observe(rec *observe.Record) {
	b := t.pend
	b = binary.LittleEndian.AppendUint64(b, uint64(rec.Time))
	b = binary.LittleEndian.AppendUint32(b, uint32(rec.Flow))
	b = append(b, byte(rec.Reason), byte(rec.CAState), byte(rec.PrevCAState))
	b = binary.LittleEndian.AppendUint32(b, rec.Cwnd)
	b = binary.LittleEndian.AppendUint32(b, rec.SSThresh)
	b = binary.LittleEndian.AppendUint64(b, uint64(rec.SRTT))
	b = binary.LittleEndian.AppendUint64(b, uint64(rec.RTTVar))
	b = binary.LittleEndian.AppendUint32(b, rec.PriorCwnd)
	b = binary.LittleEndian.AppendUint32(b, rec.InFlight)
	b = binary.LittleEndian.AppendUint64(b, rec.Delivered)
	for _, v := range rec.Vars {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	if len(b) >= hashBatch {
		t.h.Write(b)
		b = b[:0]
	}
	t.pend = b
	if t.next != nil {
		t.next.Observe(rec)
	}
}

// sum is the hex SHA-256 of every record observed so far.
func (t *traceHasher) sum() string {
	if len(t.pend) > 0 {
		t.h.Write(t.pend)
		t.pend = t.pend[:0]
	}
	return hex.EncodeToString(t.h.Sum(nil))
}

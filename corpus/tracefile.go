package corpus

import (
	"cmp"
	"compress/gzip"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/actfuzz/actfuzz/netenv/tcp"
)

// TraceWindowRecords is how many state records a finding's stored trace
// keeps before and after each hit (the records of every flow, in the
// order the simulation wrote them: one per ACK or state change of a
// flow, so 500 are a few RTTs of a flow at a cwnd of 100 packets). The
// whole trace is one `actfuzz replay SEED --trace FILE` away.
const TraceWindowRecords = 500

// TraceExt ends the name of a stored trace: CSV (netenv.CSVTrace's
// columns), gzip-compressed (RFC 1952).
const TraceExt = ".csv.gz"

// TraceRef is what a finding records of its stored trace: the file, and
// which of the simulation's records it kept. One simulation's findings
// share one trace (a simulation that hits two conditions writes it once).
type TraceRef struct {
	// File is the trace, relative to the seed file's directory (slash-
	// separated): it stays found when the campaign directory moves.
	File string `json:"file"`
	// Records is how many state records the simulation wrote; Kept the
	// stretches of them the file holds, in order. Trimmed says whether
	// some were left out; Window is the records kept on each side of a
	// hit (TraceWindowRecords when the campaign wrote it).
	Records int         `json:"records"`
	Kept    []TraceSpan `json:"kept"`
	Trimmed bool        `json:"trimmed"`
	Window  int         `json:"window"`
}

// TraceSpan is a stretch of a trace's records: indices First … Last
// (0-based, inclusive) of the simulation's records, from FromNS to ToNS
// of simulated time.
type TraceSpan struct {
	First  int   `json:"first"`
	Last   int   `json:"last"`
	FromNS int64 `json:"from_ns"`
	ToNS   int64 `json:"to_ns"`
}

// validate checks a trace reference read from a seed: a relative,
// slash-separated CSV file (a seed names no file outside its campaign
// directory's tree by an absolute path), and spans in order.
func (r *TraceRef) validate() error {
	switch {
	case r.File == "" || path.IsAbs(r.File) || filepath.IsAbs(r.File) || strings.Contains(r.File, "\\"):
		return fmt.Errorf("file %q: want a relative path, slash-separated", r.File)
	case !strings.HasSuffix(r.File, TraceExt) && !strings.HasSuffix(r.File, ".csv"):
		return fmt.Errorf("file %q: want a %s or .csv file", r.File, TraceExt)
	case r.Records < 0 || r.Window < 0:
		return fmt.Errorf("records %d, window %d: want counts ≥ 0", r.Records, r.Window)
	}
	last := -1
	for i, sp := range r.Kept {
		if sp.First <= last || sp.Last < sp.First || sp.Last >= r.Records || sp.ToNS < sp.FromNS {
			return fmt.Errorf("kept[%d] %+v: want stretches in order within the %d records", i, sp, r.Records)
		}
		last = sp.Last
	}
	return nil
}

// TracePath is where the trace of the finding of the seed at seedPath
// is: "" when the finding records none (a seed from before traces were
// shared, whose CSV is beside it, or a fault not replayed).
func (f *Finding) TracePath(seedPath string) string {
	if f == nil || f.Trace == nil || f.Trace.File == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(seedPath), filepath.FromSlash(f.Trace.File))
}

// TraceHit is a moment a stored trace keeps a window around: the first
// record of Flow at or after AtNS (or any flow's record after it).
type TraceHit struct {
	AtNS int64
	Flow int
}

// TraceWindow passes on to Next the records within Window records of a
// hit (before or after it) and drops the others, counting what it kept
// (Spans). The hits are known before the run: the campaign recorded
// them.
type TraceWindow struct {
	Next   tcp.Observer
	Window int
	hits   []TraceHit // sorted by time; the first pending is hits[0]
	ring   []tcp.StateRecord
	start  int // the oldest record in ring
	n      int // records in ring
	after  int // records still to keep after the last hit
	index  int // records seen so far
	spans  []TraceSpan
}

// NewTraceWindow keeps window records around each of hits.
func NewTraceWindow(next tcp.Observer, window int, hits []TraceHit) *TraceWindow {
	hs := slices.Clone(hits)
	slices.SortFunc(hs, func(a, b TraceHit) int { return cmp.Compare(a.AtNS, b.AtNS) })
	return &TraceWindow{Next: next, Window: max(window, 0), hits: hs, ring: make([]tcp.StateRecord, max(window, 0))}
}

// isHit says whether r is the record of the next pending hit, and
// consumes every hit it is the record of.
func (t *TraceWindow) isHit(r *tcp.StateRecord) bool {
	hit := false
	for len(t.hits) > 0 {
		h := t.hits[0]
		if !(int64(r.Time) == h.AtNS && int(r.Flow) == h.Flow || int64(r.Time) > h.AtNS) {
			break
		}
		hit = true
		t.hits = t.hits[1:]
	}
	return hit
}

// Observe implements tcp.Observer.
func (t *TraceWindow) Observe(r *tcp.StateRecord) {
	i := t.index
	t.index++
	if t.isHit(r) {
		for k := 0; k < t.n; k++ {
			rec := &t.ring[(t.start+k)%len(t.ring)]
			t.keep(rec, i-t.n+k)
		}
		t.start, t.n = 0, 0
		t.keep(r, i)
		t.after = t.Window
		return
	}
	if t.after > 0 {
		t.after--
		t.keep(r, i)
		return
	}
	if len(t.ring) == 0 {
		return
	}
	// Into the ring, over its oldest record when it is full; Vars is
	// copied into the slot's own slice (Observe must not retain r).
	slot := (t.start + t.n) % len(t.ring)
	if t.n == len(t.ring) {
		t.start = (t.start + 1) % len(t.ring)
	} else {
		t.n++
	}
	vars := t.ring[slot].Vars[:0]
	t.ring[slot] = *r
	t.ring[slot].Vars = append(vars, r.Vars...)
}

// keep passes record i on and extends the spans.
func (t *TraceWindow) keep(r *tcp.StateRecord, i int) {
	if n := len(t.spans); n > 0 && t.spans[n-1].Last == i-1 {
		t.spans[n-1].Last, t.spans[n-1].ToNS = i, int64(r.Time)
	} else {
		t.spans = append(t.spans, TraceSpan{First: i, Last: i, FromNS: int64(r.Time), ToNS: int64(r.Time)})
	}
	if t.Next != nil {
		t.Next.Observe(r)
	}
}

// Ref is what the window kept of the run it saw, as a finding records
// it, for the trace at file.
func (t *TraceWindow) Ref(file string) *TraceRef {
	kept := 0
	for _, s := range t.spans {
		kept += s.Last - s.First + 1
	}
	return &TraceRef{File: file, Records: t.index, Kept: slices.Clone(t.spans), Trimmed: kept < t.index, Window: t.Window}
}

// gzipTo is a gzip stream over w (RFC 1952) whose header carries no
// time, so that the same trace makes the same bytes on every run.
func gzipTo(w io.Writer) *gzip.Writer {
	zw, _ := gzip.NewWriterLevel(w, gzip.BestCompression) // the level is valid
	zw.ModTime = time.Time{}
	return zw
}

// TraceWriter is where to write a trace file named name: w itself, or a
// gzip stream over it when name ends in .gz; closeTrace ends that stream
// (it does not close w).
func TraceWriter(w io.Writer, name string) (tw io.Writer, closeTrace func() error) {
	if filepath.Ext(name) != ".gz" {
		return w, func() error { return nil }
	}
	zw := gzipTo(w)
	return zw, zw.Close
}

// OpenTrace reads a stored trace: gzip when its name ends in .gz, plain
// CSV otherwise (a seed written before traces were compressed).
func OpenTrace(r io.Reader, name string) (io.Reader, error) {
	if filepath.Ext(name) != ".gz" {
		return r, nil
	}
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return zr, nil
}

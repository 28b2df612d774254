package netenv

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/actfuzz/actfuzz/internal/capread"
	"github.com/actfuzz/actfuzz/netenv/linktrace"
)

// MaxLinkTraceFiles is how many of the user's own trace files a setup can
// hold: the link_trace values user1 … user4.
const MaxLinkTraceFiles = 4

// firstUserTrace is the link_trace value of user1.
var firstUserTrace = LinkTrace(1 + len(linktrace.Names))

// LinkTraceFile is one of the user's Mahimahi traces (a campaign's
// link_traces:, sim's --link-trace-file). The setup carries its content,
// not its path, so a seed that uses it replays exactly on any machine and a
// remote worker needs no copy of the file: Gzip is the file compressed
// (seeds stay small; a 60-second LTE trace of 300 kB takes about 60 kB),
// SHA256 the hash of the file as read, checked on load.
type LinkTraceFile struct {
	// Name is the file's base name, for messages and reports.
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
	Gzip   []byte `json:"gzip"`

	once  sync.Once
	trace *linktrace.Trace // parsed by Load
	err   error
}

// MaxLinkTraceBytes (max_trace_bytes) caps a user's trace file, as read
// and as a seed or a cluster's header carries it decompressed: 64 MiB is
// about linktrace.MaxPoints lines of up to eight characters.
const MaxLinkTraceBytes = 64 << 20

// ReadLinkTraceFile reads and parses a trace file. Its path comes from a
// campaign file, which can come from anyone: it must be a regular file
// (not /dev/zero, not a FIFO that blocks), at most MaxLinkTraceBytes, and
// a parse error gives the path and a position (path:line:column), never
// what the file holds (it may be /proc/self/environ).
func ReadLinkTraceFile(path string) (*LinkTraceFile, error) {
	b, err := capread.ReadFile(path, MaxLinkTraceBytes, "max_trace_bytes", true)
	if err != nil {
		return nil, err
	}
	tr, err := linktrace.Parse(bytes.NewReader(b))
	if err != nil {
		return nil, atPosition(path, err)
	}
	var z bytes.Buffer
	w, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	f := &LinkTraceFile{Name: filepath.Base(path), SHA256: hex.EncodeToString(sum[:]), Gzip: z.Bytes()}
	f.once.Do(func() { f.trace = tr })
	return f, nil
}

// Load parses the carried content (a setup read from a seed or a worker's
// header) after checking its hash, once; every call returns the first
// call's outcome, from any goroutine.
func (f *LinkTraceFile) Load() error {
	f.once.Do(func() { f.trace, f.err = f.load() })
	return f.err
}

func (f *LinkTraceFile) load() (*linktrace.Trace, error) {
	// The name and the hash come from a seed or a header: quoted, and
	// the hash cut short, so that neither can write into a terminal.
	name := fmt.Sprintf("link trace %.64q", f.Name)
	r, err := gzip.NewReader(bytes.NewReader(f.Gzip))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	// Decompressed under the cap: a few kilobytes of gzip can expand
	// to gigabytes.
	b, err := capread.Read(r, name, MaxLinkTraceBytes, "max_trace_bytes")
	if err != nil {
		return nil, err
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != f.SHA256 {
		return nil, fmt.Errorf("%s: content does not match its sha256 %.64q", name, f.SHA256)
	}
	tr, err := linktrace.Parse(bytes.NewReader(b))
	if err != nil {
		return nil, atPosition(name, err)
	}
	return tr, nil
}

// atPosition prefixes a parse error with the file: file:line:column: …
func atPosition(file string, err error) error {
	var pe *linktrace.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s:%w", file, err)
	}
	return fmt.Errorf("%s: %w", file, err)
}

// Trace is the parsed trace (nil before a successful Load).
func (f *LinkTraceFile) Trace() *linktrace.Trace {
	if f.Load() != nil {
		return nil
	}
	return f.trace
}

// LoadLinkTraces loads every file (Load) and checks their number.
func LoadLinkTraces(fs []*LinkTraceFile) error {
	if len(fs) > MaxLinkTraceFiles {
		return fmt.Errorf("link_traces: %d files, at most %d (link_trace user1 … user%d)", len(fs), MaxLinkTraceFiles, MaxLinkTraceFiles)
	}
	for i, f := range fs {
		if f == nil {
			return fmt.Errorf("link_traces[%d]: missing", i)
		}
		if err := f.Load(); err != nil {
			return fmt.Errorf("link_traces[%d]: %w", i, err)
		}
	}
	return nil
}

// checkUserTraces reports a phase whose link_trace names a user file the
// configuration does not hold, or holds unloaded.
func checkUserTraces(sched Schedule, fs []*LinkTraceFile) error {
	for i, ph := range sched {
		if ph.Env.Trace < firstUserTrace {
			continue
		}
		k := int(ph.Env.Trace - firstUserTrace)
		switch {
		case k >= len(fs):
			return fmt.Errorf("phase %d: link_trace %s: the setup holds %d trace file(s) of the user's (link_traces:, --link-trace-file)", i+1, ph.Env.Trace, len(fs))
		case fs[k] == nil:
			return fmt.Errorf("phase %d: link_trace %s: the trace file is missing", i+1, ph.Env.Trace)
		default:
			if err := fs[k].Load(); err != nil {
				return fmt.Errorf("phase %d: link_trace %s: %w", i+1, ph.Env.Trace, err)
			}
		}
	}
	return nil
}

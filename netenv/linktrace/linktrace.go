package linktrace

import (
	"bufio"
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"
)

//go:generate go run ./gen

//go:embed traces/*.trace
var shipped embed.FS

// Names are the shipped traces, in the order of netenv's link_trace parameter.
var Names = []string{"steady", "lte", "wifi"}

// MTU is the bytes one opportunity delivers.
const MTU = 1500

// Trace is a parsed trace: the opportunities of one period, in order.
type Trace struct {
	Opportunities []time.Duration
	// Period is when the trace repeats: its last timestamp, at least 1 ms
	// (Mahimahi's convention).
	Period time.Duration
}

// parsed holds each shipped trace parsed once: the files are constants of
// the binary, so this is a read-only table, not state (a campaign asks for
// a trace at every phase of every run).
var parsed = func() map[string]func() (*Trace, error) {
	m := map[string]func() (*Trace, error){}
	for _, name := range Names {
		m[name] = sync.OnceValues(func() (*Trace, error) {
			b, err := shipped.ReadFile("traces/" + name + ".trace")
			if err != nil {
				return nil, err
			}
			return Parse(bytes.NewReader(b))
		})
	}
	return m
}()

// Shipped returns a shipped trace by name. The trace is shared: do not
// modify it.
func Shipped(name string) (*Trace, error) {
	f, ok := parsed[name]
	if !ok {
		return nil, fmt.Errorf("trace %q: not a shipped trace (want one of %v)", name, Names)
	}
	t, err := f()
	if err != nil {
		return nil, fmt.Errorf("trace %q: %w", name, err)
	}
	return t, nil
}

// MaxPoints (max_trace_points) caps a trace's delivery opportunities (its
// lines): 2^23 is 100 s of a 1 Gbit/s link; Mahimahi's recorded cellular
// traces hold tens of thousands. Each costs 8 bytes once parsed.
const MaxPoints = 1 << 23

// maxLine bounds a line: a timestamp up to 10^9 ms has 10 digits.
const maxLine = 4096

// ParseError is an error of Parse at a position of the file. Its message
// never quotes the file: a trace's path can name any file on the machine
// (a campaign's link_traces: [/proc/self/environ]), and what it holds
// must not reach a terminal or a log.
type ParseError struct {
	Line, Col int
	Msg       string
}

func (e *ParseError) Error() string { return fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.Msg) }

// Parse reads a trace in Mahimahi's format: one millisecond timestamp per
// line, non-decreasing; blank lines are skipped. Errors are *ParseError
// (line and column, nothing of the content), or the reader's.
func Parse(r io.Reader) (*Trace, error) { return parse(r, MaxPoints) }

// parse is Parse with a cap on the opportunities (tests use a small one).
func parse(r io.Reader, maxPoints int) (*Trace, error) {
	t := &Trace{}
	br := bufio.NewReaderSize(r, maxLine)
	line := 0
	var last int64
	lastLine := 0
	for {
		raw, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, &ParseError{line + 1, maxLine + 1, fmt.Sprintf("a line longer than %d bytes", maxLine)}
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		if len(raw) > 0 {
			line++
			if pe := t.parseLine(raw, line, maxPoints, &last, &lastLine); pe != nil {
				return nil, pe
			}
		}
		if err != nil {
			break
		}
	}
	if len(t.Opportunities) == 0 {
		return nil, fmt.Errorf("the trace has no delivery opportunity")
	}
	t.Period = max(time.Duration(last)*time.Millisecond, time.Millisecond)
	return t, nil
}

// parseLine adds the opportunity of one line (raw, with its newline).
func (t *Trace) parseLine(raw []byte, line, maxPoints int, last *int64, lastLine *int) *ParseError {
	lead := len(raw) - len(bytes.TrimLeft(raw, " \t\r\n\v\f"))
	s := bytes.TrimSpace(raw)
	if len(s) == 0 {
		return nil
	}
	for i, c := range s {
		if c < '0' || c > '9' {
			return &ParseError{line, lead + i + 1, "want a millisecond timestamp ≥ 0 (digits only)"}
		}
	}
	ms, err := strconv.ParseInt(string(s), 10, 64)
	switch {
	case err != nil || ms > 1e9:
		return &ParseError{line, lead + 1, "a timestamp beyond 10^9 ms (11 days) is not supported"}
	case ms < *last:
		return &ParseError{line, lead + 1, fmt.Sprintf("timestamps must not decrease: this one is earlier than line %d's", *lastLine)}
	case len(t.Opportunities) >= maxPoints:
		return &ParseError{line, lead + 1, fmt.Sprintf("over the cap of %d delivery opportunities (max_trace_points)", maxPoints)}
	}
	*last, *lastLine = ms, line
	t.Opportunities = append(t.Opportunities, time.Duration(ms)*time.Millisecond)
	return nil
}

// MeanRate is the trace's average capacity in Mbit/s.
func (t *Trace) MeanRate() float64 {
	return float64(len(t.Opportunities)) * MTU * 8 / t.Period.Seconds() / 1e6
}

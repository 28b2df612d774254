package linktrace

import (
	"bufio"
	"bytes"
	"embed"
	"fmt"
	"io"
	"strconv"
	"strings"
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

// Parse reads a trace in Mahimahi's format.
func Parse(r io.Reader) (*Trace, error) {
	t := &Trace{}
	sc := bufio.NewScanner(r)
	line := 0
	var last int64
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" {
			continue
		}
		ms, err := strconv.ParseInt(s, 10, 64)
		switch {
		case err != nil || ms < 0:
			return nil, fmt.Errorf("line %d: %q: want a millisecond timestamp ≥ 0", line, s)
		case ms < last:
			return nil, fmt.Errorf("line %d: %d ms comes before %d ms: timestamps must not decrease", line, ms, last)
		case ms > 1e9:
			return nil, fmt.Errorf("line %d: %d ms: a trace longer than 11 days is not supported", line, ms)
		}
		last = ms
		t.Opportunities = append(t.Opportunities, time.Duration(ms)*time.Millisecond)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(t.Opportunities) == 0 {
		return nil, fmt.Errorf("the trace has no delivery opportunity")
	}
	t.Period = max(time.Duration(last)*time.Millisecond, time.Millisecond)
	return t, nil
}

// MeanRate is the trace's average capacity in Mbit/s.
func (t *Trace) MeanRate() float64 {
	return float64(len(t.Opportunities)) * MTU * 8 / t.Period.Seconds() / 1e6
}

package netenv

import (
	"bufio"
	"io"
	"slices"
	"strconv"

	"github.com/actfuzz/actfuzz/netenv/observe"
)

// CSVTrace writes state records as CSV. Call Flush at the end.
type CSVTrace struct {
	w       *bufio.Writer
	cols    []observe.Column // the base columns the subject fills (observe.TraceColumns)
	vars    []string         // the subject's variable columns
	varIdx  []int            // their indices in observe.Record.Vars
	started bool
	buf     []byte
	Next    observe.Observer // optional observer to chain
}

// NewCSVTrace writes a trace of a subject with capabilities caps for flows
// whose congestion control is cca (the first flow's decides the variable
// columns): the base columns the subject fills, then its variables for
// cca. A variable named like a base column (BBR's pacing_rate, in Mbit/s)
// is left out: conditions and S read the base one, and a column name
// appears once.
func NewCSVTrace(w io.Writer, caps Capabilities, cca string) *CSVTrace {
	t := &CSVTrace{w: bufio.NewWriterSize(w, 1<<16)}
	for _, c := range observe.TraceColumns {
		if c.Var == "" || c.Var == "time" || c.Var == "flow" || caps.HasBase(c.Var) {
			t.cols = append(t.cols, c)
		}
	}
	for i, v := range caps.VarsOf(cca) {
		if slices.Contains(BaseVars, v.Name) && caps.HasBase(v.Name) || slices.Contains(t.vars, v.Name) {
			continue
		}
		t.vars = append(t.vars, v.Name)
		t.varIdx = append(t.varIdx, i)
	}
	return t
}

// Columns are the trace's column names, in order.
func (t *CSVTrace) Columns() []string {
	out := make([]string, 0, len(t.cols)+len(t.vars))
	for _, c := range t.cols {
		out = append(out, c.Name)
	}
	return append(out, t.vars...)
}

func (t *CSVTrace) header() {
	for i, c := range t.Columns() {
		if i > 0 {
			t.w.WriteByte(',')
		}
		t.w.WriteString(c)
	}
	t.w.WriteByte('\n')
	t.started = true
}

// Observe writes one record.
func (t *CSVTrace) Observe(r *observe.Record) {
	if !t.started {
		t.header()
	}
	b := t.buf[:0]
	for k, c := range t.cols {
		if k > 0 {
			b = append(b, ',')
		}
		b = c.Append(b, r)
	}
	for _, i := range t.varIdx {
		b = append(b, ',')
		if i < len(r.Vars) {
			b = strconv.AppendFloat(b, r.Vars[i], 'g', -1, 64)
		}
	}
	b = append(b, '\n')
	t.w.Write(b)
	t.buf = b
	if t.Next != nil {
		t.Next.Observe(r)
	}
}

// Flush writes buffered output.
func (t *CSVTrace) Flush() error {
	if !t.started {
		t.header()
	}
	return t.w.Flush()
}

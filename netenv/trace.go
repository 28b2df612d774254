package netenv

import (
	"bufio"
	"io"
	"slices"
	"strconv"

	"github.com/actfuzz/actfuzz/netenv/tcp"
)

// TraceColumns are the fixed columns of a CSV state trace; the CCAI's own
// variables follow them. A subject's trace has the columns of the base
// variables it fills (Capabilities.Base), with time, flow and reason
// always.
var TraceColumns = []string{"time_s", "flow", "reason", "cwnd", "ssthresh", "srtt_ms", "rttvar_ms", "rto_ms", "ca_state", "prev_ca_state", "prior_cwnd", "in_flight", "delivered", "pacing_rate"}

// traceColumnVar is the base variable (BaseVars) of each of TraceColumns;
// "" for reason, which every record has.
var traceColumnVar = []string{"time", "flow", "", "cwnd", "ssthresh", "srtt", "rttvar", "rto", "ca_state", "prev_ca_state", "prior_cwnd", "in_flight", "delivered", "pacing_rate"}

// CSVTrace writes state records as CSV. Call Flush at the end.
type CSVTrace struct {
	w       *bufio.Writer
	cols    []int    // indices into TraceColumns
	vars    []string // the subject's variable columns
	varIdx  []int    // their indices in tcp.StateRecord.Vars
	started bool
	buf     []byte
	Next    tcp.Observer // optional observer to chain
}

// NewCSVTrace writes a trace of a subject with capabilities caps for flows
// whose congestion control is cca (the first flow's decides the variable
// columns): the base columns the subject fills, then its variables for
// cca. A variable named like a base column (BBR's pacing_rate, in Mbit/s)
// is left out: conditions and S read the base one, and a column name
// appears once.
func NewCSVTrace(w io.Writer, caps Capabilities, cca string) *CSVTrace {
	t := &CSVTrace{w: bufio.NewWriterSize(w, 1<<16)}
	for i, v := range traceColumnVar {
		if v == "" || v == "time" || v == "flow" || caps.HasBase(v) {
			t.cols = append(t.cols, i)
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
		out = append(out, TraceColumns[c])
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
func (t *CSVTrace) Observe(r *tcp.StateRecord) {
	if !t.started {
		t.header()
	}
	b := t.buf[:0]
	for k, c := range t.cols {
		if k > 0 {
			b = append(b, ',')
		}
		switch c {
		case 0:
			b = strconv.AppendFloat(b, r.Time.Seconds(), 'f', 9, 64)
		case 1:
			b = strconv.AppendInt(b, int64(r.Flow), 10)
		case 2:
			b = append(b, r.Reason.String()...)
		case 3:
			b = strconv.AppendUint(b, uint64(r.Cwnd), 10)
		case 4:
			b = strconv.AppendUint(b, uint64(r.SSThresh), 10)
		case 5:
			b = strconv.AppendFloat(b, float64(r.SRTT)/1e6, 'f', 6, 64)
		case 6:
			b = strconv.AppendFloat(b, float64(r.RTTVar)/1e6, 'f', 6, 64)
		case 7:
			b = strconv.AppendFloat(b, float64(r.RTO)/1e6, 'f', 3, 64)
		case 8:
			b = append(b, r.CAState.String()...)
		case 9:
			b = append(b, r.PrevCAState.String()...)
		case 10:
			b = strconv.AppendUint(b, uint64(r.PriorCwnd), 10)
		case 11:
			b = strconv.AppendUint(b, uint64(r.InFlight), 10)
		case 12:
			b = strconv.AppendUint(b, r.Delivered, 10)
		case 13:
			b = strconv.AppendUint(b, r.PacingRate, 10)
		}
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

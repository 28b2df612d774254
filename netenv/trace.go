package netenv

import (
	"bufio"
	"io"
	"strconv"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv/tcp"
)

// TraceColumns are the fixed columns of a CSV state trace; the CCAI's own
// variables follow them.
var TraceColumns = []string{"time_s", "flow", "reason", "cwnd", "ssthresh", "srtt_ms", "rttvar_ms", "rto_ms", "ca_state", "prev_ca_state", "prior_cwnd", "in_flight", "delivered", "pacing_rate"}

// CSVTrace writes state records as CSV. Call Flush at the end.
type CSVTrace struct {
	w       *bufio.Writer
	vars    []string
	started bool
	buf     []byte
	Next    tcp.Observer // optional observer to chain
}

// NewCSVTrace writes a trace for flows whose CCAI exposes vars (the first
// flow's CCA decides the variable columns).
func NewCSVTrace(w io.Writer, cca string) *CSVTrace {
	t := &CSVTrace{w: bufio.NewWriterSize(w, 1<<16)}
	if a, err := ccai.New(cca); err == nil {
		for _, v := range ccai.VarsOf(a) {
			t.vars = append(t.vars, v.Name)
		}
	}
	return t
}

func (t *CSVTrace) header() {
	for i, c := range TraceColumns {
		if i > 0 {
			t.w.WriteByte(',')
		}
		t.w.WriteString(c)
	}
	for _, v := range t.vars {
		t.w.WriteByte(',')
		t.w.WriteString(v)
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
	b = strconv.AppendFloat(b, r.Time.Seconds(), 'f', 9, 64)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(r.Flow), 10)
	b = append(b, ',')
	b = append(b, r.Reason.String()...)
	b = append(b, ',')
	b = strconv.AppendUint(b, uint64(r.Cwnd), 10)
	b = append(b, ',')
	b = strconv.AppendUint(b, uint64(r.SSThresh), 10)
	b = append(b, ',')
	b = strconv.AppendFloat(b, float64(r.SRTT)/1e6, 'f', 6, 64)
	b = append(b, ',')
	b = strconv.AppendFloat(b, float64(r.RTTVar)/1e6, 'f', 6, 64)
	b = append(b, ',')
	b = strconv.AppendFloat(b, float64(r.RTO)/1e6, 'f', 3, 64)
	b = append(b, ',')
	b = append(b, r.CAState.String()...)
	b = append(b, ',')
	b = append(b, r.PrevCAState.String()...)
	b = append(b, ',')
	b = strconv.AppendUint(b, uint64(r.PriorCwnd), 10)
	b = append(b, ',')
	b = strconv.AppendUint(b, uint64(r.InFlight), 10)
	b = append(b, ',')
	b = strconv.AppendUint(b, r.Delivered, 10)
	b = append(b, ',')
	b = strconv.AppendUint(b, r.PacingRate, 10)
	for i := range t.vars {
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

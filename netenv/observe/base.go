package observe

import "strconv"

// Var is one base state variable of a flow: a variable of the ACT paper's S
// that every Record carries (a subject may leave some zero; see
// netenv.Capabilities.Base). Base is the one list of them: schemas,
// conditions, S, CSV traces and listings derive from it.
type Var struct {
	// Name is the variable's name in S, conditions and schemas.
	Name string
	// Unit is the unit of Value ("" for a count of nothing in particular
	// or a category).
	Unit string
	// Doc says what the variable is, without its unit.
	Doc string
	// Categorical is true when Value is a ccai.CAState (its names are
	// ccai.CAStateNames).
	Categorical bool
	// Value is the observed value, in Unit (times in ms, as in the ACT
	// paper's S; time itself in s).
	Value func(r *Record) float64
	// Column is the variable's column in a CSV state trace, and TraceAt
	// its position among TraceColumns (the trace's order predates the
	// observation order and both are frozen: trace hashes and stored
	// observations depend on them).
	Column  string
	TraceAt int
	// Append appends the variable's trace cell.
	Append func(b []byte, r *Record) []byte
}

// Describe is the variable's doc with its unit, for listings.
func (v Var) Describe() string {
	if v.Unit == "" {
		return v.Doc
	}
	return v.Doc + " (" + v.Unit + ")"
}

// Base lists the base state variables in observation order: a
// variable's index here is its slot in an observation vector (its Src in
// a corpus schema).
var Base = []Var{
	{Name: "cwnd", Unit: "packets", Doc: "congestion window",
		Value:  func(r *Record) float64 { return float64(r.Cwnd) },
		Column: "cwnd", TraceAt: 3, Append: func(b []byte, r *Record) []byte { return strconv.AppendUint(b, uint64(r.Cwnd), 10) }},
	{Name: "ssthresh", Unit: "packets", Doc: "slow-start threshold",
		Value:  func(r *Record) float64 { return float64(r.SSThresh) },
		Column: "ssthresh", TraceAt: 4, Append: func(b []byte, r *Record) []byte { return strconv.AppendUint(b, uint64(r.SSThresh), 10) }},
	{Name: "srtt", Unit: "ms", Doc: "smoothed RTT",
		Value:  func(r *Record) float64 { return float64(r.SRTT) / 1e6 },
		Column: "srtt_ms", TraceAt: 5, Append: func(b []byte, r *Record) []byte { return strconv.AppendFloat(b, float64(r.SRTT)/1e6, 'f', 6, 64) }},
	{Name: "rttvar", Unit: "ms", Doc: "RTT mean deviation",
		Value:  func(r *Record) float64 { return float64(r.RTTVar) / 1e6 },
		Column: "rttvar_ms", TraceAt: 6, Append: func(b []byte, r *Record) []byte { return strconv.AppendFloat(b, float64(r.RTTVar)/1e6, 'f', 6, 64) }},
	{Name: "ca_state", Doc: "congestion-avoidance state", Categorical: true,
		Value:  func(r *Record) float64 { return float64(r.CAState) },
		Column: "ca_state", TraceAt: 8, Append: func(b []byte, r *Record) []byte { return append(b, r.CAState.String()...) }},
	{Name: "prev_ca_state", Doc: "ca_state before the last change", Categorical: true,
		Value:  func(r *Record) float64 { return float64(r.PrevCAState) },
		Column: "prev_ca_state", TraceAt: 9, Append: func(b []byte, r *Record) []byte { return append(b, r.PrevCAState.String()...) }},
	{Name: "prior_cwnd", Doc: "cwnd when the last reduction started",
		Value:  func(r *Record) float64 { return float64(r.PriorCwnd) },
		Column: "prior_cwnd", TraceAt: 10, Append: func(b []byte, r *Record) []byte { return strconv.AppendUint(b, uint64(r.PriorCwnd), 10) }},
	{Name: "in_flight", Doc: "packets in flight",
		Value:  func(r *Record) float64 { return float64(r.InFlight) },
		Column: "in_flight", TraceAt: 11, Append: func(b []byte, r *Record) []byte { return strconv.AppendUint(b, uint64(r.InFlight), 10) }},
	{Name: "delivered", Doc: "packets delivered",
		Value:  func(r *Record) float64 { return float64(r.Delivered) },
		Column: "delivered", TraceAt: 12, Append: func(b []byte, r *Record) []byte { return strconv.AppendUint(b, r.Delivered, 10) }},
	{Name: "rto", Unit: "ms", Doc: "retransmission timeout",
		Value:  func(r *Record) float64 { return float64(r.RTO) / 1e6 },
		Column: "rto_ms", TraceAt: 7, Append: func(b []byte, r *Record) []byte { return strconv.AppendFloat(b, float64(r.RTO)/1e6, 'f', 3, 64) }},
	{Name: "pacing_rate", Unit: "bytes/s", Doc: "pacing rate",
		Value:  func(r *Record) float64 { return float64(r.PacingRate) },
		Column: "pacing_rate", TraceAt: 13, Append: func(b []byte, r *Record) []byte { return strconv.AppendUint(b, r.PacingRate, 10) }},
	{Name: "time", Unit: "s", Doc: "simulated time",
		Value:  func(r *Record) float64 { return r.Time.Seconds() },
		Column: "time_s", TraceAt: 0, Append: func(b []byte, r *Record) []byte { return strconv.AppendFloat(b, r.Time.Seconds(), 'f', 9, 64) }},
	{Name: "flow", Doc: "the flow's index, from 0 (the campaign's ccai: order)",
		Value:  func(r *Record) float64 { return float64(r.Flow) },
		Column: "flow", TraceAt: 1, Append: func(b []byte, r *Record) []byte { return strconv.AppendInt(b, int64(r.Flow), 10) }},
}

// Names lists the names of Base, in observation order.
func Names() []string {
	out := make([]string, len(Base))
	for i, v := range Base {
		out[i] = v.Name
	}
	return out
}

// Column is one column of a CSV state trace.
type Column struct {
	// Name is the column's header.
	Name string
	// Var is the base variable it shows; "" for the reason column, which
	// every record has.
	Var string
	// Append appends the column's cell.
	Append func(b []byte, r *Record) []byte
}

// reasonColumn is the trace column that is no variable of S: why the
// record was emitted.
var reasonColumn = Column{Name: "reason", Append: func(b []byte, r *Record) []byte { return append(b, r.Reason.String()...) }}

// reasonAt is reasonColumn's position among TraceColumns.
const reasonAt = 2

// TraceColumns are the fixed columns of a CSV state trace, in trace order:
// every base variable's (at its TraceAt) and the reason. A CCAI's own
// variables follow them.
var TraceColumns = traceColumns()

func traceColumns() []Column {
	out := make([]Column, len(Base)+1)
	out[reasonAt] = reasonColumn
	for _, v := range Base {
		out[v.TraceAt] = Column{Name: v.Column, Var: v.Name, Append: v.Append} // distinct positions: TestTraceColumns
	}
	return out
}

// Values fills dst[:len(Base)] with r's base variables in observation
// order: what each Base entry's Value gives, without a call per variable.
// It is the per-ACK path (corpus.Observe): the 13 indirect calls of a
// loop over Base doubled the cost of an observation (corpus
// BenchmarkObserve). TestValuesIsBase keeps it equal to Base.
func Values(r *Record, dst []float64) {
	_ = dst[len(Base)-1]
	dst[0] = float64(r.Cwnd)
	dst[1] = float64(r.SSThresh)
	dst[2] = float64(r.SRTT) / 1e6
	dst[3] = float64(r.RTTVar) / 1e6
	dst[4] = float64(r.CAState)
	dst[5] = float64(r.PrevCAState)
	dst[6] = float64(r.PriorCwnd)
	dst[7] = float64(r.InFlight)
	dst[8] = float64(r.Delivered)
	dst[9] = float64(r.RTO) / 1e6
	dst[10] = float64(r.PacingRate)
	dst[11] = r.Time.Seconds()
	dst[12] = float64(r.Flow)
}

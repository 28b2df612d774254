package corpus

import (
	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv/tcp"
)

// BaseVars are the state variables of every flow, in observation order.
// Times are in ms, as in the ACT paper's S.
var BaseVars = Schema{
	{Name: "cwnd"}, {Name: "ssthresh"}, {Name: "srtt"}, {Name: "rttvar"},
	{Name: "ca_state", Values: ccai.CAStateNames[:]},
	{Name: "prev_ca_state", Values: ccai.CAStateNames[:]},
	{Name: "prior_cwnd"}, {Name: "in_flight"}, {Name: "delivered"},
	{Name: "rto"}, {Name: "pacing_rate"}, {Name: "time"}, {Name: "flow"},
}

// SchemaFor is the observation schema of flows running cca: BaseVars and
// then the CCAI's own variables.
func SchemaFor(cca string) Schema {
	s := append(Schema(nil), BaseVars...)
	if a, err := ccai.New(cca); err == nil {
		for _, v := range ccai.VarsOf(a) {
			s = append(s, Var{Name: v.Name, Values: v.Values})
		}
	}
	return s
}

// Observe fills dst (len = len(SchemaFor(cca))) from a state record.
func Observe(r *tcp.StateRecord, dst []float64) {
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
	copy(dst[len(BaseVars):], r.Vars)
}

// StateMap renders an observation as name → value for seed files.
func StateMap(schema Schema, obs []float64) map[string]any {
	m := make(map[string]any, len(schema))
	for i, v := range schema {
		if len(v.Values) > 0 {
			if k := int(obs[i]); k >= 0 && k < len(v.Values) {
				m[v.Name] = v.Values[k]
				continue
			}
		}
		m[v.Name] = obs[i]
	}
	return m
}

package corpus

import (
	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

// BaseVars are the state variables of every flow (observe.Base), in
// observation order, with their categories. Times are in ms, as in the ACT
// paper's S. A subject fills all or some of them
// (netenv.Capabilities.Base).
var BaseVars = baseVars()

func baseVars() Schema {
	s := make(Schema, len(observe.Base))
	for i, v := range observe.Base {
		s[i] = Var{Name: v.Name, Src: i}
		if v.Categorical {
			s[i].Values = ccai.CAStateNames[:]
		}
	}
	return s
}

// SchemaFor is the observation schema of flows running cca on the native
// subject: BaseVars and then the CCAI's own variables.
func SchemaFor(cca string) Schema { return SchemaOf(netenv.NativeCapabilities(), cca) }

// SchemaOf is the observation schema of flows running cca on a subject
// with capabilities caps: the base variables the subject fills, then its
// own variables for cca. Nothing the subject does not provide appears, so
// a condition, S or a finding cannot read a variable that would only ever
// be 0. A subject variable named like a provided base variable (BBR's
// pacing_rate in Mbit/s beside the base one in bytes/s) is left out: a
// name means one value.
func SchemaOf(caps netenv.Capabilities, cca string) Schema {
	var s Schema
	for _, v := range BaseVars {
		if caps.HasBase(v.Name) {
			s = append(s, v)
		}
	}
	for j, v := range caps.VarsOf(cca) {
		if s.Index(v.Name) >= 0 {
			continue
		}
		s = append(s, Var{Name: v.Name, Values: v.Values, Src: len(BaseVars) + j})
	}
	for _, v := range DerivedVars {
		if s.Index(v.Name) < 0 {
			s = append(s, v)
		}
	}
	return s
}

// Observe fills dst (len = len(SchemaFor(cca))) from a state record, for
// the native schema of any CCAI without a variable named like a base one.
func Observe(r *observe.Record, dst []float64) {
	observeBase(r, dst)
	copy(dst[len(BaseVars):], r.Vars)
}

// observeBase fills dst[:len(observe.Base)], each slot from its
// variable's Value (observe.Values: the same, without a call per slot).
func observeBase(r *observe.Record, dst []float64) {
	observe.Values(r, dst)
}

// Observe fills dst (len(s)) from a state record, each variable from its
// Src. A variable whose value the record lacks is 0.
func (s Schema) Observe(r *observe.Record, dst []float64) {
	if s.identity() {
		// The native schema: the common case, in the per-ACK path.
		Observe(r, dst)
		return
	}
	for i, v := range s {
		switch j := v.Src - len(BaseVars); {
		case v.Src < 0:
			// Derived (DerivedVars): the Watcher fills it.
		case v.Src < len(BaseVars):
			dst[i] = observe.Base[v.Src].Value(r)
		case j < len(r.Vars):
			dst[i] = r.Vars[j]
		default:
			dst[i] = 0
		}
	}
}

// identity says whether s is BaseVars followed by the record's variables
// in order (every Src its position).
func (s Schema) identity() bool {
	n := s.observed()
	return n >= len(BaseVars) && s[n-1].Src == n-1 && s[len(BaseVars)-1].Src == len(BaseVars)-1
}

// observed is the number of variables taken from the record: those
// before the derived ones (DerivedVars, always last).
func (s Schema) observed() int {
	n := len(s)
	for n > 0 && s[n-1].Src < 0 {
		n--
	}
	return n
}

// Names lists the schema's variable names, in order.
func (s Schema) Names() []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = v.Name
	}
	return out
}

// Has says whether the schema has a variable name.
func (s Schema) Has(name string) bool { return s.Index(name) >= 0 }

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

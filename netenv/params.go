package netenv

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// This file is the one parameter table of P (ACT §4.1). Every consumer of
// the parameters derives from it: Env's Get, Set and Validate, a
// campaign's default ranges and its YAML decoding, the CLI's environment
// flags, `actfuzz list`, the fuzz input decoder (one word per row),
// minimization's simplification rules and the subjects' mappings (each
// subject declares the rows it can express in its Capabilities).
//
// Adding a parameter of P is: a field of Env, one row here, its semantics
// in the link model (link.go's Apply and what reads the field), and its
// mapping in each subject that can express it. Nothing else names
// parameters one by one.

// ParamKind says how a parameter's values are ordered.
type ParamKind uint8

const (
	// Numeric parameters take real values on a grid; ACT interpolates and
	// extrapolates them.
	Numeric ParamKind = iota
	// Categorical parameters take one of Param.Values (stored in Env as
	// the value's index); ACT chooses among them and never interpolates.
	Categorical
)

func (k ParamKind) String() string {
	if k == Categorical {
		return "categorical"
	}
	return "numeric"
}

// Param is one row of the parameter table.
type Param struct {
	// Name is the parameter's flag, YAML and JSON name.
	Name string
	// Unit is the unit of its values ("" when it has none).
	Unit string
	// Doc says what it means, for flags and `actfuzz list`.
	Doc string
	// Kind is Numeric or Categorical.
	Kind ParamKind
	// Values are a categorical parameter's choices; Env stores the index.
	Values []string
	// Integer parameters hold whole numbers (Set rounds).
	Integer bool
	// Default is its value in DefaultEnv (`actfuzz sim` without flags).
	Default float64
	// Range is its extent in a campaign that does not set it: P of ACT
	// §4.1 (the buffer range is our own).
	Range Range
	// Min and Max bound the values the simulator can represent (Max may
	// be +Inf); MinOpen excludes Min itself.
	Min, Max float64
	MinOpen  bool
	// Simplify are minimization's rules for this parameter (corpus
	// applies them stage by stage, rows in table order within a stage).
	Simplify []Simplification

	get func(*Env) float64
	set func(*Env, float64)
}

// Simplification is one rule minimization tries on a phase's environment:
// Apply changes it and reports whether anything changed.
type Simplification struct {
	Name string
	// Stage orders rules across parameters: first every stage-0 rule
	// (remove a nuisance: loss, random queuing, a slow application), then
	// stage 1 (round the path: bandwidth, delay, buffer), then stage 2
	// (round the nuisances).
	Stage int
	// Apply, if set, is a rule over the whole environment; otherwise the
	// rule maps the parameter's value (see Param.Apply).
	Apply func(e *Env) bool
	rule  func(cur float64) (v float64, changed bool)
}

// Stages of Simplification.Stage.
const (
	StageRemove = iota
	StageRoundPath
	StageRoundNoise
)

// Limits on parameters that the simulator can represent. Beyond them a run
// would be meaningless (zero bandwidth) or overflow nanosecond arithmetic.
const (
	MinBW     = 1e-3 // Mbit/s
	MaxBW     = 1e6  // Mbit/s (1 Tbit/s)
	MaxDelay  = 1e6  // ms
	MaxQMean  = 1e6  // ms, shape × scale
	MaxBuffer = 1 << 24
	// UnlimitedApp is the application rate minimization sets for "an
	// application faster than any link" (DefaultEnv's).
	UnlimitedApp = 10000
)

// params is the table. It is an array so that NumParams is a constant
// (the fuzz input layout's words per phase).
var params = [...]Param{
	{
		Name: "loss", Doc: "random loss probability per data packet",
		Default: 1e-4, Range: Range{Min: 0, Max: 0.1, Step: 1e-6}, Min: 0, Max: 1,
		Simplify: []Simplification{
			setTo("no random loss", StageRemove, 0),
			roundDigits("loss to 1 significant digit", StageRoundNoise, 1, false),
		},
		get: func(e *Env) float64 { return e.Loss }, set: func(e *Env, v float64) { e.Loss = v },
	},
	{
		Name: "bw", Unit: "Mbit/s", Doc: "bottleneck bandwidth",
		Default: 10, Range: Range{Min: 0.1, Max: 10000, Step: 0.1}, Min: MinBW, Max: MaxBW,
		Simplify: []Simplification{
			roundDigits("bandwidth to 1 significant digit", StageRoundPath, 1, true),
			roundDigits("bandwidth to 2 significant digits", StageRoundPath, 2, true),
		},
		get: func(e *Env) float64 { return e.BW }, set: func(e *Env, v float64) { e.BW = v },
	},
	{
		Name: "delay", Unit: "ms", Doc: "one-way propagation delay",
		Default: 20, Range: Range{Min: 1, Max: 1000, Step: 1}, Min: 0, Max: MaxDelay,
		Simplify: []Simplification{
			roundDigits("delay to 1 significant digit", StageRoundPath, 1, false),
			roundDigits("delay to 2 significant digits", StageRoundPath, 2, false),
		},
		get: func(e *Env) float64 { return e.Delay }, set: func(e *Env, v float64) { e.Delay = v },
	},
	{
		Name: "qshape", Doc: "Gamma shape of the random per-packet queuing delay",
		Default: 0, Range: Range{Min: 0, Max: 20, Step: 0.01}, Min: 0, Max: math.Inf(1),
		Simplify: []Simplification{
			// Both Gamma parameters at once: either alone at 0 already
			// removes the delay, and the seed should read as such.
			{Name: "no random queuing delay", Stage: StageRemove, Apply: func(e *Env) bool {
				ch := e.QShape != 0 || e.QScale != 0
				e.QShape, e.QScale = 0, 0
				return ch
			}},
			roundDigits("queuing shape to 1 significant digit", StageRoundNoise, 1, false),
		},
		get: func(e *Env) float64 { return e.QShape }, set: func(e *Env, v float64) { e.QShape = v },
	},
	{
		Name: "qscale", Unit: "ms", Doc: "Gamma scale of the random per-packet queuing delay",
		Default: 0, Range: Range{Min: 0, Max: 80, Step: 0.01}, Min: 0, Max: math.Inf(1),
		Simplify: []Simplification{
			roundDigits("queuing scale to 1 significant digit", StageRoundNoise, 1, false),
		},
		get: func(e *Env) float64 { return e.QScale }, set: func(e *Env, v float64) { e.QScale = v },
	},
	{
		Name: "app", Unit: "Mbit/s", Doc: "application sending rate",
		Default: UnlimitedApp, Range: Range{Min: 0.001, Max: 10000, Step: 0.1}, Min: 0, MinOpen: true, Max: MaxBW * 10,
		Simplify: []Simplification{
			setTo("unlimited application", StageRemove, UnlimitedApp),
		},
		get: func(e *Env) float64 { return e.App }, set: func(e *Env, v float64) { e.App = v },
	},
	{
		Name: "buffer", Unit: "packets", Doc: "bottleneck buffer", Integer: true,
		Default: 100, Range: Range{Min: 2, Max: 10000, Step: 1}, Min: 1, Max: MaxBuffer,
		Simplify: []Simplification{
			roundDigits("buffer to 1 significant digit", StageRoundPath, 1, true),
		},
		get: func(e *Env) float64 { return float64(e.Buffer) },
		set: func(e *Env, v float64) { e.Buffer = int(math.Round(v)) },
	},
	// The rows below are fixed at their default in a campaign that does
	// not name them (a one-point range), so P and every draw of ACT are
	// the paper's unless a campaign asks for them.
	{
		Name: "aqm", Doc: "queue discipline of the bottleneck (RED with ns-3's defaults; CoDel per RFC 8289; PIE per RFC 8033, 15 ms target)",
		Kind: Categorical, Values: AQMNames[:],
		Default: float64(AQMDropTail), Range: Range{Values: []string{AQMNames[AQMDropTail]}},
		Simplify: []Simplification{setTo("drop-tail queue", StageRemove, float64(AQMDropTail))},
		get:      func(e *Env) float64 { return float64(e.AQM) }, set: func(e *Env, v float64) { e.AQM = AQM(v) },
	},
	{
		Name: "codel_target", Unit: "ms", Doc: "CoDel's target queuing delay (with aqm codel; 0: RFC 8289's 5 ms)",
		Default: 0, Range: Range{Min: 0, Max: 0, Step: 0.1}, Min: 0, Max: MaxDelay,
		get: func(e *Env) float64 { return e.CoDelTarget }, set: func(e *Env, v float64) { e.CoDelTarget = v },
	},
	{
		Name: "codel_interval", Unit: "ms", Doc: "CoDel's interval (with aqm codel; 0: RFC 8289's 100 ms)",
		Default: 0, Range: Range{Min: 0, Max: 0, Step: 1}, Min: 0, Max: MaxDelay,
		get: func(e *Env) float64 { return e.CoDelInterval }, set: func(e *Env, v float64) { e.CoDelInterval = v },
	},
	{
		Name: "policer_rate", Unit: "Mbit/s", Doc: "token-bucket policer in front of the bottleneck, dropping what exceeds (0: none)",
		Default: 0, Range: Range{Min: 0, Max: 0, Step: 0.1}, Min: 0, Max: MaxBW,
		Simplify: []Simplification{setTo("no policer", StageRemove, 0)},
		get:      func(e *Env) float64 { return e.PolicerRate }, set: func(e *Env, v float64) { e.PolicerRate = v },
	},
	{
		Name: "policer_burst", Unit: "kB", Doc: "the policer's bucket (at least one packet)",
		Default: 0, Range: Range{Min: 0, Max: 0, Step: 1}, Min: 0, Max: 1e6,
		get: func(e *Env) float64 { return e.PolicerBurst }, set: func(e *Env, v float64) { e.PolicerBurst = v },
	},
	{
		Name: "ack_agg", Unit: "ms", Doc: "ACKs held on the reverse path and released together every so often, as Wi-Fi and DOCSIS do (0: none)",
		Default: 0, Range: Range{Min: 0, Max: 0, Step: 1}, Min: 0, Max: 10000,
		Simplify: []Simplification{setTo("no ACK aggregation", StageRemove, 0)},
		get:      func(e *Env) float64 { return e.AckAgg }, set: func(e *Env, v float64) { e.AckAgg = v },
	},
	{
		Name: "ack_agg_max", Unit: "packets", Doc: "ACKs released at once as soon as this many are held (0: no limit)", Integer: true,
		Default: 0, Range: Range{Min: 0, Max: 0, Step: 1}, Min: 0, Max: 1 << 20,
		get: func(e *Env) float64 { return float64(e.AckAggMax) },
		set: func(e *Env, v float64) { e.AckAggMax = int(math.Round(v)) },
	},
	{
		Name: "link_trace", Doc: "a trace-driven bottleneck (Mahimahi format: the shipped traces, or user1 … user4, your files: a campaign's link_traces:, sim's --link-trace-file; none: the fixed rate bw)",
		Kind: Categorical, Values: LinkTraceNames,
		Default: 0, Range: Range{Values: LinkTraceNames[:1]},
		Simplify: []Simplification{setTo("fixed-rate link", StageRemove, 0)},
		get:      func(e *Env) float64 { return float64(e.Trace) }, set: func(e *Env, v float64) { e.Trace = LinkTrace(v) },
	},
	{
		Name: "link_trace_scale", Doc: "factor on the link trace's rate (with link_trace; 0: 1)",
		Default: 0, Range: Range{Min: 0, Max: 0, Step: 0.1}, Min: 0, Max: 1000,
		get: func(e *Env) float64 { return e.TraceScale }, set: func(e *Env, v float64) { e.TraceScale = v },
	},
	{
		Name: "ecn", Doc: "explicit congestion notification (RFC 3168): negotiated by the endpoints, marked by the bottleneck",
		Kind: Categorical, Values: ECNNames[:],
		Default: 0, Range: Range{Values: ECNNames[:1]},
		Simplify: []Simplification{setTo("no ECN", StageRemove, 0)},
		get:      func(e *Env) float64 { return float64(e.ECN) }, set: func(e *Env, v float64) { e.ECN = ECNMode(v) },
	},
	{
		Name: "ecn_k", Unit: "packets", Doc: "with ecn: mark every packet arriving to a queue of at least this many (DCTCP's K; 0: none)", Integer: true,
		Default: 0, Range: Range{Min: 0, Max: 0, Step: 1}, Min: 0, Max: MaxBuffer,
		get: func(e *Env) float64 { return float64(e.ECNK) },
		set: func(e *Env, v float64) { e.ECNK = int(math.Round(v)) },
	},
}

// NumParams is the number of parameters of P.
const NumParams = len(params)

// Params returns the parameter table, in its order (the order of Env.Get,
// of campaign ranges and of fuzz input words). The slice is the caller's.
func Params() []Param { return slices.Clone(params[:]) }

// ParamAt returns row i of the table.
func ParamAt(i int) *Param { return &params[i] }

// ParamIndex returns the row of the parameter called name, or -1.
func ParamIndex(name string) int {
	for i := range params {
		if params[i].Name == name {
			return i
		}
	}
	return -1
}

// ParamNames lists the parameter names in table order.
func ParamNames() []string {
	out := make([]string, len(params))
	for i := range params {
		out[i] = params[i].Name
	}
	return out
}

// ParamNamesWithoutECN lists the parameters a subject expresses when ECN
// codepoints do not reach its stack (ecn and ecn_k left out): the kernel's
// emulator and gVisor's harness do not rewrite IP headers, quic-go reads
// ECN only from a real UDP socket.
func ParamNamesWithoutECN() []string {
	var out []string
	for _, n := range ParamNames() {
		if n != "ecn" && n != "ecn_k" {
			out = append(out, n)
		}
	}
	return out
}

// Get returns the parameter's value in e.
func (p *Param) Get(e *Env) float64 { return p.get(e) }

// Set sets the parameter's value in e.
func (p *Param) Set(e *Env, v float64) { p.set(e, v) }

// Label is the name with its unit, for flags and tables: "bw (Mbit/s)".
func (p *Param) Label() string {
	if p.Unit == "" {
		return p.Name
	}
	return p.Name + " (" + p.Unit + ")"
}

// Check reports why v is not a value of the parameter, naming it.
func (p *Param) Check(v float64) error {
	bad := func(why string) error { return fmt.Errorf("parameter %s = %v: %s", p.Name, p.format(v), why) }
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return bad("must be a finite number")
	}
	if p.Kind == Categorical {
		if v < 0 || int(v) >= len(p.Values) || v != math.Trunc(v) {
			return bad(fmt.Sprintf("must be one of %v", p.Values))
		}
		return nil
	}
	unit := ""
	if p.Unit != "" {
		unit = " " + p.Unit
	}
	below := v < p.Min || (p.MinOpen && v == p.Min)
	switch {
	case (below || v > p.Max) && math.IsInf(p.Max, 1):
		return bad(fmt.Sprintf("must be %s %s%s", map[bool]string{false: "≥", true: ">"}[p.MinOpen], num(p.Min), unit))
	case below || v > p.Max:
		open := "["
		if p.MinOpen {
			open = "("
		}
		return bad(fmt.Sprintf("must be in %s%s, %s]%s", open, num(p.Min), num(p.Max), unit))
	}
	return nil
}

// num renders a bound: whole numbers in full (16777216, not 1.68e+07).
func num(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// format renders a value for messages: a categorical value by name.
func (p *Param) format(v float64) string {
	if p.Kind == Categorical && v >= 0 && int(v) < len(p.Values) && v == math.Trunc(v) {
		return p.Values[int(v)]
	}
	return fmt.Sprint(v)
}

// Format renders the parameter's value in e, by name when categorical.
func (p *Param) Format(e *Env) string { return p.format(p.Get(e)) }

// Parse reads a flag or YAML value: a number, or a categorical value's
// name.
func (p *Param) Parse(s string) (float64, error) {
	if p.Kind == Categorical {
		if i := slices.Index(p.Values, s); i >= 0 {
			return float64(i), nil
		}
		return 0, fmt.Errorf("parameter %s: %q is not one of %v", p.Name, s, p.Values)
	}
	var v float64
	if _, err := fmt.Sscan(s, &v); err != nil {
		return 0, fmt.Errorf("parameter %s: %q is not a number", p.Name, s)
	}
	if p.Integer && v != math.Trunc(v) {
		return 0, fmt.Errorf("parameter %s: %q is not a whole number", p.Name, s)
	}
	return v, p.Check(v)
}

// setTo is a rule that sets the parameter to v.
func setTo(name string, stage int, v float64) Simplification {
	return Simplification{Name: name, Stage: stage, rule: func(cur float64) (float64, bool) { return v, cur != v }}
}

// roundDigits is a rule that rounds the parameter to digits significant
// digits (never to 0 when positive is set).
func roundDigits(name string, stage int, digits int, positive bool) Simplification {
	return Simplification{Name: name, Stage: stage, rule: func(cur float64) (float64, bool) {
		v := RoundTo(cur, digits)
		return v, v != cur && (!positive || v > 0)
	}}
}

// Apply applies rule s of this parameter to e and reports whether e
// changed.
func (p *Param) Apply(s Simplification, e *Env) bool {
	if s.Apply != nil {
		return s.Apply(e)
	}
	v, changed := s.rule(p.get(e))
	if changed {
		p.set(e, v)
	}
	return changed
}

// RoundTo rounds v to digits significant digits.
func RoundTo(v float64, digits int) float64 {
	if v == 0 {
		return 0
	}
	p := math.Pow(10, float64(digits)-math.Ceil(math.Log10(math.Abs(v))))
	return math.Round(v*p) / p
}

// CheckExpressible reports the first parameter outside supported (names
// of the table) that some phase of sched sets away from its default: a
// subject that cannot express a parameter must refuse a run that needs it
// rather than run it as if it were at its default.
func CheckExpressible(sched Schedule, supported []string, subject string) error {
	for i := range params {
		p := &params[i]
		if slices.Contains(supported, p.Name) {
			continue
		}
		for k := range sched {
			if v := p.get(&sched[k].Env); v != p.Default {
				return fmt.Errorf("the %s subject cannot express parameter %s = %s (phase %d; it expresses %s)", subject, p.Name, p.format(v), k+1, strings.Join(supported, ", "))
			}
		}
	}
	return nil
}

package ns3

import (
	"math"
	"strconv"

	"github.com/actfuzz/actfuzz/netenv"
)

// phaseParam maps one parameter of P (a row of netenv's parameter table)
// onto a key=value pair of the driver's PHASE line, in the driver's units.
type phaseParam struct {
	param string // the table's name
	key   string // the driver's key
	value func(e *netenv.Env) string
}

// phaseParams are the parameters of P this subject expresses; the
// driver requires each key exactly once and refuses any other, so a row
// added to the table without a mapping here is refused by Capabilities
// (a campaign varying it exits 2), and a mapping without a driver meaning
// is an ERR from the driver, never a silently ignored parameter.
var phaseParams = []phaseParam{
	{"loss", "loss", func(e *netenv.Env) string { return fmtFloat(e.Loss) }},
	{"bw", "bw_bps", func(e *netenv.Env) string { return strconv.FormatUint(uint64(math.Round(e.BW*1e6)), 10) }},
	{"delay", "delay_ns", func(e *netenv.Env) string { return strconv.FormatInt(int64(math.Round(e.Delay*1e6)), 10) }},
	{"qshape", "qshape", func(e *netenv.Env) string { return fmtFloat(e.QShape) }},
	{"qscale", "qscale_ms", func(e *netenv.Env) string { return fmtFloat(e.QScale) }},
	{"app", "app_bps", func(e *netenv.Env) string { return strconv.FormatUint(appBPS(e), 10) }},
	{"buffer", "buffer", func(e *netenv.Env) string { return strconv.Itoa(e.Buffer) }},
	// The queue discipline: the driver installs RedQueueDisc or
	// CoDelQueueDisc (doc.go); it must be the same in every phase
	// (checkConfig refuses a schedule that changes it).
	{"aqm", "aqm", func(e *netenv.Env) string { return e.AQM.String() }},
	// CoDel's target and interval with RFC 8289's defaults resolved here,
	// so the driver never guesses them (they apply with aqm codel only).
	{"codel_target", "codel_target_ns", func(e *netenv.Env) string { return msOr(e.CoDelTarget, 5) }},
	{"codel_interval", "codel_interval_ns", func(e *netenv.Env) string { return msOr(e.CoDelInterval, 100) }},
	// ECN: the sockets' UseEcn when any phase has it on, the queue disc's
	// UseEcn in the phases that have it on.
	{"ecn", "ecn", func(e *netenv.Env) string { return strconv.Itoa(int(e.ECN)) }},
}

// msOr is v ms in nanoseconds, or def ms when v is 0.
func msOr(v, def float64) string {
	if v == 0 {
		v = def
	}
	return strconv.FormatInt(int64(math.Round(v*1e6)), 10)
}

// Params names the parameters of P the ns-3 subject expresses.
func Params() []string {
	out := make([]string, len(phaseParams))
	for i, p := range phaseParams {
		out[i] = p.param
	}
	return out
}

// appendPhase appends the PHASE line of one phase.
func appendPhase(b []byte, p *netenv.Phase) []byte {
	b = append(b, "PHASE "...)
	b = strconv.AppendInt(b, int64(p.Until), 10)
	for _, pp := range phaseParams {
		b = append(b, ' ')
		b = append(b, pp.key...)
		b = append(b, '=')
		b = append(b, pp.value(&p.Env)...)
	}
	return append(b, '\n')
}

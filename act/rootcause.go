package act

import (
	"fmt"
	"slices"
	"strings"

	"github.com/actfuzz/actfuzz/corpus"
)

// rootCause is what a finding group holds in common: what a congestion-
// control engineer would call one cause (docs/findings.md). Two hits
// share it when they are
//   - the same condition or oracle (or fault kind: a faulty condition's
//     name too),
//   - in the same congestion control (the hit flow's CCAI), on the same
//     subject,
//   - with the flow in the same role: alone, or competing with the same
//     congestion controls,
//   - in the same phase of the congestion-control state machine at the
//     hit: Linux's ca_state (RFC 5681 §3.1 slow start or congestion
//     avoidance while open, cwnd against ssthresh; RFC 6582/6675 fast
//     recovery; RFC 6298 timeout loss) and the state it was entered
//     from, on the same event (the record's reason: an ACK, a loss, a
//     timeout), with the CCAI's own named states (BBR's mode) equal.
//
// Not in it: the numbers (cwnd, srtt, ...) and the environment, which
// differ between hits of one cause; grouping by the region of S at k =
// 128 gave nearly one group per simulation.
type rootCause struct {
	what, ccai, subject, role, phase string
}

// causeOf is the root cause of finding f on a subject, the campaign's
// flows running ccais.
func causeOf(ccais []string, subject string, f *corpus.Finding) rootCause {
	rc := rootCause{subject: subject, phase: phaseOf(f.State)}
	switch f.Kind {
	case "condition":
		rc.what = f.Condition
	case corpus.FaultCondition:
		rc.what = "fault " + f.Kind + " " + f.Condition
	default:
		rc.what = "fault " + f.Kind
	}
	if f.Flow >= 0 && f.Flow < len(ccais) {
		rc.ccai = ccais[f.Flow]
		rc.role = roleOf(ccais, f.Flow)
	} else {
		rc.ccai = strings.Join(ccais, "+")
	}
	return rc
}

// key is the group's key: the fields, separated by a character none of
// them has (names are printable: internal/names).
func (rc rootCause) key() string {
	return strings.Join([]string{rc.what, rc.ccai, rc.subject, rc.role, rc.phase}, "\x1f")
}

// String is the cause as the triage shows it: "cubic on native, alone,
// in congestion avoidance (entered from recovery), on an ACK".
func (rc rootCause) String() string {
	s := rc.ccai + " on " + rc.subject
	if rc.role != "" {
		s += ", " + rc.role
	}
	if rc.phase != "" {
		s += ", " + rc.phase
	}
	return s
}

// roleOf is flow i's role among flows running ccais: alone, or with the
// others' congestion controls (sorted, each once).
func roleOf(ccais []string, i int) string {
	if len(ccais) == 1 {
		return "alone"
	}
	var others []string
	for j, c := range ccais {
		if j != i && !slices.Contains(others, c) {
			others = append(others, c)
		}
	}
	slices.Sort(others)
	return fmt.Sprintf("with %s of %s", Plural(len(ccais)-1, "flow"), strings.Join(others, "+"))
}

// phaseOf is the state-machine phase of a hit's state: ca_state, and
// while open whether cwnd is below ssthresh (slow start, RFC 5681 §3.1)
// or not (congestion avoidance); the state it was entered from
// (prev_ca_state); the event of the record (reason: an ACK, a loss, a
// timeout); then the CCAI's other named states (a categorical variable:
// BBR's mode). "" when the state has none of them (a panic).
func phaseOf(state corpus.StateValues) string {
	str := func(k string) string { v, _ := state[k].(string); return v }
	var parts []string
	ca := str("ca_state")
	phase := ca
	if ca == "open" {
		cwnd, ok1 := state["cwnd"].(float64)
		ssthresh, ok2 := state["ssthresh"].(float64)
		switch {
		case ok1 && ok2 && cwnd < ssthresh:
			phase = "slow start"
		case ok1 && ok2:
			phase = "congestion avoidance"
		}
	}
	if prev := str("prev_ca_state"); prev != "" && prev != ca {
		phase += " (entered from " + prev + ")"
	}
	if phase != "" {
		parts = append(parts, "in "+phase)
	}
	switch r := str("reason"); r {
	case "":
	case "ack":
		parts = append(parts, "on an ACK")
	case "state":
		parts = append(parts, "at the ca_state change")
	case "rto":
		parts = append(parts, "on an RTO")
	case "idle":
		parts = append(parts, "after idle")
	default:
		parts = append(parts, "on "+r)
	}
	var named []string
	for k, v := range state {
		if s, ok := v.(string); ok && k != "ca_state" && k != "prev_ca_state" && k != "reason" {
			named = append(named, k+" "+s)
		}
	}
	slices.Sort(named)
	return strings.Join(append(parts, named...), ", ")
}

// RootCause is the group's cause as the triage shows it.
func (g *FindingGroup) RootCause() string {
	return causeOf(g.Seed.CCAI, g.Seed.Subject, g.Seed.Finding).String()
}

package pktexport

import (
	"regexp"
	"slices"
	"strings"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/netenv/pkt"
)

// A finding's condition as a packetdrill assert: when it reads only state
// TCP_INFO has (cwnd, ssthresh, ca_state, their prev.*), it is written in
// Python over tcpi_* fields, with prev.X saved as prev_X by a block before
// the hit's ACK (packetdrill runs a script's blocks as one Python
// program). The kernel then holds the finding when the condition holds at
// that ACK, whatever the exact window: the kernel and the model may differ
// by a segment there (PRR's rounding, RACK's marking) and still show the
// same behaviour.

// tcpInfoOrder are the state variables TCP_INFO reports exactly, in the
// order the script asserts them; tcpInfoVars their fields.
var tcpInfoOrder = []string{"cwnd", "ssthresh", "ca_state"}

var tcpInfoVars = map[string]string{
	"cwnd":     "tcpi_snd_cwnd",
	"ssthresh": "tcpi_snd_ssthresh",
	"ca_state": "tcpi_ca_state",
}

var condToken = regexp.MustCompile(`^\s*(prev\.[a-z_]+|[A-Za-z_][A-Za-z0-9_]*|[0-9]+(?:\.[0-9]+)?|"[^"]*"|==|!=|<=|>=|&&|\|\||[<>+\-*/()!])`)

// conditionPython is the condition over TCP_INFO and the prev.* names it
// saves (prev_cwnd, ...), or ok false when it reads what TCP_INFO lacks
// or is a stretch (while/for).
func conditionPython(f *corpus.Finding) (expr string, prev []string, ok bool) {
	if f.While != "" || f.For != "" {
		return "", nil, false
	}
	var out []string
	src := f.When
	for strings.TrimSpace(src) != "" {
		m := condToken.FindStringSubmatch(src)
		if m == nil {
			return "", nil, false
		}
		src = src[len(m[0]):]
		tok := m[1]
		switch {
		case tok == "&&":
			tok = "and"
		case tok == "||":
			tok = "or"
		case tok == "!":
			tok = "not"
		case strings.HasPrefix(tok, `"`):
			st, err := ccai.ParseCAState(strings.Trim(tok, `"`))
			if err != nil {
				return "", nil, false
			}
			tok = pkt.CAStateName(st)
		case strings.HasPrefix(tok, "prev.") || tok == "prev_ca_state":
			name := strings.TrimPrefix(strings.TrimPrefix(tok, "prev."), "prev_")
			if _, has := tcpInfoVars[name]; !has {
				return "", nil, false
			}
			if !slices.Contains(prev, name) {
				prev = append(prev, name)
			}
			tok = "prev_" + name
		case tok[0] >= '0' && tok[0] <= '9' || strings.ContainsAny(tok, "=<>+-*/()"):
		default:
			field, has := tcpInfoVars[tok]
			if !has {
				return "", nil, false
			}
			tok = field
		}
		out = append(out, tok)
	}
	return strings.Join(out, " "), prev, len(out) > 0
}

package pkt

import (
	"fmt"
	"strconv"
	"strings"
)

// The %{ ... }% blocks: packetdrill runs them in Python with the
// connection's TCP_INFO as variables (tcpi_snd_cwnd, ...). The suite's
// blocks are assert statements over integer arithmetic and comparisons
// (chained, as in "990 <= tcpi_x <= 1010"), joined by and/or/not, with an
// optional message after a comma; that subset is evaluated here. Any other
// statement makes the script unsupported, named.

// fieldFunc reads a TCP_INFO field or a constant; ok false: unknown name.
type fieldFunc func(name string) (v float64, err error)

// evalCode evaluates every statement of a code block: asserts, and
// assignments "name = expression" (packetdrill runs a script's blocks in
// one Python program, so a name assigned in one block is read in the
// next: `actfuzz export` saves prev.* that way), kept in vars. It returns
// a failure message for the first assert that does not hold ("" when all
// hold), or an error for a construct it cannot evaluate.
func evalCode(text string, field fieldFunc, vars map[string]float64) (string, error) {
	text = strings.ReplaceAll(text, "\\\n", " ")
	lookup := func(name string) (float64, error) {
		if v, ok := vars[name]; ok {
			return v, nil
		}
		return field(name)
	}
	for _, line := range strings.Split(text, "\n") {
		line, _, _ = strings.Cut(line, "#") // a comment (the subset has no strings)
		for _, stmt := range strings.Split(line, ";") {
			stmt = strings.TrimSpace(stmt)
			if stmt == "" || strings.HasPrefix(stmt, "#") {
				continue
			}
			if name, expr, ok := assignment(stmt); ok && vars != nil {
				ev := &pyEval{toks: pyLex(expr), field: lookup}
				v, err := ev.or()
				if err != nil {
					return "", err
				}
				if ev.pos < len(ev.toks) {
					return "", unsupported("python expression %q", expr)
				}
				vars[name] = v
				continue
			}
			rest, ok := strings.CutPrefix(stmt, "assert ")
			if !ok {
				return "", unsupported("python statement %q", stmt)
			}
			ev := &pyEval{toks: pyLex(rest), field: lookup}
			v, err := ev.or()
			if err != nil {
				return "", err
			}
			if ev.pos < len(ev.toks) && ev.toks[ev.pos] != "," {
				return "", unsupported("python expression %q", rest)
			}
			if v == 0 {
				return fmt.Sprintf("assert %s failed%s", strings.TrimSpace(rest), ev.values()), nil
			}
		}
	}
	return "", nil
}

// assignment splits "name = expression" (a plain name, one '=').
func assignment(stmt string) (name, expr string, ok bool) {
	name, expr, ok = strings.Cut(stmt, "=")
	name = strings.TrimSpace(name)
	if !ok || strings.HasPrefix(expr, "=") || name == "" || strings.ContainsAny(name[len(name)-1:], "!<>") {
		return "", "", false
	}
	for i, c := range name {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return "", "", false
		}
	}
	return name, strings.TrimSpace(expr), true
}

func twoCharOp(s string) bool {
	switch s {
	case "==", "!=", "<=", ">=", "//":
		return true
	}
	return false
}

// pyLex splits an expression into names, numbers and operators.
func pyLex(s string) []string {
	var toks []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case isLetter(c) || isDigit(c):
			j := i
			for j < len(s) && (isLetter(s[j]) || isDigit(s[j]) || s[j] == '.') {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		case i+1 < len(s) && twoCharOp(s[i:i+2]):
			toks = append(toks, s[i:i+2])
			i += 2
		default:
			toks = append(toks, s[i:i+1])
			i++
		}
	}
	return toks
}

// pyEval is a recursive-descent evaluator of Python's expression grammar
// restricted to numbers: or_test, and_test, not_test, comparison, arith,
// term, factor, atom.
type pyEval struct {
	toks  []string
	pos   int
	field fieldFunc
	seen  []string // name=value of every variable read, for the message
}

func (e *pyEval) peek() string {
	if e.pos < len(e.toks) {
		return e.toks[e.pos]
	}
	return ""
}

func (e *pyEval) values() string {
	if len(e.seen) == 0 {
		return ""
	}
	return " (" + strings.Join(e.seen, ", ") + ")"
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func (e *pyEval) or() (float64, error) {
	v, err := e.and()
	for err == nil && e.peek() == "or" {
		e.pos++
		var r float64
		r, err = e.and()
		v = b2f(v != 0 || r != 0)
	}
	return v, err
}

func (e *pyEval) and() (float64, error) {
	v, err := e.not()
	for err == nil && e.peek() == "and" {
		e.pos++
		var r float64
		r, err = e.not()
		v = b2f(v != 0 && r != 0)
	}
	return v, err
}

func (e *pyEval) not() (float64, error) {
	if e.peek() == "not" {
		e.pos++
		v, err := e.not()
		return b2f(v == 0), err
	}
	return e.comparison()
}

// comparison: Python chains them ("a <= b <= c" is "a <= b and b <= c").
func (e *pyEval) comparison() (float64, error) {
	left, err := e.arith()
	if err != nil {
		return 0, err
	}
	result := true
	chained := false
	for {
		op := e.peek()
		switch op {
		case "==", "!=", "<", "<=", ">", ">=":
		default:
			if !chained {
				return left, nil
			}
			return b2f(result), nil
		}
		e.pos++
		right, err := e.arith()
		if err != nil {
			return 0, err
		}
		var ok bool
		switch op {
		case "==":
			ok = left == right
		case "!=":
			ok = left != right
		case "<":
			ok = left < right
		case "<=":
			ok = left <= right
		case ">":
			ok = left > right
		case ">=":
			ok = left >= right
		}
		result = result && ok
		chained = true
		left = right
	}
}

func (e *pyEval) arith() (float64, error) {
	v, err := e.term()
	for err == nil && (e.peek() == "+" || e.peek() == "-") {
		op := e.toks[e.pos]
		e.pos++
		var r float64
		if r, err = e.term(); op == "+" {
			v += r
		} else {
			v -= r
		}
	}
	return v, err
}

func (e *pyEval) term() (float64, error) {
	v, err := e.factor()
	for err == nil && (e.peek() == "*" || e.peek() == "/" || e.peek() == "//" || e.peek() == "%") {
		op := e.toks[e.pos]
		e.pos++
		var r float64
		if r, err = e.factor(); err != nil {
			break
		}
		if op != "*" && r == 0 {
			return 0, unsupported("python division by zero")
		}
		switch op {
		case "*":
			v *= r
		case "/":
			v /= r
		case "//":
			v = float64(int64(v / r))
		case "%":
			v = float64(int64(v) % int64(r))
		}
	}
	return v, err
}

func (e *pyEval) factor() (float64, error) {
	if e.peek() == "-" {
		e.pos++
		v, err := e.factor()
		return -v, err
	}
	return e.atom()
}

func (e *pyEval) atom() (float64, error) {
	t := e.peek()
	e.pos++
	switch {
	case t == "":
		return 0, unsupported("python expression ends early")
	case t == "(":
		v, err := e.or()
		if err == nil && e.peek() != ")" {
			err = unsupported("python expression: missing )")
		}
		e.pos++
		return v, err
	case isDigit(t[0]):
		v, err := strconv.ParseFloat(t, 64)
		if err != nil {
			if i, err2 := strconv.ParseInt(t, 0, 64); err2 == nil {
				return float64(i), nil
			}
			return 0, unsupported("python number %q", t)
		}
		return v, nil
	case isLetter(t[0]):
		switch t {
		case "True":
			return 1, nil
		case "False":
			return 0, nil
		}
		if e.peek() == "(" || e.peek() == "." || e.peek() == "[" {
			return 0, unsupported("python call or attribute %s%s", t, e.peek())
		}
		v, err := e.field(t)
		if err == nil && strings.HasPrefix(t, "tcpi_") {
			e.seen = append(e.seen, fmt.Sprintf("%s=%v", t, v))
		}
		return v, err
	}
	return 0, unsupported("python token %q", t)
}

package pkt

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// A hand-written recursive-descent parser for syntax.md's grammar. Each
// nonterminal the suite uses is a method; constructs the grammar has but
// the interpreter cannot model (UDP, ICMP, GRE, MPLS, IP-in-IP prefixes)
// parse into a Packet with Unsupported set, so that a script using them is
// classified, not rejected.

type parser struct {
	toks  []token
	pos   int
	depth int // nesting of [ ] and { } expressions
}

// maxDepth bounds expression nesting, so that hostile input cannot
// exhaust the stack; the suite nests three deep.
const maxDepth = 64

// Parse parses a script. Its error is a *SyntaxError naming the line.
func Parse(src string) (*Script, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	return p.script()
}

func (p *parser) peek() token { return p.toks[p.pos] }
func (p *parser) peekAt(n int) token {
	if p.pos+n < len(p.toks) {
		return p.toks[p.pos+n]
	}
	return p.toks[len(p.toks)-1]
}
func (p *parser) advance() token {
	t := p.toks[p.pos]
	if t.kind != tEOF {
		p.pos++
	}
	return t
}

func (p *parser) is(kind tokKind, text string) bool {
	t := p.peek()
	return t.kind == kind && (text == "" || t.text == text)
}

func (p *parser) isPunct(s string) bool { return p.is(tPunct, s) }

// isWord matches a keyword; packetdrill's lexer takes keywords case-
// sensitively, as written in syntax.md's examples.
func (p *parser) isWord(s string) bool { return p.is(tWord, s) }

func (p *parser) errf(t token, format string, a ...any) error {
	return &SyntaxError{Line: t.line, Msg: fmt.Sprintf(format, a...)}
}

func (p *parser) expectPunct(s string) (token, error) {
	t := p.advance()
	if t.kind != tPunct || t.text != s {
		return t, p.errf(t, "expected %q, found %s", s, t)
	}
	return t, nil
}

func (p *parser) expectWord(s string) error {
	t := p.advance()
	if t.kind != tWord || t.text != s {
		return p.errf(t, "expected %q, found %s", s, t)
	}
	return nil
}

func (p *parser) integer() (int64, error) {
	t := p.advance()
	neg := false
	if t.kind == tPunct && t.text == "-" {
		neg = true
		t = p.advance()
	}
	var v int64
	var err error
	switch t.kind {
	case tInt:
		var u uint64
		u, err = strconv.ParseUint(t.text, 10, 64)
		v = int64(u)
	case tHex:
		var u uint64
		u, err = strconv.ParseUint(t.text[2:], 16, 64)
		v = int64(u)
	default:
		return 0, p.errf(t, "expected an integer, found %s", t)
	}
	if err != nil {
		return 0, p.errf(t, "bad integer %s", t.text)
	}
	if neg {
		v = -v
	}
	return v, nil
}

// script: opt_options opt_init_command events opt_cleanup_command.
func (p *parser) script() (*Script, error) {
	s := &Script{}
	for p.is(tOption, "") {
		t := p.advance()
		name, val, _ := strings.Cut(t.text, "=")
		s.Options = append(s.Options, Option{Name: name, Value: val, Line: t.line})
	}
	if p.is(tBack, "") {
		t := p.advance()
		s.Init = &Command{Text: t.text, Line: t.line}
	}
	for !p.is(tEOF, "") {
		if p.is(tBack, "") && p.peekAt(1).kind == tEOF {
			t := p.advance()
			s.Cleanup = &Command{Text: t.text, Line: t.line}
			break
		}
		ev, err := p.event()
		if err != nil {
			return nil, err
		}
		s.Events = append(s.Events, ev)
	}
	if len(s.Events) == 0 {
		return nil, &SyntaxError{Line: p.peek().line, Msg: "a script needs at least one event"}
	}
	return s, nil
}

// event: event_time action.
func (p *parser) event() (*Event, error) {
	line := p.peek().line
	et, err := p.eventTime()
	if err != nil {
		return nil, err
	}
	ev := &Event{Line: line, Time: et}
	t := p.peek()
	switch {
	case t.kind == tPunct && (t.text == "<" || t.text == ">"):
		ev.Packet, err = p.packet()
	case t.kind == tBack:
		p.advance()
		ev.Command = &Command{Text: t.text, Line: t.line}
	case t.kind == tCode:
		p.advance()
		ev.Code = &Code{Text: t.text, Line: t.line}
	case t.kind == tWord || t.kind == tEllipsis:
		ev.Syscall, err = p.syscall()
	default:
		return nil, p.errf(t, "expected a packet, a syscall, a `command` or a %%{ code }%% block, found %s", t)
	}
	if err != nil {
		return nil, err
	}
	return ev, nil
}

// eventTime: '+' time | time | '*' | time '~' time | '+' time '~' '+' time.
func (p *parser) eventTime() (EventTime, error) {
	if p.isPunct("*") {
		p.advance()
		return EventTime{Kind: TimeAny}, nil
	}
	rel := false
	if p.isPunct("+") {
		p.advance()
		rel = true
	}
	start, err := p.time()
	if err != nil {
		return EventTime{}, err
	}
	et := EventTime{Kind: TimeAbsolute, Start: start}
	if rel {
		et.Kind = TimeRelative
	}
	if p.isPunct("~") {
		p.advance()
		if rel {
			if _, err := p.expectPunct("+"); err != nil {
				return et, err
			}
			et.Kind = TimeRelRange
		} else {
			et.Kind = TimeAbsRange
		}
		if et.End, err = p.time(); err != nil {
			return et, err
		}
		if et.End < et.Start {
			return et, p.errf(p.toks[p.pos-1], "time range ends before it starts")
		}
	}
	return et, nil
}

// time: FLOAT | INTEGER, in seconds. The text is converted exactly to
// nanoseconds, without floating point, so a script means the same
// simulated instant everywhere.
func (p *parser) time() (time.Duration, error) {
	t := p.advance()
	if t.kind != tInt && t.kind != tFloat {
		return 0, p.errf(t, "expected a time, found %s", t)
	}
	d, err := parseSeconds(t.text)
	if err != nil {
		return 0, p.errf(t, "%v", err)
	}
	return d, nil
}

func parseSeconds(s string) (time.Duration, error) {
	whole, frac, _ := strings.Cut(s, ".")
	if len(frac) > 9 {
		frac = frac[:9] // below a nanosecond: the simulator's resolution
	}
	var w int64
	if whole != "" {
		v, err := strconv.ParseInt(whole, 10, 64)
		if err != nil || v > int64(1<<62)/int64(time.Second) {
			return 0, fmt.Errorf("bad time %q", s)
		}
		w = v
	}
	var f int64
	if frac != "" {
		v, err := strconv.ParseInt(frac+strings.Repeat("0", 9-len(frac)), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("bad time %q", s)
		}
		f = v
	}
	return time.Duration(w)*time.Second + time.Duration(f), nil
}

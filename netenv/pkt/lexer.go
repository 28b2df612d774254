package pkt

import (
	"fmt"
	"strings"
)

// The lexer turns a script into tokens: the terminals of syntax.md's
// grammar (INTEGER, FLOAT, HEX_INTEGER, WORD, STRING, BACK_QUOTED, CODE,
// ELLIPSIS, OPTION) and its one-character punctuation. Keywords (ack, win,
// mss, TS, ...) are WORDs that the parser recognizes where the grammar
// expects them, so that a word such as "ack" stays usable elsewhere.

type tokKind int

const (
	tEOF      tokKind = iota
	tInt              // decimal INTEGER
	tHex              // HEX_INTEGER (0x...)
	tFloat            // FLOAT: digits with a '.', as times are written
	tWord             // WORD: letters, digits, '_' starting with a letter or '_'
	tString           // "..." STRING
	tBack             // `...` BACK_QUOTED shell command
	tCode             // %{ ... }% CODE block
	tEllipsis         // ...
	tOption           // --name or --name=value (script options)
	tPunct            // one of + - ~ * ( ) [ ] { } < > : , . = | ; ! @ /
)

type token struct {
	kind tokKind
	text string // source text (without quotes/delimiters for strings, commands, code)
	line int
}

func (t token) String() string {
	switch t.kind {
	case tEOF:
		return "end of script"
	case tString:
		return fmt.Sprintf("%q", t.text)
	case tBack:
		return "`command`"
	case tCode:
		return "%{ code }%"
	}
	return fmt.Sprintf("%q", t.text)
}

// SyntaxError is a script that does not follow the grammar; Line is
// 1-based.
type SyntaxError struct {
	Line int
	Msg  string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("line %d: syntax error: %s", e.Line, e.Msg) }

type lexer struct {
	src  string
	pos  int
	line int
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }

// lex returns every token of src, or the first lexical error.
func lex(src string) ([]token, error) {
	l := &lexer{src: src, line: 1}
	var toks []token
	for {
		t, err := l.next()
		if err != nil {
			return nil, err
		}
		if t.kind == tEOF && len(toks) > 0 {
			// An error at the end names the last line with a token.
			t.line = toks[len(toks)-1].line
		}
		toks = append(toks, t)
		if t.kind == tEOF {
			return toks, nil
		}
	}
}

func (l *lexer) errf(line int, format string, a ...any) error {
	return &SyntaxError{Line: line, Msg: fmt.Sprintf(format, a...)}
}

// skip passes blanks and comments (// to end of line, /* ... */).
func (l *lexer) skip() error {
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		switch {
		case c == '\n':
			l.line++
			l.pos++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			l.pos++
		case c == '\\' && l.pos+1 < len(l.src) && l.src[l.pos+1] == '\n':
			l.pos++ // a continuation line
		case strings.HasPrefix(l.src[l.pos:], "//"):
			for l.pos < len(l.src) && l.src[l.pos] != '\n' {
				l.pos++
			}
		case strings.HasPrefix(l.src[l.pos:], "/*"):
			start := l.line
			end := strings.Index(l.src[l.pos+2:], "*/")
			if end < 0 {
				return l.errf(start, "unterminated /* comment")
			}
			l.line += strings.Count(l.src[l.pos:l.pos+2+end], "\n")
			l.pos += end + 4
		default:
			return nil
		}
	}
	return nil
}

// delimited reads a token between open and close (which may span lines).
func (l *lexer) delimited(kind tokKind, open, close, what string) (token, error) {
	line := l.line
	body := l.src[l.pos+len(open):]
	end := strings.Index(body, close)
	if end < 0 {
		return token{}, l.errf(line, "unterminated %s", what)
	}
	text := body[:end]
	l.line += strings.Count(text, "\n")
	l.pos += len(open) + end + len(close)
	return token{kind: kind, text: text, line: line}, nil
}

func (l *lexer) next() (token, error) {
	if err := l.skip(); err != nil {
		return token{}, err
	}
	if l.pos >= len(l.src) {
		return token{kind: tEOF, line: l.line}, nil
	}
	rest := l.src[l.pos:]
	c := rest[0]
	switch {
	case strings.HasPrefix(rest, "%{"):
		return l.delimited(tCode, "%{", "}%", "%{ code block")
	case c == '`':
		return l.delimited(tBack, "`", "`", "` command")
	case c == '"':
		return l.str()
	case strings.HasPrefix(rest, "..."):
		l.pos += 3
		return token{kind: tEllipsis, text: "...", line: l.line}, nil
	case strings.HasPrefix(rest, "--") && len(rest) > 2 && isLetter(rest[2]):
		n := 2
		for n < len(rest) && rest[n] != '\n' && rest[n] != ' ' && rest[n] != '\t' {
			n++
		}
		l.pos += n
		return token{kind: tOption, text: rest[2:n], line: l.line}, nil
	case isDigit(c) || (c == '.' && len(rest) > 1 && isDigit(rest[1])):
		return l.number()
	case isLetter(c):
		n := 1
		for n < len(rest) && (isLetter(rest[n]) || isDigit(rest[n])) {
			n++
		}
		l.pos += n
		return token{kind: tWord, text: rest[:n], line: l.line}, nil
	case strings.IndexByte("+-~*()[]{}<>:,.=|;!@/&", c) >= 0:
		l.pos++
		return token{kind: tPunct, text: rest[:1], line: l.line}, nil
	}
	return token{}, l.errf(l.line, "unexpected character %q", c)
}

func (l *lexer) str() (token, error) {
	line := l.line
	var b strings.Builder
	for i := l.pos + 1; i < len(l.src); i++ {
		switch c := l.src[i]; c {
		case '"':
			l.pos = i + 1
			return token{kind: tString, text: b.String(), line: line}, nil
		case '\n':
			return token{}, l.errf(line, "unterminated string")
		case '\\':
			if i+1 < len(l.src) {
				i++
				b.WriteByte(l.src[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return token{}, l.errf(line, "unterminated string")
}

// number reads INTEGER, HEX_INTEGER or FLOAT. A '.' belongs to the
// number only when a digit follows it or nothing number-like does
// ("1." is a time), never when it starts an ELLIPSIS ("+.09...0.14").
func (l *lexer) number() (token, error) {
	rest := l.src[l.pos:]
	if strings.HasPrefix(rest, "0x") || strings.HasPrefix(rest, "0X") {
		n := 2
		for n < len(rest) && strings.IndexByte("0123456789abcdefABCDEF", rest[n]) >= 0 {
			n++
		}
		if n == 2 {
			return token{}, l.errf(l.line, "bad hex number")
		}
		l.pos += n
		return token{kind: tHex, text: rest[:n], line: l.line}, nil
	}
	n := 0
	for n < len(rest) && isDigit(rest[n]) {
		n++
	}
	kind := tInt
	if n < len(rest) && rest[n] == '.' && !strings.HasPrefix(rest[n:], "...") &&
		(n+1 >= len(rest) || isDigit(rest[n+1]) || n == 0) {
		kind = tFloat
		n++
		for n < len(rest) && isDigit(rest[n]) {
			n++
		}
	}
	if n < len(rest) && isLetter(rest[n]) {
		// A hex blob such as a fast-open cookie or an MD5 key: a WORD.
		for n < len(rest) && (isLetter(rest[n]) || isDigit(rest[n])) {
			n++
		}
		l.pos += n
		return token{kind: tWord, text: rest[:n], line: l.line}, nil
	}
	l.pos += n
	return token{kind: kind, text: rest[:n], line: l.line}, nil
}

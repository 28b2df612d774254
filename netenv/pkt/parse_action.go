package pkt

import "strings"

// Parsing of the actions: packet_spec and syscall_spec (syntax.md).

// packetUnsupportedPrefix names packet_prefix encapsulations and non-TCP
// packet kinds: parsed (skipped to the end of their line) and named.
func packetUnsupportedPrefix(word string) (string, bool) {
	switch strings.ToLower(word) {
	case "ipv4":
		return "IPv4 encapsulation prefix", true
	case "ipv6":
		return "IPv6 encapsulation prefix", true
	case "gre":
		return "GRE encapsulation", true
	case "mpls":
		return "MPLS encapsulation", true
	case "udp":
		return "UDP packet", true
	case "icmp":
		return "ICMP packet", true
	}
	return "", false
}

// skipLine consumes the rest of the tokens on line (a construct parsed
// only to be classified unsupported).
func (p *parser) skipLine(line int) {
	for !p.is(tEOF, "") && p.peek().line == line {
		p.advance()
	}
}

// packet: tcp_packet_spec (udp and icmp specs and encapsulations are
// classified, not parsed further).
func (p *parser) packet() (*Packet, error) {
	dir := p.advance()
	pk := &Packet{Inbound: dir.text == "<"}
	if t := p.peek(); t.kind == tWord {
		if what, ok := packetUnsupportedPrefix(t.text); ok {
			pk.Unsupported = what
			p.skipLine(dir.line)
			return pk, nil
		}
	}
	// opt_ip_info: '(' ip_info ')' | '[' ip_info ']'.
	if p.isPunct("(") || p.isPunct("[") {
		closer := ")"
		if p.advance().text == "[" {
			closer = "]"
		}
		for !p.isPunct(closer) {
			t := p.advance()
			switch {
			case t.kind == tEOF:
				return nil, p.errf(t, "unterminated IP info")
			case t.kind == tWord:
				switch w := strings.ToLower(t.text); w {
				case "ect0", "ect1", "ce", "no_ecn", "noecn", "ect01":
					pk.ECN = w
				case "tos", "flowlabel", "ttl":
					pk.Unsupported = "IP " + w
				}
			}
		}
		p.advance()
	}
	// opt_port_info: INTEGER '>' INTEGER.
	if p.is(tInt, "") && p.peekAt(1).kind == tPunct && p.peekAt(1).text == ">" {
		p.advance()
		p.advance()
		if _, err := p.integer(); err != nil {
			return nil, err
		}
		pk.Unsupported = "port info"
	}
	if err := p.flags(pk); err != nil {
		return nil, err
	}
	if err := p.seq(pk); err != nil {
		return nil, err
	}
	var err error
	if p.isWord("ack") {
		p.advance()
		if pk.Ack, err = p.integer(); err != nil {
			return nil, err
		}
		pk.HasAck = true
	}
	if p.isWord("win") {
		p.advance()
		if pk.Win, err = p.integer(); err != nil {
			return nil, err
		}
		pk.HasWin = true
	}
	if p.isWord("urg") {
		p.advance()
		if _, err = p.integer(); err != nil {
			return nil, err
		}
		pk.Unsupported = "urgent pointer"
	}
	if p.isPunct("<") {
		if err := p.tcpOptions(pk); err != nil {
			return nil, err
		}
	}
	return pk, nil
}

// flags: WORD | '.' | WORD '.' | '-'.
func (p *parser) flags(pk *Packet) error {
	t := p.advance()
	switch {
	case t.kind == tPunct && (t.text == "." || t.text == "-"):
		pk.Flags = t.text
	case t.kind == tWord:
		for _, c := range t.text {
			if !strings.ContainsRune("SFRPUEWA", c) {
				return p.errf(t, "bad TCP flag %q in %q", c, t.text)
			}
		}
		pk.Flags = t.text
		if p.isPunct(".") {
			p.advance()
			pk.Flags += "."
		}
	default:
		return p.errf(t, "expected TCP flags, found %s", t)
	}
	return nil
}

// seq: INTEGER ':' INTEGER '(' INTEGER ')'.
func (p *parser) seq(pk *Packet) error {
	var err error
	if pk.Seq, err = p.integer(); err != nil {
		return err
	}
	if _, err = p.expectPunct(":"); err != nil {
		return err
	}
	if pk.End, err = p.integer(); err != nil {
		return err
	}
	if _, err = p.expectPunct("("); err != nil {
		return err
	}
	if pk.Len, err = p.integer(); err != nil {
		return err
	}
	t, err := p.expectPunct(")")
	if err != nil {
		return err
	}
	if pk.End-pk.Seq != pk.Len {
		return p.errf(t, "sequence range %d:%d is not %d bytes", pk.Seq, pk.End, pk.Len)
	}
	return nil
}

// tcpOptions: '<' tcp_option_list '>' | '<' ELLIPSIS '>'.
func (p *parser) tcpOptions(pk *Packet) error {
	p.advance()
	pk.HasOptions = true
	if p.is(tEllipsis, "") {
		p.advance()
		pk.AnyOptions = true
		_, err := p.expectPunct(">")
		return err
	}
	for {
		o, err := p.tcpOption()
		if err != nil {
			return err
		}
		pk.Options = append(pk.Options, o)
		if p.isPunct(",") {
			p.advance()
			continue
		}
		_, err = p.expectPunct(">")
		return err
	}
}

func (p *parser) tcpOption() (TCPOption, error) {
	t := p.advance()
	if t.kind != tWord {
		return TCPOption{}, p.errf(t, "expected a TCP option, found %s", t)
	}
	o := TCPOption{Kind: t.text}
	var err error
	switch t.text {
	case "nop", "eol", "sackOK":
	case "mss", "wscale":
		o.Val, err = p.integer()
	case "sack":
		for p.is(tInt, "") {
			var b [2]int64
			if b[0], err = p.integer(); err != nil {
				return o, err
			}
			if _, err = p.expectPunct(":"); err != nil {
				return o, err
			}
			if b[1], err = p.integer(); err != nil {
				return o, err
			}
			o.Blocks = append(o.Blocks, b)
		}
		if len(o.Blocks) == 0 {
			return o, p.errf(t, "sack option without blocks")
		}
	case "TS":
		if err = p.expectWord("val"); err != nil {
			return o, err
		}
		if o.Val, err = p.integer(); err != nil {
			return o, err
		}
		if err = p.expectWord("ecr"); err != nil {
			return o, err
		}
		o.Ecr, err = p.integer()
	case "md5", "FO", "FOEXP":
		if n := p.peek(); n.kind == tWord || n.kind == tInt || n.kind == tHex {
			o.Blob = p.advance().text
		} else if o.Kind == "md5" {
			return o, p.errf(n, "md5 option without a key")
		}
	default:
		return o, p.errf(t, "unknown TCP option %q", t.text)
	}
	return o, err
}

// syscall: opt_end_time function_name function_arguments '=' expression
// opt_errno opt_note.
func (p *parser) syscall() (*Syscall, error) {
	sc := &Syscall{}
	if p.is(tEllipsis, "") {
		p.advance()
		end, err := p.time()
		if err != nil {
			return nil, err
		}
		sc.HasEnd, sc.EndTime = true, end
	}
	name := p.advance()
	if name.kind != tWord {
		return nil, p.errf(name, "expected a syscall name, found %s", name)
	}
	sc.Name = name.text
	if _, err := p.expectPunct("("); err != nil {
		return nil, err
	}
	if !p.isPunct(")") {
		args, err := p.exprList(")")
		if err != nil {
			return nil, err
		}
		sc.Args = args
	}
	if _, err := p.expectPunct(")"); err != nil {
		return nil, err
	}
	if _, err := p.expectPunct("="); err != nil {
		return nil, err
	}
	res, err := p.expr()
	if err != nil {
		return nil, err
	}
	sc.Result = res
	if p.is(tWord, "") {
		sc.Errno = p.advance().text
	}
	if p.isPunct("(") {
		if err := p.note(); err != nil {
			return nil, err
		}
	}
	return sc, nil
}

// note: '(' word_list ')' — free text, skipped.
func (p *parser) note() error {
	open := p.advance()
	for depth := 1; depth > 0; {
		t := p.advance()
		switch {
		case t.kind == tEOF:
			return p.errf(open, "unterminated note")
		case t.kind == tPunct && t.text == "(":
			depth++
		case t.kind == tPunct && t.text == ")":
			depth--
		}
	}
	return nil
}

// exprList: expression (',' expression)*, up to closer (not consumed).
func (p *parser) exprList(closer string) ([]Expr, error) {
	var list []Expr
	for {
		e, err := p.expr()
		if err != nil {
			return nil, err
		}
		list = append(list, e)
		if !p.isPunct(",") {
			return list, nil
		}
		p.advance()
		if p.isPunct(closer) { // a trailing comma
			return list, nil
		}
	}
}

// expr: a primary, then '|' expression (binary_expression) or '='
// expression (WORD '=' expression, and msghdr's name(args)=value).
func (p *parser) expr() (Expr, error) {
	e, err := p.primary()
	if err != nil {
		return e, err
	}
	switch {
	case p.isPunct("|"):
		p.advance()
		r, err := p.expr()
		if err != nil {
			return e, err
		}
		return Expr{Kind: ExprBinary, Name: "|", List: []Expr{e, r}}, nil
	case p.isPunct("=") && (e.Kind == ExprWord || e.Kind == ExprCall):
		p.advance()
		r, err := p.expr()
		if err != nil {
			return e, err
		}
		return Expr{Kind: ExprAssign, Name: e.Name, List: []Expr{e, r}}, nil
	}
	return e, nil
}

func (p *parser) primary() (Expr, error) {
	t := p.peek()
	switch {
	case t.kind == tEllipsis:
		p.advance()
		return Expr{Kind: ExprEllipsis}, nil
	case t.kind == tInt || t.kind == tHex || (t.kind == tPunct && t.text == "-"):
		v, err := p.integer()
		return Expr{Kind: ExprInt, Int: v, Name: t.text}, err
	case t.kind == tFloat:
		p.advance()
		return Expr{Kind: ExprWord, Name: t.text}, nil
	case t.kind == tString:
		p.advance()
		if p.is(tEllipsis, "") {
			p.advance()
		}
		return Expr{Kind: ExprString, Name: t.text}, nil
	case t.kind == tWord:
		p.advance()
		if p.isPunct("(") {
			p.advance()
			var args []Expr
			var err error
			if !p.isPunct(")") {
				if args, err = p.exprList(")"); err != nil {
					return Expr{}, err
				}
			}
			if _, err := p.expectPunct(")"); err != nil {
				return Expr{}, err
			}
			return Expr{Kind: ExprCall, Name: t.text, List: args}, nil
		}
		return Expr{Kind: ExprWord, Name: t.text}, nil
	case t.kind == tPunct && (t.text == "[" || t.text == "{"):
		p.advance()
		if p.depth++; p.depth > maxDepth {
			return Expr{}, p.errf(t, "expressions nested too deep")
		}
		defer func() { p.depth-- }()
		closer, kind := "]", ExprArray
		if t.text == "{" {
			closer, kind = "}", ExprBrace
		}
		var list []Expr
		var err error
		if !p.isPunct(closer) {
			if list, err = p.exprList(closer); err != nil {
				return Expr{}, err
			}
		}
		if _, err := p.expectPunct(closer); err != nil {
			return Expr{}, err
		}
		return Expr{Kind: kind, List: list}, nil
	}
	return Expr{}, p.errf(t, "expected an expression, found %s", t)
}

// Package pkt reads packetdrill scripts (Google's packetdrill, the tool
// Linux's TCP developers specify behaviour with) and runs them against the
// native subject's simulated TCP (netenv/tcp), issue 49.
//
// A script plays the remote peer: its inbound packets ('<') enter our TCP
// at the script's times, its outbound packets ('>') are what our TCP must
// send, and its %{ assert ... }% blocks check our TCP_INFO equivalents.
// The grammar is packetdrill's syntax.md; the parser is written from it
// and from the suite's scripts (gtests/net/tcp), not from packetdrill's
// GPL source.
//
// Files, one per concern:
//   - lexer.go: tokens of syntax.md (INTEGER, FLOAT, WORD, `command`,
//     %{ code }%, ...), with line numbers for errors;
//   - ast.go: the syntax tree (Script, Event, Packet, Syscall, Expr);
//   - parser.go, parse_action.go: the recursive-descent parser.
package pkt

package pkt

import "time"

// The syntax tree of a script, after syntax.md's grammar: options, an
// optional init command, events (a time and an action), an optional
// cleanup command.

// Script is a parsed packetdrill script.
type Script struct {
	Options []Option
	Init    *Command // a command before the first event (usually the sysctl preamble)
	Events  []*Event
	Cleanup *Command // a command after the last event
}

// Option is a script option line: --name[=value].
type Option struct {
	Name, Value string
	Line        int
}

// TimeKind is how an event's time is written (syntax.md event_time).
type TimeKind int

// The event-time forms.
const (
	TimeAbsolute TimeKind = iota // t
	TimeRelative                 // +t
	TimeAny                      // *
	TimeAbsRange                 // t1~t2
	TimeRelRange                 // +t1~+t2
)

// EventTime is an event's script time; Start and End (for ranges) are as
// written, not yet resolved against the previous event (see timing.go).
type EventTime struct {
	Kind       TimeKind
	Start, End time.Duration
}

// Event is one line of the script.
type Event struct {
	Line    int
	Time    EventTime
	Packet  *Packet
	Syscall *Syscall
	Command *Command
	Code    *Code
}

// Packet is a packet_spec: an inbound packet the script injects ('<') or
// an outbound one it expects ('>').
type Packet struct {
	Inbound bool
	// Unsupported names a form the interpreter does not model (UDP,
	// ICMP, an encapsulation, port info), empty for plain TCP.
	Unsupported string
	ECN         string // "", "ect0", "ect1", "ce", "noecn", "ect01"
	Flags       string // flags as written, '.' included ("S.", "P.", "-" for none)
	Seq, End    int64  // start and end sequence numbers (relative, as written)
	Len         int64  // payload length in parentheses
	Ack         int64
	HasAck      bool
	Win         int64
	HasWin      bool
	Options     []TCPOption
	HasOptions  bool // a '<...>' list was written
	AnyOptions  bool // '<...>': any options match
}

// TCPOption is one TCP option (syntax.md tcp_option).
type TCPOption struct {
	Kind   string // "nop", "eol", "mss", "wscale", "sackOK", "sack", "TS", "md5", "FO", "FOEXP"
	Val    int64  // mss, wscale, TS val
	Ecr    int64  // TS ecr
	Blocks [][2]int64
	Blob   string // md5 key, fast-open cookie
}

// Syscall is a syscall_spec: name(args) = result [errno (note)].
type Syscall struct {
	Name    string
	Args    []Expr
	Result  Expr
	Errno   string
	HasEnd  bool          // "...t": a blocking call that returns at t
	EndTime time.Duration // relative to the call's start
}

// Command is a `shell command`.
type Command struct {
	Text string
	Line int
}

// Code is a %{ python }% block; the interpreter evaluates its asserts.
type Code struct {
	Text string
	Line int
}

// ExprKind is the form of a syscall argument or result.
type ExprKind int

// The expression forms.
const (
	ExprEllipsis ExprKind = iota // ...
	ExprInt                      // 3, -1, 0x2
	ExprWord                     // SOCK_STREAM
	ExprString                   // "abc" (StringEllipsis: "abc"...)
	ExprBinary                   // a|b
	ExprAssign                   // name=value
	ExprArray                    // [a, b]
	ExprBrace                    // {a, b} (sockaddr, msghdr, iovec, pollfd, ...)
	ExprCall                     // htons(8080), inet_addr("..."), msg_iov(1)
)

// Expr is a syscall argument or result.
type Expr struct {
	Kind ExprKind
	Int  int64
	Name string // word, string, call name, assign name, binary op
	List []Expr // array, brace, call args, binary/assign operands
}

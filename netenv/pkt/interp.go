package pkt

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv/sim"
	"github.com/actfuzz/actfuzz/netenv/tcp"
)

// Config configures a run of a script.
type Config struct {
	Profile ccai.Profile
	// Dir resolves the preamble's relative paths (../common/defaults.sh):
	// the script's directory.
	Dir string
	// Strict makes a sysctl the model only approximates (RACK, TLP, TSO
	// deferral) unsupported instead of listed in Result.Approx.
	Strict bool
	// Trace, when set, receives a line per script event and per packet
	// our side sends, with the model's cwnd, ssthresh and ca_state.
	Trace io.Writer
}

// Status is a script's outcome.
type Status int

// The outcomes; exit codes of `actfuzz pkt` are 0, 1, 2 and 4.
const (
	Pass        Status = iota // every outbound packet and assert matched
	Fail                      // the first mismatch is in Result
	BadScript                 // a syntax error (Result.Line)
	Unsupported               // a construct the model cannot run (Result.Msg names it)
)

func (s Status) String() string {
	switch s {
	case Pass:
		return "pass"
	case Fail:
		return "fail"
	case BadScript:
		return "bad script"
	}
	return "unsupported"
}

// Result is a script's outcome: for Fail the first mismatch (expected vs
// seen), for Unsupported the construct, for BadScript the syntax error.
type Result struct {
	Status Status
	Line   int
	At     time.Duration // simulated time of the mismatch
	Msg    string
	// Approx lists the sysctls the model only approximates (settings).
	Approx []string
}

func (r Result) String() string {
	switch r.Status {
	case Pass:
		return "pass"
	case Fail:
		return fmt.Sprintf("fail: line %d at %.6f s: %s", r.Line, r.At.Seconds(), r.Msg)
	case BadScript:
		return "bad script: " + r.Msg
	}
	return fmt.Sprintf("unsupported: %s (line %d)", r.Msg, r.Line)
}

// mismatchError is a failure of the script against the model.
type mismatchError struct{ msg string }

func (e *mismatchError) Error() string { return e.msg }

func mismatch(format string, a ...any) error { return &mismatchError{fmt.Sprintf(format, a...)} }

// RunFile parses and runs the script at path.
func RunFile(path string, cfg Config) Result {
	src, err := os.ReadFile(path)
	if err != nil {
		return Result{Status: BadScript, Msg: err.Error()}
	}
	if cfg.Dir == "" {
		cfg.Dir = filepath.Dir(path)
	}
	s, err := Parse(string(src))
	if err != nil {
		var se *SyntaxError
		if errors.As(err, &se) {
			return Result{Status: BadScript, Line: se.Line, Msg: se.Error()}
		}
		return Result{Status: BadScript, Msg: err.Error()}
	}
	return Run(s, cfg)
}

// Model nodes: the local TCP and the script's peer.
const (
	localNode sim.NodeID = 0
	peerNode  sim.NodeID = 1
)

// outPkt is a packet our side sent, in the script's terms: sequence
// numbers relative to our ISN (the SYN is 0, data starts at 1).
type outPkt struct {
	at        time.Duration
	seq, end  int64
	ack       int64
	flags     string // of "SFREW" plus '.' for ACK; never 'P' (see match.go)
	ect       bool
	retx      bool
	synthetic bool // sent by the interpreter's handshake or teardown (conn.go)
}

// sentRec remembers a data transmission's timestamp, for the peer's echo.
type sentRec struct {
	seq   int64
	tsval time.Duration
}

// interp runs one script.
type interp struct {
	cfg  Config
	set  settings
	sim  *sim.Sim
	snd  *tcp.Sender
	clk  clock
	out  []outPkt
	sent []sentRec

	state tcpState
	line  int

	// Negotiated in the handshake (conn.go).
	mss          uint32
	peerWScale   int64 // -1: no window scaling
	sackOK, tsOK bool
	ecnOK        bool
	synAt        time.Duration
	handshakeRTT time.Duration

	// The peer's receive window, which the model does not honour: a
	// transmission beyond it makes the script unsupported (rwndHit).
	rwnd    uint64
	ackByte uint64 // highest cumulative ACK, in model bytes
	rwndHit string

	sndBuf   uint64 // SO_SNDBUF's effect; 0: the settings' ceiling
	finSeq   int64  // our FIN's sequence number; 0: not closed
	peerFin  bool
	tsRecent time.Duration // the peer's echo (RFC 7323 §4.3)
	// tsEcrScaled (--tcp_ts_ecr_scaled): the script's ecr values are
	// used (scriptEcho), in ticks from synAckTS, our SYN-ACK's TS val in
	// the script, sent at synAckAt.
	tsEcrScaled bool
	synAckTS    int64
	synAckAt    time.Duration
	// pyVars are the names the script's code blocks assigned.
	pyVars map[string]float64
	// ackByteEchoed: the cumulative ACK tsRecent was taken for.
	ackByteEchoed uint64
}

// Run runs a parsed script against the model.
func Run(s *Script, cfg Config) Result {
	in := &interp{cfg: cfg, set: defaultSettings(), clk: newClock(), peerWScale: -1, pyVars: map[string]float64{}}
	in.sim = sim.New(nil, sim.Limits{MaxEvents: 50_000_000})
	res := Result{Status: Pass}
	err := in.options(s.Options)
	if err == nil && s.Init != nil {
		in.line = s.Init.Line
		err = in.set.command(s.Init.Text, cfg.Dir, cfg.Strict, 0)
	}
	for _, ev := range s.Events {
		if err != nil {
			break
		}
		in.line = ev.Line
		err = in.event(ev)
		in.tracef("line %d done", ev.Line)
		if err == nil && in.rwndHit != "" {
			err = unsupported("%s", in.rwndHit)
		}
	}
	res.Approx = in.set.approx
	var ue *unsupportedError
	var me *mismatchError
	switch {
	case errors.As(err, &ue):
		res.Status, res.Line, res.Msg = Unsupported, in.line, ue.construct
	case errors.As(err, &me):
		res.Status, res.Line, res.At, res.Msg = Fail, in.line, in.sim.Now(), me.msg
	case err != nil:
		res.Status, res.Line, res.Msg = BadScript, in.line, err.Error()
	}
	return res
}

// options applies the script's --options.
func (in *interp) options(opts []Option) error {
	for _, o := range opts {
		in.line = o.Line
		switch o.Name {
		case "tolerance_usecs":
			v, err := strconv.ParseInt(o.Value, 10, 64)
			if err != nil || v <= 0 {
				return fmt.Errorf("bad --tolerance_usecs=%s", o.Value)
			}
			in.clk.tolerance = time.Duration(v) * time.Microsecond
		case "tolerance_percent":
			v, err := strconv.ParseFloat(o.Value, 64)
			if err != nil || v < 0 {
				return fmt.Errorf("bad --tolerance_percent=%s", o.Value)
			}
			in.clk.percent = v
		case "ip_version", "bind_port", "connect_port", "local_ip", "remote_ip", "gateway_ip", "netmask_ip":
			// Addressing: the model has one flow and no addresses.
		case "tcp_ts_ecr_scaled":
			// The script's TS ecr values are ticks of our clock from our
			// SYN-ACK's TS val, as packetdrill maps them onto the
			// kernel's (conn.go scriptEcho).
			in.tsEcrScaled = true
		default:
			return unsupported("option --%s", o.Name)
		}
	}
	return nil
}

// event runs one event at its time.
func (in *interp) event(ev *Event) error {
	w := in.clk.resolve(ev.Time, in.sim.Now())
	switch {
	case ev.Packet != nil && ev.Packet.Unsupported != "":
		return unsupported("%s", ev.Packet.Unsupported)
	case ev.Packet != nil && !ev.Packet.Inbound:
		return in.outbound(ev.Packet, w)
	}
	in.advance(w.t)
	switch {
	case ev.Packet != nil:
		return in.inbound(ev.Packet)
	case ev.Syscall != nil:
		return in.syscall(ev.Syscall)
	case ev.Command != nil:
		if in.snd != nil {
			return unsupported("shell command during the connection")
		}
		return in.set.command(ev.Command.Text, in.cfg.Dir, in.cfg.Strict, 0)
	case ev.Code != nil:
		msg, err := evalCode(ev.Code.Text, in.field, in.pyVars)
		if err != nil {
			return err
		}
		if msg != "" {
			return mismatch("%s", msg)
		}
	}
	return nil
}

// advance runs the model up to script time t (never backwards: a packet
// the model sent late leaves the clock where it was seen).
func (in *interp) advance(t time.Duration) {
	in.sim.RunUntil(t)
}

// Send takes the model's packets (tcp.Output).
func (in *interp) Send(p *sim.Packet) {
	o := outPkt{at: in.sim.Now(), seq: int64(p.Seq) + 1, end: int64(p.Seq+uint64(p.Len)) + 1, ack: in.ourAck(),
		flags: ".", ect: p.ECT, retx: p.Retx}
	if p.CWR {
		o.flags = "W."
	}
	if !p.Retx && p.Seq+uint64(p.Len) > in.ackByte+in.rwnd && in.rwndHit == "" {
		in.rwndHit = fmt.Sprintf("receive window: the model sent %d:%d beyond the peer's window of %d bytes (flow control is not modelled)",
			o.seq, o.end, in.rwnd)
	}
	in.sent = append(in.sent, sentRec{seq: o.seq, tsval: p.TSVal})
	in.tracef("sent %v retx=%v", o, o.retx)
	in.out = append(in.out, o)
	in.sim.FreePacket(p)
}

// ourAck is the acknowledgment number our packets carry: the peer's SYN,
// and its FIN once seen (the model receives no data).
func (in *interp) ourAck() int64 {
	if in.peerFin {
		return 2
	}
	return 1
}

// ensureSender builds the model's sender at the first write (or the first
// ACK or assert that needs it): the send buffer and algorithm are only
// final then, as setsockopt may still change them after accept().
func (in *interp) ensureSender() error {
	if in.snd != nil {
		return nil
	}
	if in.state != stateEstablished {
		return unsupported("data on a connection that is not established")
	}
	info, ok := ccai.Lookup(in.set.congestion)
	if !ok {
		return unsupported("congestion control %q (not in the registry)", in.set.congestion)
	}
	buf := in.sndBuf
	if buf == 0 {
		buf = in.set.wmemMax
	}
	in.snd = tcp.NewSender(in.sim, tcp.SenderConfig{
		Flow: 1, Node: localNode, Peer: peerNode, MSS: in.mss, InitCwnd: tcpInitCwnd, SACK: in.sackOK,
		Profile: in.cfg.Profile, SndBuf: buf, Algorithm: info.New(), Out: in, ECN: in.ecnOK,
		NoIdleRestart: !in.set.idleRestart,
	})
	in.snd.Established(in.handshakeRTT)
	return nil
}

// tracef writes a trace line with the model's window state.
func (in *interp) tracef(format string, a ...any) {
	if in.cfg.Trace == nil {
		return
	}
	state := ""
	if in.snd != nil {
		sk := in.snd.Sock()
		state = fmt.Sprintf("  [cwnd %d ssthresh %d ca %d una %d nxt %d out %d sacked %d lost %d retrans %d]",
			sk.Cwnd, sk.SSThresh, sk.CAState, sk.SndUna+1, sk.SndNxt+1, sk.PacketsOut, sk.SackedOut, sk.LostOut, sk.RetransOut)
	}
	fmt.Fprintf(in.cfg.Trace, "%.6f %s%s\n", in.sim.Now().Seconds(), fmt.Sprintf(format, a...), state)
}

package pkt

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv/sim"
)

// Export: the sender side of a native run as a packetdrill script that
// drives a stock Linux kernel along the same path (issue 49 item 4,
// `actfuzz export SEED --pkt`). The kernel is the local TCP, as in
// packetdrill's suite; the script plays the receiver: the handshake, the
// recorded ACKs at their recorded times (with their SACK blocks and ECN
// echo), and %{ assert }% blocks over TCP_INFO where the finding holds.
//
// The script's outbound side is the handshake's SYN-ACK only (packetdrill
// learns the kernel's initial sequence number from it, and its options are
// not checked: <...>). The data segments the kernel sends are not
// scripted: which of them carry PSH (tcp_push at a write's end and
// tcp_mark_push), when a timer-driven one leaves (jiffies of 4 ms at
// HZ=250) and whether RACK or a tail loss probe resends one early are
// Linux's own and no part of the finding, and an outbound line fails the
// whole script on any of them. What the finding is about is the
// congestion state, which the asserts check; an ACK for data the kernel
// did not send (it diverged from the model) is ignored by the kernel, and
// the asserts then fail where the divergence shows.

// CapturedSend is a data segment the sender sent: bytes [Seq, End) of the
// transfer (relative: data byte 0 is sequence number 1 in the script).
type CapturedSend struct {
	At       time.Duration
	Seq, End uint64
	Retx     bool
}

// CapturedAck is a packet that reached the sender: a cumulative ACK of
// byte Ack (every byte below it), its SACK blocks (a D-SACK first when
// DSACK) and ECN echo.
type CapturedAck struct {
	At  time.Duration
	Ack uint64
	// TSEcr is the echoed timestamp: the model's send time of the
	// segment echoed, plus 1 ns (0: none).
	TSEcr time.Duration
	SACK  []sim.SACKBlock
	DSACK bool
	ECE   bool
}

// Capture records one flow of a native run up to a time (it is a
// netenv.PacketTap): the segments its sender sends and the ACKs that reach
// it. The handshake's SYN and SYN-ACK give SynAt and SynAckAt.
type Capture struct {
	Flow  int32
	Until time.Duration // nothing after it is recorded
	Sends []CapturedSend
	Acks  []CapturedAck
	// SynAt and SynAckAt are the handshake's, when the run had one
	// (SynAckAt 0: none).
	SynAt, SynAckAt time.Duration
}

// SenderSent records a data segment (netenv.PacketTap).
func (c *Capture) SenderSent(flow int32, at time.Duration, p *sim.Packet) {
	if flow != c.Flow || at > c.Until {
		return
	}
	if p.SYN {
		if c.SynAt == 0 {
			c.SynAt = at
		}
		return
	}
	if p.Len == 0 {
		return // a pure ACK or FIN carries no congestion-controlled data
	}
	c.Sends = append(c.Sends, CapturedSend{At: at, Seq: p.Seq, End: p.Seq + uint64(p.Len), Retx: p.Retx})
}

// SenderReceived records an ACK (netenv.PacketTap).
func (c *Capture) SenderReceived(flow int32, at time.Duration, p *sim.Packet) {
	if flow != c.Flow || at > c.Until || !p.IsAck {
		return
	}
	if p.SYN {
		if c.SynAckAt == 0 {
			c.SynAckAt = at
		}
		return
	}
	a := CapturedAck{At: at, Ack: p.Ack, TSEcr: p.TSEcr, DSACK: p.DSACK, ECE: p.ECE}
	a.SACK = append(a.SACK, p.SACK[:p.NSACK]...)
	c.Acks = append(c.Acks, a)
}

// Assert is one assertion over a TCP_INFO field: Field == Want.
type Assert struct {
	Field   string // tcpi_snd_cwnd, tcpi_snd_ssthresh, tcpi_ca_state, ...
	Want    int64
	Comment string
}

// Check is a %{ }% block: its asserts, after the first AfterAcks of the
// script's ACKs, at model time At (the last of those ACKs' time, or later
// for a state a timer reached).
type Check struct {
	AfterAcks int
	At        time.Duration
	Comment   string
	// Code are Python statements written before the asserts (the saving
	// of prev.* values, the finding's condition as an assert).
	Code    []string
	Asserts []Assert
}

// Export is the script WriteScript writes.
type Export struct {
	// Header is the comment at the top, one line each (without "//").
	Header []string
	// Congestion is the algorithm, set with TCP_CONGESTION.
	Congestion string
	MSS        uint32
	SACK, ECN  bool
	// HandshakeRTT is the time from the peer's SYN to its handshake ACK.
	HandshakeRTT time.Duration
	// Write is the bytes the application writes at once after accept;
	// SndBuf the send buffer (tcp_wmem's default and maximum) that takes
	// them without blocking.
	Write, SndBuf uint64
	// Start is the model time of the first data segment: the write's
	// time in the script (after the handshake). Acks and Checks are at
	// model times from it.
	Start  time.Duration
	Acks   []CapturedAck
	Checks []Check
}

// peerWScale is the window scale the scripted peer offers, and peerWin
// the window it advertises: 65535 << 10 = 64 MiB, so that the kernel is
// never limited by the peer's window, as the model's sender is not.
const (
	peerWScale = 10
	peerWin    = 65535
	// tsBase is the TS val of the script's SYN and SYN-ACK.
	tsBase = 100
	// scriptTolerance is how late packetdrill may inject an ACK (its
	// default is 4 ms).
	scriptTolerance = 20 * time.Millisecond
)

// WriteScript writes s as a packetdrill script.
func WriteScript(w io.Writer, s *Export) error {
	b := bufio.NewWriter(w)
	for _, l := range s.Header {
		fmt.Fprintf(b, "// %s\n", l)
	}
	// The ACKs echo the kernel's timestamps: their ecr values are in
	// milliseconds from the SYN-ACK's (TS val 100), which packetdrill
	// maps onto the kernel's clock with this option.
	fmt.Fprintf(b, "\n--tcp_ts_ecr_scaled\n")
	// Nothing outbound is timed but the SYN-ACK; the inbound ACKs are,
	// and a loaded machine wakes packetdrill late: a late ACK is the
	// kernel's input, not the finding's failure.
	fmt.Fprintf(b, "--tolerance_usecs=%d\n", scriptTolerance/time.Microsecond)
	ecn := 0
	if s.ECN {
		ecn = 2 // the listener accepts ECN when the SYN asks (RFC 3168 §6.1.1)
	}
	sack := 0
	if s.SACK {
		sack = 1
	}
	// The model's TCP: timestamps (its RTT samples and its undo of a
	// spurious retransmission, RFC 7323 §4 and RFC 3522, come from their
	// echo), DupThresh 3, F-RTO, restart after idle, and Linux's RACK
	// and TLP left at their defaults (the model has neither: `actfuzz
	// pkt` lists them). tcp_rmem as the suite's defaults.sh sets it, so
	// that the SYN-ACK offers wscale 8.
	fmt.Fprintf(b, "\n`sysctl -q net.ipv4.tcp_timestamps=1\n")
	fmt.Fprintf(b, "sysctl -q net.ipv4.tcp_sack=%d\n", sack)
	fmt.Fprintf(b, "sysctl -q net.ipv4.tcp_dsack=1\n")
	fmt.Fprintf(b, "sysctl -q net.ipv4.tcp_frto=2\n")
	fmt.Fprintf(b, "sysctl -q net.ipv4.tcp_reordering=3\n")
	fmt.Fprintf(b, "sysctl -q net.ipv4.tcp_slow_start_after_idle=1\n")
	fmt.Fprintf(b, "sysctl -q net.ipv4.tcp_recovery=1\n")
	fmt.Fprintf(b, "sysctl -q net.ipv4.tcp_early_retrans=3\n")
	fmt.Fprintf(b, "sysctl -q net.ipv4.tcp_ecn=%d\n", ecn)
	fmt.Fprintf(b, "sysctl -q net.ipv4.tcp_rmem=\"4096 540000 15728640\"\n")
	fmt.Fprintf(b, "sysctl -q net.ipv4.tcp_wmem=\"4096 %d %d\"\n", s.SndBuf, s.SndBuf)
	fmt.Fprintf(b, "tc qdisc add dev tun0 root pfifo\n")
	fmt.Fprintf(b, "ethtool -K tun0 tso off gso off`\n\n")

	fmt.Fprintf(b, "    0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n")
	fmt.Fprintf(b, "   +0 setsockopt(3, SOL_SOCKET, SO_REUSEADDR, [1], 4) = 0\n")
	fmt.Fprintf(b, "   +0 setsockopt(3, IPPROTO_TCP, TCP_CONGESTION, %q, %d) = 0\n", s.Congestion, len(s.Congestion))
	fmt.Fprintf(b, "   +0 bind(3, ..., ...) = 0\n")
	fmt.Fprintf(b, "   +0 listen(3, 1) = 0\n\n")
	// Our MSS: 1460 less the timestamp option is the model's 1448.
	synOpts := fmt.Sprintf("<mss 1460,nop,nop,TS val %d ecr 0,nop,wscale %d>", tsBase, peerWScale)
	synAckOpts := fmt.Sprintf("<mss 1460,nop,nop,TS val %d ecr %d,nop,wscale 8>", tsBase, tsBase)
	if s.SACK {
		synOpts = fmt.Sprintf("<mss 1460,sackOK,TS val %d ecr 0,nop,wscale %d>", tsBase, peerWScale)
		synAckOpts = fmt.Sprintf("<mss 1460,sackOK,TS val %d ecr %d,nop,wscale 8>", tsBase, tsBase)
	}
	syn, synack := "S", "S."
	if s.ECN {
		syn, synack = "SEW", "SE."
	}
	fmt.Fprintf(b, "   +0 < %s 0:0(0) win %d %s\n", syn, peerWin, synOpts)
	fmt.Fprintf(b, "   +0 > %s 0:0(0) ack 1 %s\n", synack, synAckOpts)
	clk := scriptClock{start: s.Start, hs: s.HandshakeRTT}
	fmt.Fprintf(b, "%s < . 1:1(0) ack 1 win %d <nop,nop,TS val %d ecr %d>\n", clk.at(s.Start), peerWin, clk.ms(s.Start), tsBase)
	fmt.Fprintf(b, "   +0 accept(3, ..., ...) = 4\n")
	fmt.Fprintf(b, "   +0 write(4, ..., %d) = %d\n", s.Write, s.Write)
	checks := s.Checks
	for i, a := range s.Acks {
		for len(checks) > 0 && checks[0].AfterAcks <= i {
			writeCheck(b, &clk, checks[0])
			checks = checks[1:]
		}
		flags := "."
		if a.ECE {
			flags = "E."
		}
		at := clk.at(a.At)
		ecr := int64(tsBase)
		if a.TSEcr > 0 {
			ecr = clk.ms(a.TSEcr - 1)
		}
		fmt.Fprintf(b, "%s < %s 1:1(0) ack %d win %d <nop,nop,TS val %d ecr %d%s>\n", at, flags, a.Ack+1, peerWin, clk.ms(a.At), ecr, sackOption(a))
	}
	for _, c := range checks {
		writeCheck(b, &clk, c)
	}
	return b.Flush()
}

// sackOption is an ACK's SACK option, in script sequence numbers.
func sackOption(a CapturedAck) string {
	if len(a.SACK) == 0 {
		return ""
	}
	blocks := make([]string, len(a.SACK))
	for i, blk := range a.SACK {
		blocks[i] = fmt.Sprintf("%d:%d", blk.Start+1, blk.End+1)
	}
	return ",nop,nop,sack " + strings.Join(blocks, " ")
}

func writeCheck(b *bufio.Writer, clk *scriptClock, c Check) {
	if c.Comment != "" {
		for _, l := range strings.Split(c.Comment, "\n") {
			fmt.Fprintf(b, "// %s\n", l)
		}
	}
	fmt.Fprintf(b, "%s %%{\n", clk.at(c.At))
	for _, l := range c.Code {
		fmt.Fprintln(b, l)
	}
	for _, a := range c.Asserts {
		want := fmt.Sprint(a.Want)
		if a.Field == "tcpi_ca_state" {
			want = CAStateName(ccai.CAState(a.Want))
		}
		line := fmt.Sprintf("assert %s == %s, %s", a.Field, want, a.Field)
		if a.Comment != "" {
			line += "  # " + a.Comment
		}
		fmt.Fprintln(b, line)
	}
	fmt.Fprintln(b, "}%")
}

// scriptClock turns model times into the script's relative times, in
// microseconds (packetdrill's resolution): model time Start is the
// handshake's end, HandshakeRTT after the script's 0. Differences are taken
// between rounded absolute times, so rounding never accumulates.
type scriptClock struct {
	start, hs time.Duration
	lastUS    int64
}

// us is model time t in the script's microseconds.
func (c *scriptClock) us(t time.Duration) int64 {
	return int64((c.hs + max(t-c.start, 0) + time.Microsecond/2) / time.Microsecond)
}

// ms is model time t on the script's timestamp clock: milliseconds
// (Linux's TCP timestamp tick) from the SYN-ACK's TS val tsBase.
func (c *scriptClock) ms(t time.Duration) int64 { return tsBase + c.us(t)/1000 }

// at is model time t as the next event's relative time.
func (c *scriptClock) at(t time.Duration) string {
	us := c.us(t)
	d := max(us-c.lastUS, 0)
	c.lastUS = max(us, c.lastUS)
	if d == 0 {
		return "   +0"
	}
	return fmt.Sprintf("+%d.%06d", d/1e6, d%1e6)
}

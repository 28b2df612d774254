package upstream

import (
	"bytes"
	"testing"
	"time"

	"gvisor.dev/gvisor/pkg/buffer"
	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/faketime"
	"gvisor.dev/gvisor/pkg/tcpip/header"
	"gvisor.dev/gvisor/pkg/tcpip/link/channel"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
	"gvisor.dev/gvisor/pkg/tcpip/transport/tcp"
	"gvisor.dev/gvisor/pkg/waiter"
)

const (
	nicID    = 1
	mtu      = 1500
	mss      = 1460
	peerPort = 5001
	peerISS  = 7000
	// peerWndScale and a full 16-bit window advertise 8 MB: the sender is
	// never receive-window limited.
	peerWndScale = 7
)

var (
	localAddr = tcpip.AddrFrom4([4]byte{10, 0, 0, 1})
	peerAddr  = tcpip.AddrFrom4([4]byte{10, 0, 0, 2})
)

// segment is what the peer saw of one segment the sender sent.
type segment struct {
	seq, ack uint32
	len      int
	flags    header.TCPFlags
	tsVal    uint32 // the timestamp option's TSval (0 without it)
}

// peer is a receiver scripted segment by segment against a gVisor sender
// stack whose clock the test advances by hand: nothing in a run depends on
// the wall clock or the Go scheduler. After each inbound segment (and each
// clock advance) the stack is paused and resumed, which returns once its
// processor goroutines are idle, so the segments the sender sent in
// response are all in the channel endpoint.
type peer struct {
	t     *testing.T
	clock *faketime.ManualClock
	st    *stack.Stack
	link  *channel.Endpoint
	ep    tcpip.Endpoint
	port  uint16 // the sender's local port
	iss   uint32 // the sender's initial sequence number
	rcvNx uint32 // the next byte the peer expects (its cumulative ACK)
	// unlimited: the application keeps the send buffer full (fill was
	// called); round refills it after each flight.
	unlimited bool
	// ackSpacing separates the ACKs of one flight (0: they arrive
	// together, one RTT after the flight left).
	ackSpacing time.Duration
	// ts: the handshake negotiated timestamps (RFC 7323); the peer's
	// segments carry TSecr = the TSval of the segment its ACK
	// acknowledges (tsOf, by end sequence number).
	ts    bool
	tsOf  map[uint32]uint32
	tsEcr uint32
}

// peerConfig is what the handshake negotiates.
type peerConfig struct {
	cc       string
	sack, ts bool
}

// newPeer makes a sender stack with congestion control cc, connects one
// endpoint to the peer (the handshake advertises MSS 1460, a window scale
// and, if sack, SACK-permitted; no timestamps). The application writes
// nothing yet.
func newPeer(t *testing.T, cc string, sack bool) *peer {
	t.Helper()
	return newPeerWith(t, peerConfig{cc: cc, sack: sack})
}

// newPeerWith is newPeer with timestamps when c.ts.
func newPeerWith(t *testing.T, c peerConfig) *peer {
	t.Helper()
	cc, sack := c.cc, c.sack
	p := &peer{t: t, clock: faketime.NewManualClock(), ts: c.ts, tsOf: map[uint32]uint32{}}
	// gVisor treats a zero monotonic time as "never": start at 1 s.
	p.clock.Advance(time.Second)
	p.st = stack.New(stack.Options{
		NetworkProtocols:   []stack.NetworkProtocolFactory{ipv4.NewProtocol},
		TransportProtocols: []stack.TransportProtocolFactory{tcp.NewProtocol},
		Clock:              p.clock,
	})
	t.Cleanup(p.st.Close)
	p.link = channel.New(1<<16, mtu, "")
	// The peer writes no checksums; the link does not corrupt.
	p.link.LinkEPCapabilities = stack.CapabilityRXChecksumOffload | stack.CapabilityTXChecksumOffload
	if err := p.st.CreateNIC(nicID, p.link); err != nil {
		t.Fatalf("CreateNIC: %v", err)
	}
	pa := tcpip.ProtocolAddress{Protocol: ipv4.ProtocolNumber, AddressWithPrefix: localAddr.WithPrefix()}
	if err := p.st.AddProtocolAddress(nicID, pa, stack.AddressProperties{}); err != nil {
		t.Fatalf("AddProtocolAddress: %v", err)
	}
	p.st.SetRouteTable([]tcpip.Route{{Destination: header.IPv4EmptySubnet, NIC: nicID}})
	ccOpt := tcpip.CongestionControlOption(cc)
	sackOpt := tcpip.TCPSACKEnabled(sack)
	for _, o := range []tcpip.SettableTransportProtocolOption{&ccOpt, &sackOpt} {
		if err := p.st.SetTransportProtocolOption(tcp.ProtocolNumber, o); err != nil {
			t.Fatalf("SetTransportProtocolOption(%T): %v", o, err)
		}
	}
	var wq waiter.Queue
	ep, err := p.st.NewEndpoint(tcp.ProtocolNumber, ipv4.ProtocolNumber, &wq)
	if err != nil {
		t.Fatalf("NewEndpoint: %v", err)
	}
	t.Cleanup(ep.Close)
	p.ep = ep
	ep.SocketOptions().SetSendBufferSize(16<<20, true)
	if err := ep.Connect(tcpip.FullAddress{NIC: nicID, Addr: peerAddr, Port: peerPort}); err != nil {
		if _, ok := err.(*tcpip.ErrConnectStarted); !ok {
			t.Fatalf("Connect: %v", err)
		}
	}
	syn := p.expectOne(header.TCPFlagSyn)
	p.iss, p.rcvNx = syn.seq, syn.seq+1
	opts := make([]byte, 12)
	header.EncodeMSSOption(mss, opts)
	header.EncodeWSOption(peerWndScale, opts[4:])
	opts[7] = header.TCPOptionNOP
	if sack {
		header.EncodeSACKPermittedOption(opts[8:])
		opts[10], opts[11] = header.TCPOptionNOP, header.TCPOptionNOP
	} else {
		opts = opts[:8]
	}
	if p.ts {
		p.tsEcr = syn.tsVal
	}
	// The SYN-ACK arrives one RTT after the SYN: the handshake gives the
	// sender its first RTT sample.
	p.advance(rtt)
	p.inject(header.TCPFlagSyn|header.TCPFlagAck, peerISS, opts)
	p.expectOne(header.TCPFlagAck)
	return p
}

// fill keeps the sender's send buffer full (an unlimited application).
func (p *peer) fill() {
	p.unlimited = true
	r := make([]byte, 1<<16)
	for {
		n, err := p.ep.Write(bytes.NewReader(r), tcpip.WriteOptions{})
		if err != nil || n == 0 {
			return
		}
	}
}

// inject sends one segment from the peer (no payload) and settles the
// stack.
func (p *peer) inject(flags header.TCPFlags, seq uint32, opts []byte) {
	if p.ts {
		tsOpt := make([]byte, 12)
		tsOpt[0], tsOpt[1] = header.TCPOptionNOP, header.TCPOptionNOP
		header.EncodeTSOption(uint32(p.clock.NowMonotonic().Milliseconds()), p.tsEcr, tsOpt[2:])
		opts = append(append([]byte(nil), opts...), tsOpt...)
	}
	hdr := make([]byte, header.IPv4MinimumSize+header.TCPMinimumSize+len(opts))
	ip := header.IPv4(hdr)
	ip.Encode(&header.IPv4Fields{
		TotalLength: uint16(len(hdr)),
		TTL:         64,
		Protocol:    uint8(tcp.ProtocolNumber),
		SrcAddr:     peerAddr,
		DstAddr:     localAddr,
	})
	ip.SetChecksum(^ip.CalculateChecksum())
	th := header.TCP(hdr[header.IPv4MinimumSize:])
	th.Encode(&header.TCPFields{
		SrcPort:    peerPort,
		DstPort:    p.port,
		SeqNum:     seq,
		AckNum:     p.rcvNx,
		DataOffset: uint8(header.TCPMinimumSize + len(opts)),
		Flags:      flags,
		WindowSize: 0xffff,
	})
	copy(th[header.TCPMinimumSize:], opts)
	pkt := stack.NewPacketBuffer(stack.PacketBufferOptions{Payload: buffer.MakeWithData(hdr)})
	p.link.InjectInbound(ipv4.ProtocolNumber, pkt)
	pkt.DecRef()
	p.settle()
}

// ack acknowledges everything up to ackNo cumulatively (a pure ACK).
func (p *peer) ack(ackNo uint32) {
	p.rcvNx = ackNo
	if v, ok := p.tsOf[ackNo]; ok {
		p.tsEcr = v
	}
	p.inject(header.TCPFlagAck, peerISS+1, nil)
}

// advance moves the sender's clock, running its timers, and settles.
func (p *peer) advance(d time.Duration) {
	p.clock.Advance(d)
	p.settle()
}

// settle returns once the stack has processed everything it was given.
func (p *peer) settle() {
	p.st.Pause()
	p.st.Resume()
}

// sent returns the segments the sender sent since the last call.
func (p *peer) sent() []segment {
	var out []segment
	for {
		pkt := p.link.Read()
		if pkt == nil {
			return out
		}
		b := pkt.ToView().AsSlice()
		ip := header.IPv4(b)
		th := header.TCP(ip.Payload())
		if p.port == 0 {
			p.port = th.SourcePort()
		}
		s := segment{seq: th.SequenceNumber(), ack: th.AckNumber(),
			len: len(th.Payload()), flags: th.Flags()}
		if o := header.ParseTCPOptions(th.Options()); o.TS {
			s.tsVal = o.TSVal
		} else if s.flags&header.TCPFlagSyn != 0 {
			s.tsVal = header.ParseSynOptions(th.Options(), false).TSVal
		}
		if p.ts && s.len > 0 {
			p.tsOf[s.seq+uint32(s.len)] = s.tsVal
		}
		out = append(out, s)
		pkt.DecRef()
	}
}

// expectOne returns the one segment the sender sent, which must carry
// flags.
func (p *peer) expectOne(flags header.TCPFlags) segment {
	p.t.Helper()
	s := p.sent()
	if len(s) != 1 || s[0].flags&flags != flags {
		p.t.Fatalf("want one segment with flags %v, got %+v", flags, s)
	}
	return s[0]
}

// info is the sender's TCP_INFO.
func (p *peer) info() tcpip.TCPInfoOption {
	p.t.Helper()
	var i tcpip.TCPInfoOption
	if err := p.ep.GetSockOpt(&i); err != nil {
		p.t.Fatalf("GetSockOpt(TCPInfoOption): %v", err)
	}
	return i
}

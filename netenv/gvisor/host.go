package gvisor

import (
	"fmt"
	"sync"

	"gvisor.dev/gvisor/pkg/buffer"
	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/header"
	"gvisor.dev/gvisor/pkg/tcpip/link/channel"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
	"gvisor.dev/gvisor/pkg/tcpip/transport/tcp"

	"github.com/actfuzz/actfuzz/netenv/sim"
)

// Addresses of the two hosts.
var (
	senderAddr   = tcpip.AddrFrom4([4]byte{10, 0, 0, 1})
	receiverAddr = tcpip.AddrFrom4([4]byte{10, 0, 0, 2})
)

const (
	nicID      = 1
	mtu        = 1500
	listenPort = 5001
	// chanSize is the channel endpoint's outbound queue; WriteNotify
	// empties it at once, so it never holds more than one packet.
	chanSize = 64
)

// host is one gVisor stack with one channel link endpoint.
type host struct {
	h    *harness
	name string
	node sim.NodeID
	clk  *clock
	st   *stack.Stack
	nic  *channel.Endpoint

	mu     sync.Mutex
	pend   []buffer.Buffer // outbound packets in write order (guarded by mu)
	probes []snapshot      // probe snapshots in processing order (guarded by mu)
}

// hostConfig is what a stack is built with.
type hostConfig struct {
	name   string
	node   sim.NodeID
	addr   tcpip.Address
	seed   uint64
	index  int
	sack   bool
	probe  bool
	sndBuf tcpip.TCPSendBufferSizeRangeOption
	rcvBuf tcpip.TCPReceiveBufferSizeRangeOption
}

func newHost(h *harness, c hostConfig) (*host, error) {
	ho := &host{h: h, name: c.name, node: c.node}
	ho.clk = &clock{now: &h.now, sim: h.sim, node: c.node, fire: ho.fire}
	tp := tcp.NewProtocol
	if c.probe {
		tp = tcp.NewProtocolProbe(ho.probe)
	}
	ho.st = stack.New(stack.Options{
		NetworkProtocols:   []stack.NetworkProtocolFactory{ipv4.NewProtocol},
		TransportProtocols: []stack.TransportProtocolFactory{tp},
		Clock:              ho.clk,
		RandSource:         newDetRand(c.seed, 2*c.index),
		SecureRNG:          newDetRand(c.seed, 2*c.index+1),
	})
	ho.nic = channel.New(chanSize, mtu, "")
	// The link never corrupts a packet: skip computing and verifying
	// checksums.
	ho.nic.LinkEPCapabilities = stack.CapabilityRXChecksumOffload | stack.CapabilityTXChecksumOffload
	ho.nic.AddNotify(ho)
	if err := ho.st.CreateNIC(nicID, ho.nic); err != nil {
		return nil, fmt.Errorf("%s: create NIC: %v", c.name, err)
	}
	pa := tcpip.ProtocolAddress{Protocol: ipv4.ProtocolNumber, AddressWithPrefix: c.addr.WithPrefix()}
	if err := ho.st.AddProtocolAddress(nicID, pa, stack.AddressProperties{}); err != nil {
		return nil, fmt.Errorf("%s: add address: %v", c.name, err)
	}
	ho.st.SetRouteTable([]tcpip.Route{{Destination: header.IPv4EmptySubnet, NIC: nicID}})
	sack := tcpip.TCPSACKEnabled(c.sack)
	opts := []tcpip.SettableTransportProtocolOption{&sack, &c.sndBuf, &c.rcvBuf}
	for _, o := range opts {
		if err := ho.st.SetTransportProtocolOption(tcp.ProtocolNumber, o); err != nil {
			return nil, fmt.Errorf("%s: set %T: %v", c.name, o, err)
		}
	}
	return ho, nil
}

// WriteNotify implements channel.Notification: it takes each outbound
// packet as gVisor writes it, on whatever goroutine writes it.
func (ho *host) WriteNotify() {
	for {
		pkt := ho.nic.Read()
		if pkt == nil {
			return
		}
		b := pkt.ToBuffer()
		pkt.DecRef()
		ho.mu.Lock()
		ho.pend = append(ho.pend, b)
		ho.mu.Unlock()
	}
}

// probe is gVisor's TCP probe, called on a processor goroutine after each
// segment an endpoint of this stack processes.
func (ho *host) probe(s *tcp.TCPEndpointState) {
	snap := snapshotOf(s)
	ho.mu.Lock()
	ho.probes = append(ho.probes, snap)
	ho.mu.Unlock()
}

// quiesce returns once every processor goroutine of the stack is idle with
// nothing queued: all processing of what the host was given is done.
func (ho *host) quiesce() {
	ho.st.Pause()
	ho.st.Resume()
}

// deliver injects an arriving packet and settles the host.
func (ho *host) deliver(buf buffer.Buffer) {
	if ho == ho.h.snd {
		ho.h.onSenderInbound(&buf)
	}
	pkt := stack.NewPacketBuffer(stack.PacketBufferOptions{Payload: buf})
	ho.nic.InjectInbound(ipv4.ProtocolNumber, pkt)
	pkt.DecRef()
	ho.h.settle(ho)
}

// fire runs an expired gVisor timer and settles the host.
func (ho *host) fire(t *timer) {
	ho.h.timerFired(ho)
	t.f()
	ho.h.settle(ho)
}

// takePending returns the packets written since the last call.
func (ho *host) takePending(dst []buffer.Buffer) []buffer.Buffer {
	ho.mu.Lock()
	dst = append(dst, ho.pend...)
	clear(ho.pend)
	ho.pend = ho.pend[:0]
	ho.mu.Unlock()
	return dst
}

// takeProbes returns the probe snapshots taken since the last call.
func (ho *host) takeProbes(dst []snapshot) []snapshot {
	ho.mu.Lock()
	dst = append(dst, ho.probes...)
	ho.probes = ho.probes[:0]
	ho.mu.Unlock()
	return dst
}

package quicgo

import (
	"net"
	"os"
	"sync"
	"time"
)

// pconn is one endpoint's UDP socket as quic-go sees it: a net.PacketConn
// whose writes go to the harness (and from there through netenv's link
// model) and whose reads return what the link model delivered. It is not
// an OOBCapablePacketConn, so quic-go uses it as a basic connection:
// no ECN, no GSO, no DF bit (see the package documentation).
type pconn struct {
	h    *harness
	addr *net.UDPAddr

	mu       sync.Mutex
	queue    []datagram // delivered, not yet read
	closed   bool
	deadline bool          // a read deadline in the past is set
	ready    chan struct{} // capacity 1: something changed for a reader
}

// datagram is one UDP payload with the address it came from.
type datagram struct {
	b    []byte
	from *net.UDPAddr
}

var _ net.PacketConn = (*pconn)(nil)

func newPconn(h *harness, port int) *pconn {
	return &pconn{h: h, addr: &net.UDPAddr{IP: net.IPv4(10, 0, 0, 1), Port: port}, ready: make(chan struct{}, 1)}
}

func (c *pconn) signal() {
	select {
	case c.ready <- struct{}{}:
	default:
	}
}

// deliver queues a datagram the link model delivered to this endpoint.
func (c *pconn) deliver(d datagram) {
	c.mu.Lock()
	if !c.closed {
		c.queue = append(c.queue, d)
	}
	c.mu.Unlock()
	c.signal()
}

// ReadFrom implements net.PacketConn.
func (c *pconn) ReadFrom(b []byte) (int, net.Addr, error) {
	for {
		c.mu.Lock()
		switch {
		case c.closed:
			c.mu.Unlock()
			return 0, nil, net.ErrClosed
		case len(c.queue) > 0:
			d := c.queue[0]
			c.queue[0] = datagram{}
			c.queue = c.queue[1:]
			c.mu.Unlock()
			return copy(b, d.b), d.from, nil
		case c.deadline:
			c.mu.Unlock()
			return 0, nil, os.ErrDeadlineExceeded
		}
		c.mu.Unlock()
		<-c.ready
	}
}

// WriteTo implements net.PacketConn: the datagram enters the first link
// of its path at the current time.
func (c *pconn) WriteTo(b []byte, addr net.Addr) (int, error) {
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return 0, net.ErrClosed
	}
	to, ok := addr.(*net.UDPAddr)
	if !ok {
		return 0, &net.OpError{Op: "write", Net: "udp", Err: net.UnknownNetworkError(addr.Network())}
	}
	c.h.submit(c, to, append([]byte(nil), b...))
	return len(b), nil
}

// Close implements net.PacketConn.
func (c *pconn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.queue = nil
	c.mu.Unlock()
	c.signal()
	return nil
}

// LocalAddr implements net.PacketConn.
func (c *pconn) LocalAddr() net.Addr { return c.addr }

// SetDeadline implements net.PacketConn (reads only: writes never block).
func (c *pconn) SetDeadline(t time.Time) error { return c.SetReadDeadline(t) }

// SetReadDeadline implements net.PacketConn. quic-go sets a deadline in
// the past to stop its reader when a Transport closes, and clears it
// after; that is all it is used for, so any non-zero deadline counts as
// passed.
func (c *pconn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	c.deadline = !t.IsZero()
	c.mu.Unlock()
	c.signal()
	return nil
}

// SetWriteDeadline implements net.PacketConn.
func (c *pconn) SetWriteDeadline(time.Time) error { return nil }

// SetReadBuffer and SetWriteBuffer accept quic-go's socket buffer sizes:
// the endpoint's queue is unbounded (the link model's buffers are the
// ones that drop), so there is nothing to size, and quic-go does not
// warn about a buffer it could not grow.
func (c *pconn) SetReadBuffer(int) error { return nil }

// SetWriteBuffer: see SetReadBuffer.
func (c *pconn) SetWriteBuffer(int) error { return nil }

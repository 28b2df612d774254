package netenv

import (
	"time"

	"github.com/actfuzz/actfuzz/netenv/sim"
)

// PacketTap sees a native run at the packet level, at each sender: every
// segment the sender sends (before the path can lose or delay it) and every
// packet that reaches the sender from its path (the receiver's ACKs, after
// the path's losses and delays). `actfuzz export --pkt` scripts a
// packetdrill peer from it (netenv/pkt). The packets are the run's: a tap
// reads them and keeps none.
type PacketTap interface {
	SenderSent(flow int32, at time.Duration, p *sim.Packet)
	SenderReceived(flow int32, at time.Duration, p *sim.Packet)
}

// tapOut passes a sender's packets to the tap, then onto its path.
type tapOut struct {
	out pathOut
	tap PacketTap
	sim *sim.Sim
}

func (o tapOut) Send(p *sim.Packet) {
	o.tap.SenderSent(p.Flow, o.sim.Now(), p)
	o.out.Send(p)
}

// tapIn passes the packets arriving at a sender to the tap, then to it.
type tapIn struct {
	snd sim.Handler
	tap PacketTap
	sim *sim.Sim
}

func (i tapIn) Handle(e *sim.Event) {
	if e.Pkt != nil {
		i.tap.SenderReceived(e.Pkt.Flow, i.sim.Now(), e.Pkt)
	}
	i.snd.Handle(e)
}

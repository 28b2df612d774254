package gvisor

// settle.go holds what the harness does at quiescence after each event:
// the sender's ACKs and connection states, the receiver's accepts and
// reads.

import (
	"io"

	"gvisor.dev/gvisor/pkg/tcpip"
	gtcp "gvisor.dev/gvisor/pkg/tcpip/transport/tcp"
	"gvisor.dev/gvisor/pkg/waiter"

	"github.com/actfuzz/actfuzz/netenv/observe"
)

// timerFired notes which host's timer the current event is.
func (h *harness) timerFired(ho *host) {
	h.timerHost = ho
}

// settle finishes an event that touched host ho: wait for quiescence, let
// the applications act, move armed timers into the event queue, and put
// the written packets on the link.
func (h *harness) settle(ho *host) {
	ho.quiesce()
	h.progress.Add(1)
	if h.abandon.Load() {
		h.sim.Stop()
	}
	if ho == h.snd {
		h.afterSender()
	} else {
		h.afterReceiver()
	}
	h.timerHost = nil
	ho.clk.sync()
	h.flush(ho)
}

func (h *harness) afterSender() {
	snaps := h.snd.takeProbes(h.probeBuf[:0])
	for i := range snaps {
		if f := h.byPort[snaps[i].port]; f != nil && f.established && !f.done {
			f.onAck(&snaps[i])
		}
	}
	h.probeBuf = snaps[:0]
	if h.timerHost == h.snd {
		h.afterSenderTimer()
	}
	for _, f := range h.flows {
		if f.done || f.aborted {
			continue
		}
		switch st := f.ep.EndpointState(); {
		case st == gtcp.StateError || st == gtcp.StateClose:
			// gVisor gave up on the connection (SYN or data
			// retransmissions exhausted): the flow ends, not done.
			f.aborted = true
			f.h.sim.Cancel(f.appEv)
			h.flowDone()
			continue
		case !f.established && st == gtcp.StateEstablished:
			f.established = true
			f.writable.Store(true)
			info := f.info()
			f.emitInfo(observe.ReasonState, &info)
		}
		f.pump()
	}
}

func (h *harness) afterReceiver() {
	if h.acceptable.Load() {
		h.acceptable.Store(false)
		for {
			var addr tcpip.FullAddress
			ep, wq, err := h.listener.Accept(&addr)
			if err != nil {
				break
			}
			f := h.byPort[addr.Port]
			if f == nil || f.rep != nil {
				ep.Abort()
				continue
			}
			f.rep, f.rwq = ep, wq
			re := waiter.NewFunctionEntry(waiter.ReadableEvents, func(waiter.EventMask) { f.readable.Store(true) })
			wq.EventRegister(&re)
			f.readable.Store(true)
		}
	}
	for _, f := range h.flows {
		if f.rep == nil || !f.readable.Load() {
			continue
		}
		f.readable.Store(false)
		for {
			r, err := f.rep.Read(io.Discard, tcpip.ReadOptions{})
			if err != nil || r.Count == 0 {
				break
			}
			f.received += uint64(r.Count)
		}
	}
}

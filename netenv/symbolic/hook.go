package symbolic

import (
	"fmt"
	"time"

	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/sim"
	"github.com/actfuzz/actfuzz/netenv/tcp"
)

// WindowHook is the delay hook of a TCP window of n packets of one flow from
// packet first on: kind "data" (first transmissions, counted by segment),
// "fin", "syn", "syn-ack" or "ack" (counted in the order they leave the
// bottleneck). delays[i] is the delay of the window's i-th packet. The hook
// counts ACKs: use a fresh one for every run.
func WindowHook(flow int, kind string, first uint64, delays []time.Duration) (netenv.DelayHook, error) {
	var k packetKind
	switch kind {
	case "", "data", "fin":
	case "syn":
		k = kindSyn
	case "syn-ack", "synack":
		k = kindSynAck
	case "ack", "acks":
		k = kindAck
	default:
		return nil, fmt.Errorf("kind %q, want data, fin, syn, syn-ack or ack", kind)
	}
	if len(delays) > MaxVars {
		return nil, fmt.Errorf("%d delays, at most %d", len(delays), MaxVars)
	}
	h := &windowDelays{flow: flow, kind: k, first: first, n: uint64(len(delays)), res: 1, w: new([MaxVars]int64)}
	for i, d := range delays {
		h.w[i] = int64(d)
	}
	return h.hook, nil
}

// windowDelays gives a TCP window's packets their delays, w[i]·res for the
// window's i-th packet. A snapshot of a run does not see it through the
// run (netenv.Config.DelayHook is shared), so the explorer saves it as a
// root of its own: acks is state. w is the branch's witness, set for every
// branch.
type windowDelays struct {
	flow     int
	kind     packetKind
	first, n uint64
	acks     uint64 // ACKs of the flow that left the bottleneck so far
	res      time.Duration
	w        *[MaxVars]int64 `snapshot:"shared"`
	read     bool            // a delay was read (prefix.go checks that none was before the snapshot)
}

func (h *windowDelays) hook(p *sim.Packet) (time.Duration, int16, bool) {
	if int(p.Flow) != h.flow || p.Retx {
		return 0, 0, false
	}
	var k uint64
	switch h.kind {
	case kindData:
		if p.IsAck || p.SYN || p.Len == 0 {
			return 0, 0, false
		}
		k = p.Seq / tcp.DefaultMSS
	case kindSyn:
		if !p.SYN || p.IsAck {
			return 0, 0, false
		}
	case kindSynAck:
		if !p.SYN || !p.IsAck {
			return 0, 0, false
		}
	case kindAck:
		if !p.IsAck || p.SYN {
			return 0, 0, false
		}
		k = h.acks
		h.acks++
	}
	if k < h.first || k >= h.first+h.n {
		return 0, 0, false
	}
	i := k - h.first
	h.read = true
	return time.Duration(h.w[i]) * h.res, int16(i + 1), true
}

// hopDelays gives a topology window's packets (flow, sequence numbers
// first…first+n−1, on one hop) their delays. It has no state but the
// witness, which is set for every branch.
type hopDelays struct {
	flow     int
	hop      [2]sim.NodeID
	first, n uint64
	res      time.Duration
	w        *[MaxVars]int64 `snapshot:"shared"`
	read     bool
}

func (h *hopDelays) hook(from, to sim.NodeID, p *sim.Packet) (time.Duration, int16, bool) {
	if int(p.Flow) != h.flow || from != h.hop[0] || to != h.hop[1] || p.Seq < h.first || p.Seq >= h.first+h.n {
		return 0, 0, false
	}
	i := p.Seq - h.first
	h.read = true
	return time.Duration(h.w[i]) * h.res, int16(i + 1), true
}

package symbolic

import (
	"fmt"
	"slices"
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
	ds := slices.Clone(delays)
	return windowHook(flow, k, first, uint64(len(ds)), func(i uint64) time.Duration { return ds[i] }), nil
}

// windowHook gives the window's packets their delays.
func windowHook(flow int, kind packetKind, first, n uint64, delay func(i uint64) time.Duration) netenv.DelayHook {
	acks := uint64(0) // ACKs of the flow that left the bottleneck so far
	return func(p *sim.Packet) (time.Duration, int16, bool) {
		if int(p.Flow) != flow || p.Retx {
			return 0, 0, false
		}
		var k uint64
		switch kind {
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
			k = acks
			acks++
		}
		if k < first || k >= first+n {
			return 0, 0, false
		}
		i := k - first
		return delay(i), int16(i + 1), true
	}
}

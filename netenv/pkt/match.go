package pkt

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Matching the script's outbound packets against what our side sent,
// oldest first, as packetdrill compares each expected packet with the next
// one it sniffs:
//   - sequence range: start and end as written. Linux sends TSO/GSO
//     super-segments ("1:10001(10000)" is ten MSS on the wire); the model
//     sends MSS-sized segments, so consecutive contiguous segments of the
//     same kind (new data or retransmission) are coalesced to match one
//     expected packet, each of them within the time window. How Linux
//     cuts a burst into super-segments (tcp_tso_autosize, TSO deferral)
//     is not modelled, so a burst's cut is not checked: an expected
//     packet may end inside what the model sent at one instant, and the
//     rest is matched by the next expected packets. As with packetdrill,
//     packets sent after the last expected one are not checked;
//   - flags: S, F, R, E (ECE), W (CWR) and the ACK '.' exactly; P (PSH)
//     is ignored: Linux sets it at the end of a write (tcp_push), which
//     says nothing about congestion control;
//   - ack: as written (the model receives no data, so it is 1, or 2 after
//     the peer's FIN);
//   - win and TCP options are not compared, except that a sack option on
//     an outbound packet cannot match (the model never acknowledges data):
//     mss, wscale, sackOK, TS and nop are negotiation and padding, whose
//     effect (the MSS, SACK, timestamps) the handshake applies;
//   - the ECN codepoint when the script writes one ([ect0], [noecn], ...);
//   - the time of the first segment: within the event's window
//     (timing.go).

// pump runs the model until at least n packets are queued or the next
// event would pass hi; it reports whether n are queued.
func (in *interp) pump(n int, hi time.Duration) bool {
	for len(in.out) < n {
		next, pending := in.sim.RunUntil(in.sim.Now())
		if len(in.out) >= n {
			break
		}
		if !pending || next > hi {
			return false
		}
		in.sim.RunUntil(next)
	}
	return true
}

func (o outPkt) String() string {
	return fmt.Sprintf("%s %d:%d(%d) ack %d", o.flags, o.seq, o.end, o.end-o.seq, o.ack)
}

func expectString(p *Packet) string {
	s := fmt.Sprintf("%s %d:%d(%d)", p.Flags, p.Seq, p.End, p.Len)
	if p.HasAck {
		s += fmt.Sprintf(" ack %d", p.Ack)
	}
	return s
}

// flagSet normalizes flags for comparison: sorted, without P.
func flagSet(f string) string {
	b := []byte(strings.ReplaceAll(f, "P", ""))
	if string(b) == "-" {
		return ""
	}
	sort.Slice(b, func(i, j int) bool { return b[i] < b[j] })
	return string(b)
}

// outbound matches one expected packet.
func (in *interp) outbound(p *Packet, w window) error {
	if !in.pump(1, w.hi) {
		in.advance(w.hi)
		return mismatch("expected %s at %.6f s; the model sent nothing by %.6f s", expectString(p), w.t.Seconds(), w.hi.Seconds())
	}
	head := in.out[0]
	if !w.any && (head.at < w.lo || head.at > w.hi) {
		return mismatch("expected %s at %.6f s (%.6f~%.6f); the model sent %s at %.6f s",
			expectString(p), w.t.Seconds(), w.lo.Seconds(), w.hi.Seconds(), head, head.at.Seconds())
	}
	// Coalesce a super-segment.
	end, n := head.end, 1
	for !head.synthetic && end < p.End && in.pump(n+1, w.hi) {
		next := in.out[n]
		if next.synthetic || next.seq != end || next.retx != head.retx || next.flags != head.flags || (!w.any && next.at > w.hi) {
			break
		}
		end = next.end
		n++
	}
	seen := head
	seen.end = end
	if head.seq != p.Seq || end != p.End {
		return mismatch("expected %s; the model sent %s at %.6f s", expectString(p), seen, head.at.Seconds())
	}
	if flagSet(head.flags) != flagSet(p.Flags) {
		return mismatch("expected flags %s in %s; the model sent %s", p.Flags, expectString(p), seen)
	}
	if p.HasAck && p.Ack != head.ack {
		return mismatch("expected %s; the model sent ack %d", expectString(p), head.ack)
	}
	for _, o := range p.Options {
		if o.Kind == "sack" {
			return mismatch("expected a SACK option in %s; the model acknowledges no data", expectString(p))
		}
	}
	switch p.ECN {
	case "ect0", "ect01":
		if !head.ect && !head.synthetic {
			return mismatch("expected ECT(0) on %s; the model sent Not-ECT", expectString(p))
		}
	case "noecn", "no_ecn":
		if head.ect {
			return mismatch("expected Not-ECT on %s; the model sent ECT(0)", expectString(p))
		}
	case "ect1", "ce":
		return unsupported("outbound %s codepoint", p.ECN)
	}
	if head.synthetic && strings.ContainsRune(head.flags, 'S') {
		for _, o := range p.Options {
			if o.Kind == "TS" {
				in.synAckTS, in.synAckAt = o.Val, head.at
			}
		}
	}
	in.out = in.out[n:]
	return nil
}

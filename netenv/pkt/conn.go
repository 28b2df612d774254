package pkt

import (
	"strings"
	"time"

	"github.com/actfuzz/actfuzz/netenv/sim"
)

// Connection management. The model's sender (netenv/tcp) starts with an
// open connection and has no passive open, no FIN and no receive path;
// the interpreter does the handshake and the teardown itself, as Linux
// does them, so that the script's data phase runs on the model:
//   - passive open: a SYN to the listening socket is answered at once with
//     a SYN-ACK (mss 1460 less 12 with timestamps, sackOK, TS and wscale 8
//     when the SYN offered them, ECE when it asked for ECN); the ACK that
//     completes it gives the handshake's RTT sample (tcp_synack_rtt_meas);
//   - active open: connect() sends the SYN, the SYN-ACK completes it with
//     an immediate ACK and the RTT sample;
//   - close() sends a FIN once every byte is acknowledged; the peer's FIN
//     is acknowledged at once.
// These packets are matched like the model's, but they test the
// interpreter, not the model. Anything else of connection management
// (retransmitted SYNs, RSTs, data from the peer, half-close) is
// unsupported.

// ourMSS is the MSS we advertise: a 1500-byte MTU less IPv4 and TCP
// headers (Linux's advmss on packetdrill's tun device).
const ourMSS = 1460

// tsOptionBytes is the RFC 7323 timestamp option, padded.
const tsOptionBytes = 12

func (in *interp) advMSS() uint32 {
	if in.tsOK {
		return ourMSS - tsOptionBytes
	}
	return ourMSS
}

// emit queues a packet of the interpreter's own.
func (in *interp) emit(flags string, seq, ack int64) {
	in.out = append(in.out, outPkt{at: in.sim.Now(), seq: seq, end: seq, ack: ack, flags: flags, synthetic: true})
}

// negotiate takes the peer's SYN or SYN-ACK options.
func (in *interp) negotiate(p *Packet) error {
	peerMSS := int64(536) // RFC 9293 §3.7.1's default without the option
	for _, o := range p.Options {
		switch o.Kind {
		case "mss":
			peerMSS = o.Val
		case "sackOK":
			in.sackOK = in.set.sack
		case "TS":
			in.tsOK = in.set.timestamps
		case "wscale":
			in.peerWScale = o.Val
		case "FO", "FOEXP":
			return unsupported("TCP fast open")
		case "md5":
			return unsupported("TCP MD5 option")
		}
	}
	mss := min(peerMSS, ourMSS)
	if in.tsOK {
		mss -= tsOptionBytes
	}
	if mss <= 0 {
		return unsupported("MSS %d", peerMSS)
	}
	in.mss = uint32(mss)
	in.rwnd = uint64(p.Win) // a SYN's window is never scaled (RFC 7323 §2.2)
	return nil
}

// inbound injects a packet of the script.
func (in *interp) inbound(p *Packet) error {
	if strings.ContainsRune(p.Flags, 'R') {
		return unsupported("inbound RST")
	}
	if p.Len > 0 {
		return unsupported("inbound data (the model's sender does not receive data)")
	}
	syn := strings.ContainsRune(p.Flags, 'S')
	ack := strings.Contains(p.Flags, ".")
	switch {
	case syn && !ack && in.state == stateListen:
		if err := in.negotiate(p); err != nil {
			return err
		}
		ecnReq := strings.ContainsRune(p.Flags, 'E') && strings.ContainsRune(p.Flags, 'W')
		in.ecnOK = ecnReq && in.set.ecn != 0
		in.state = stateSynRecv
		in.synAt = in.sim.Now()
		flags := "S."
		if in.ecnOK {
			flags = "SE."
		}
		in.emit(flags, 0, 1)
		return nil
	case syn && ack && in.state == stateSynSent:
		if err := in.negotiate(p); err != nil {
			return err
		}
		in.ecnOK = in.ecnOK && strings.ContainsRune(p.Flags, 'E')
		in.handshakeRTT = in.sim.Now() - in.synAt
		in.state = stateEstablished
		in.emit(".", 1, 1)
		return nil
	case syn:
		return unsupported("inbound SYN in state %d", in.state)
	case !ack:
		return unsupported("inbound segment without ACK")
	case in.state == stateSynRecv:
		if p.Ack != 1 {
			return unsupported("handshake ACK of %d", p.Ack)
		}
		in.handshakeRTT = in.sim.Now() - in.synAt
		in.state = stateEstablished
		in.window(p, 0)
		return nil
	case in.state != stateEstablished && in.state != stateFinWait1 && in.state != stateFinWait2:
		return unsupported("inbound ACK in state %d", in.state)
	}
	if strings.ContainsRune(p.Flags, 'F') {
		if in.finSeq == 0 {
			return unsupported("peer FIN before close (half-close is not modelled)")
		}
		in.peerFin = true
		in.state = stateTimeWait
		in.emit(".", in.finSeq+1, 2)
		return nil
	}
	if in.finSeq != 0 && p.Ack == in.finSeq+1 {
		in.state = stateFinWait2
		return nil
	}
	return in.deliverAck(p)
}

// window records the peer's advertised window, scaled (RFC 7323 §2.3).
func (in *interp) window(p *Packet, ackByte uint64) {
	if !p.HasWin {
		return
	}
	w := uint64(p.Win)
	if in.peerWScale >= 0 {
		w <<= min(in.peerWScale, 14)
	}
	in.rwnd = w
	in.ackByte = max(in.ackByte, ackByte)
}

// deliverAck hands a data-phase ACK to the model's sender.
func (in *interp) deliverAck(p *Packet) error {
	if p.Ack < 1 {
		return unsupported("ACK number %d below our ISN+1", p.Ack)
	}
	ackByte := uint64(p.Ack - 1)
	in.window(p, ackByte)
	if in.snd == nil && ackByte == 0 {
		return nil // nothing written yet: a window update
	}
	if err := in.ensureSender(); err != nil {
		return err
	}
	q := in.sim.NewPacket()
	q.Flow = 1
	q.Src, q.Dst = peerNode, localNode
	q.IsAck = true
	q.Ack = ackByte
	q.ECE = strings.ContainsRune(p.Flags, 'E')
	q.SentAt = in.sim.Now()
	for _, o := range p.Options {
		switch o.Kind {
		case "sack":
			for _, b := range o.Blocks {
				if int(q.NSACK) >= len(q.SACK) {
					in.sim.FreePacket(q)
					return unsupported("more than %d SACK blocks", len(q.SACK))
				}
				q.SACK[q.NSACK] = sim.SACKBlock{Start: uint64(max(b[0]-1, 0)), End: uint64(max(b[1]-1, 0))}
				q.NSACK++
			}
		case "TS":
			q.TSVal = in.sim.Now() + 1
		}
	}
	// RFC 2883 §4: the first block is a D-SACK when it lies at or below
	// the cumulative ACK or inside the second block.
	if q.NSACK > 0 {
		d := q.SACK[0]
		q.DSACK = d.End <= q.Ack || (q.NSACK > 1 && d.Start >= q.SACK[1].Start && d.End <= q.SACK[1].End)
	}
	if in.tsOK {
		q.TSEcr = in.echo(ackByte)
		if e, ok := in.scriptEcho(p); ok {
			q.TSEcr = e
		}
	}
	q.Arrival.Handler = in.snd
	q.Arrival.Node = localNode
	in.sim.ScheduleAt(&q.Arrival, in.sim.Now())
	in.sim.RunUntil(in.sim.Now())
	return nil
}

// echo is the timestamp the peer echoes (RFC 7323 §4.3): TS.Recent is
// taken from the segment that covers the last ACK the peer sent, so a
// cumulative ACK echoes the (latest transmission of the) segment that
// filled the receiver's next expected byte, and a duplicate ACK repeats
// the previous echo. The script's own ecr values are in packetdrill's
// clock and are not used.
func (in *interp) echo(ackByte uint64) time.Duration {
	prev := int64(in.ackByteEchoed) + 1
	if ackByte > in.ackByteEchoed || in.tsRecent == 0 {
		for i := len(in.sent) - 1; i >= 0; i-- {
			if in.sent[i].seq == prev {
				in.tsRecent = in.sent[i].tsval
				break
			}
		}
		in.ackByteEchoed = ackByte
	}
	return in.tsRecent
}

// tsTick is the script's timestamp tick under --tcp_ts_ecr_scaled:
// Linux's TCP timestamp clock runs in milliseconds (tcp_time_stamp_ts).
const tsTick = time.Millisecond

// scriptEcho is the echo the script writes, under --tcp_ts_ecr_scaled
// once our SYN-ACK's TS val is known (match.go): ecr e is tick e −
// synAckTS after the SYN-ACK, and echoes the latest segment we sent in
// that tick, as Linux's segments of one tick carry one TS val (so an echo
// of the tick of a retransmission is not before it: tcp_packet_delayed,
// RFC 3522 §2). A tick in which we sent nothing echoes its start.
func (in *interp) scriptEcho(p *Packet) (time.Duration, bool) {
	if !in.tsEcrScaled || in.synAckAt == 0 && in.synAckTS == 0 {
		return 0, false
	}
	for _, o := range p.Options {
		if o.Kind != "TS" || o.Ecr < in.synAckTS {
			continue
		}
		from := in.synAckAt + time.Duration(o.Ecr-in.synAckTS)*tsTick
		for i := len(in.sent) - 1; i >= 0; i-- {
			at := in.sent[i].tsval - 1 // a TS val is its send time + 1 ns
			if at >= from && at < from+tsTick {
				return in.sent[i].tsval, true
			}
			if at < from {
				break
			}
		}
		return from + 1, true
	}
	return 0, false
}

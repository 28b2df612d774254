// Package tcp holds actfuzz's TCP endpoints: a sender and a receiver modelled
// on Linux's TCP, written from the RFCs and documented kernel behaviour.
//
// One file per concern, after gVisor's pkg/tcpip/transport/tcp:
//   - sender.go: the send path: window, pacing, application limits, Nagle,
//     restart after idle (RFC 5681 §4.1, RFC 7661);
//   - app.go: the application writing at its rate into a bounded send
//     buffer (Linux's tcp_wmem), blocking while it is full;
//   - scoreboard.go: the retransmission queue with SACK/lost/retrans marks
//     (RFC 2018, RFC 6675);
//   - ack.go: ACK processing, RTT samples and delivery-rate samples
//     (draft-cheng-iccrg-delivery-rate-estimation);
//   - recovery.go: ca_state (Open/Disorder/CWR/Recovery/Loss), fast
//     retransmit, fast recovery with PRR (RFC 6937), NewReno without SACK
//     (RFC 6582), undo (RFC 2883 D-SACK, RFC 3522 Eifel with timestamps);
//   - rto.go: RTO estimation per RFC 6298 with Linux's 200 ms minimum and
//     exponential backoff, and the RTTTracker through which the symbolic
//     back-end follows it;
//   - receiver.go: cumulative and selective ACKs, D-SACK, delayed ACKs with
//     Linux's quick-ACK start, RFC 7323 timestamps;
//   - trace.go: the state record. Every change is observed once, in
//     order: a ca_state transition emits a record with the values of that
//     moment (setState), each ACK emits one after the algorithm has reacted
//     to it unless nothing changed since the last (endAck), a timeout emits
//     one record with its move to Loss, and an idle restart emits one.
//
// Windows are in packets, as in Linux. Sequence numbers are 64-bit byte
// offsets that never wrap.
package tcp

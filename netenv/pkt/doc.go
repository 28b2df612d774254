// Package pkt reads packetdrill scripts (Google's packetdrill, with which
// Linux's TCP developers specify behaviour) and runs them against the
// native subject's simulated TCP (netenv/tcp), issue 49: `actfuzz pkt
// SCRIPT.pkt [--profile linux]`.
//
// A script plays the remote peer. Its inbound packets ('<') enter our TCP
// at the script's times; its outbound packets ('>') are what our TCP must
// send, in order and on time; its %{ assert ... }% blocks check our
// TCP_INFO equivalents. The grammar is packetdrill's syntax.md; the parser
// is written from it and from the suite's scripts (gtests/net/tcp), not
// from packetdrill's source.
//
// # Outcomes
//
// Pass: every outbound packet matched and every assert held. Fail: the
// first mismatch, expected vs seen, with the script line and simulated
// time. BadScript: a syntax error, naming its line. Unsupported: a
// construct the model cannot run, named (a syscall, setsockopt, sysctl,
// TCP_INFO field, packet form, inbound data, a transmission beyond the
// peer's receive window); an unsupported script is never a pass. `actfuzz
// pkt` exits 0, 1, 2 and 4 for them.
//
// # The seam
//
// The interpreter drives a sim.Sim with RunUntil, the seam the Linux
// subject's real-time driver uses: the model's sender (tcp.Sender) is the
// local TCP, its packets are collected by the interpreter (tcp.Output),
// and the script's ACKs are delivered to it as packet events. The sender
// is built at the first write (tcp.Sender.Write appends to the transfer)
// with what the handshake negotiated: the MSS (the peer's, at most 1460,
// less 12 with timestamps), SACK, ECN, and the handshake's RTT sample
// (tcp.Sender.Established). The handshake and the teardown are the
// interpreter's (conn.go): the model has no passive open, FIN or receive
// path; their packets are matched but test the interpreter.
//
// # Matching (match.go)
//
// Sequence numbers are relative, as packetdrill prints them: our SYN is
// 0, data byte i of the transfer is i+1. An expected TSO super-segment
// ("1:10001(10000)") matches consecutive contiguous MSS segments of the
// model. Flags are compared exactly but for PSH, which Linux sets at a
// write's end and which says nothing about congestion control. The ack
// field is compared; win and TCP options are not (mss, wscale, sackOK,
// TS and nop are negotiation and padding the handshake applies; an
// outbound sack option cannot match, the model acknowledges no data);
// the ECN codepoint is compared when the script writes one. Times follow
// packetdrill: max(4 ms, 12.5% of the gap to the previous event), or a
// written range (timing.go).
//
// # TCP_INFO in the model (tcpinfo.go)
//
//   - tcpi_snd_cwnd, tcpi_snd_ssthresh: ccai.Sock's Cwnd and SSThresh in
//     packets (ssthresh 2147483647 before the first reduction, as Linux);
//   - tcpi_ca_state: ccai.Sock.CAState (Open 0, Disorder 1, CWR 2,
//     Recovery 3, Loss 4, Linux's numbering);
//   - tcpi_rto: tcp.Sender.RTO() with backoff, µs; tcpi_rtt, tcpi_rttvar,
//     tcpi_min_rtt: srtt, the mean deviation and the minimum RTT, µs;
//   - tcpi_retransmits, tcpi_backoff: tcp.Sender.Backoff(), the timeouts
//     in a row (the model keeps one counter for icsk_retransmits and
//     icsk_backoff);
//   - tcpi_unacked, tcpi_sacked, tcpi_lost, tcpi_retrans: packets_out,
//     sacked_out, lost_out, retrans_out of the scoreboard;
//   - tcpi_total_retrans: retransmissions so far; tcpi_data_segs_out:
//     data segments sent;
//   - tcpi_delivered: packets delivered, plus one for the handshake, as
//     Linux counts the SYN (tcp_rcv_state_process);
//   - tcpi_snd_mss, tcpi_advmss: the negotiated MSS and ours;
//   - tcpi_reordering: 3, the model's fixed DupThresh (Linux raises it
//     when it sees reordering);
//   - tcpi_state: the interpreter's connection state, Linux's numbering.
//
// Any other field is unsupported, named.
//
// # Sysctls (sysctl.go)
//
// The preamble's sysctls (and those of ../common/defaults.sh and
// set_sysctls.py it runs) are mapped (tcp_sack, tcp_timestamps, tcp_ecn,
// tcp_congestion_control, tcp_wmem, tcp_slow_start_after_idle), fixed
// (tcp_reordering=3, tcp_dsack=1, tcp_frto=2: another value is
// unsupported), approximated (tcp_recovery's RACK, tcp_early_retrans's
// TLP, tcp_tso_win_divisor: the script runs and the result lists them;
// --strict makes them unsupported), or ignored as no part of a sender's
// congestion control (fast open, syncookies, tcp_rmem, SYN retries).
// Every script of the suite sources defaults.sh, which enables RACK and
// TLP: the model has neither, and the suite's scripts that test them
// fail, which is the model's departure, not the interpreter's.
//
// # The suite's failures (profile linux)
//
// Of the congestion-control topics (ecn, fast_recovery, fast_retransmit,
// limited_transmit, sack, slow_start) 22 scripts are supported, 15 pass
// (suitePasses) and 7 fail, each on a departure of the model from Linux:
//
//   - fast_recovery/prr-ss-30pkt-lost-1_4-11_16.pkt:43: Linux marks the
//     retransmitted 1001:2001 lost again when a later-sent
//     retransmission is SACKed (RACK, RFC 8985 §6.2), and resends it; the
//     model has no RACK and marks a retransmitted segment lost only by
//     RTO. (PRR's entry into recovery, lines 26 and 41, now matches.)
//   - fast_recovery/prr-ss-ack-below-snd_una-cubic.pkt:31: RACK marks
//     4001:7001 lost by time once 8001:9001 was SACKed; the model's
//     DupThresh needs more SACKed segments above them. Its old ACK (the
//     point of the script) is now processed (tcp.Sender onOldAck).
//   - fast_retransmit/fr-4pkt-fack-last-byte.pkt:26,
//     fr-4pkt-fack-last-mss.pkt:27: the retransmission comes from
//     RACK's reorder timer or a tail loss probe (RFC 8985 §6.2, §7); the
//     model waits for DupThresh or the RTO.
//   - sack/sack-shift-sacked-7-3-4-8-9-fack.pkt:24,
//     sack-shift-sacked-7-5-6-8-9-fack.pkt:23: RACK's reorder timer
//     retransmits 1:1001; and sack-shift-sacked-2-6-8-3-9-nofack.pkt:30
//     asserts tcpi_lost 6, which RACK marks by time where DupThresh marks
//     2. These scripts also assert tcpi_reordering 6: the model keeps
//     DupThresh 3 (Linux's tcp_check_sack_reordering raises
//     tp->reordering when a SACK fills below the highest SACKed segment).
//
// # Timestamps and code blocks
//
// Under the script option --tcp_ts_ecr_scaled the peer's TS ecr values are
// the script's, in 1 ms ticks from our SYN-ACK's TS val, as packetdrill
// maps them onto the kernel's clock (conn.go scriptEcho); without it the
// interpreter computes the echo (RFC 7323 §4.3). A %{ }% block may assign
// names ("prev_cwnd = tcpi_snd_cwnd") that later blocks read, as
// packetdrill runs a script's blocks as one Python program.
//
// # Export (export.go)
//
// The other direction: Capture records a native run's packets at the
// sender (netenv.PacketTap) and WriteScript writes the sender side as a
// packetdrill script for a stock kernel (`actfuzz export --pkt`,
// corpus/pktexport, docs/packetdrill.md).
//
// Files, one per concern: lexer.go, ast.go, parser.go and parse_action.go
// (the recursive-descent parser), timing.go, sysctl.go, assert.go (the
// Python subset of %{ }% blocks), tcpinfo.go, conn.go (handshake,
// teardown, inbound packets), syscall.go, match.go, interp.go, export.go.
package pkt

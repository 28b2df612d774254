package oracle

import "github.com/actfuzz/actfuzz/corpus"

// bdp is the path's bandwidth-delay product in packets of 1448 bytes, from
// the parameters in force: p.bw Mbit/s × 2·p.delay ms.
const bdp = "(p.bw * p.delay * 250 / 1448)"

// calm and reducing are the ca_state sets a reduction starts from and
// enters.
const calm = `["open", "disorder"]`

// generic are the oracles of every congestion control, in the order they
// are reported: the bounds any sender keeps, then window growth, then
// window reductions.
func generic() []Oracle {
	oracles := boundOracles()
	oracles = append(oracles, growthOracles()...)
	return append(oracles, reductionOracles()...)
}

// boundOracles hold cwnd and ssthresh within their arithmetic limits and a
// stalled flow to its retransmission timer (RFC 5681 §3.1, RFC 6298 §5).
func boundOracles() []Oracle {
	return []Oracle{
		{
			Name:      "cwnd-floor",
			Statement: "cwnd is at least 1 segment, and a loss or ECN reduction leaves ssthresh at least 2 segments",
			Source:    "RFC 5681 §3.1 eq. (4) (ssthresh = max(FlightSize/2, 2·SMSS)) and §3.1 (after a timeout cwnd = LW = 1 segment)",
			Kind:      Conformance,
			Linux:     "Linux's Vegas lowers ssthresh to cwnd − 1 when it leaves slow start on delay, 1 with cwnd 2 (net/ipv4/tcp_vegas.c tcp_vegas_ssthresh): no loss reduction, so ssthresh is checked in reduction states only",
			Spec:      corpus.ConditionSpec{When: `cwnd < 1 || ssthresh < 2 && ca_state in ["cwr", "recovery", "loss"]`},
		},
		{
			Name:      "window-overflow",
			Statement: "cwnd stays below 2³¹ bytes unless the path holds that much, and ssthresh below Linux's infinite 0x7fffffff packets (a larger value is an arithmetic wrap)",
			Source:    "RFC 7323 §2.3 (a window is at most 2³⁰ bytes) with RFC 7661 §4.3 (cwnd grows only while it limits the sender): a cwnd past 2³¹ bytes on a path that cannot hold it has wrapped",
			Kind:      Conformance,
			Linux:     "Linux counts snd_cwnd and snd_ssthresh in packets (u32, include/linux/tcp.h), TCP_INFINITE_SSTHRESH = 0x7fffffff; subjects counting bytes (ns-3's uint32 m_cWnd) are converted at 1448 bytes a packet",
			Spec:      corpus.ConditionSpec{When: "(cwnd * 1448 >= 2147483648 && cwnd > 2 * (" + bdp + " + p.buffer) + 16) || ssthresh > 2147483647"},
		},
		{
			Name:      "stall",
			Statement: "a flow with data in flight delivers something within 3 of its (backed-off) retransmission timeouts, plus 10 s and the time the bottleneck takes to deliver what is in flight, on a path without a link trace",
			Source:    "RFC 6298 §5 (an outstanding segment is retransmitted when the timer expires, the timer backed off ×2 each time); the stall CC-Fuzz found in BBR (Ferreira et al., HotNets 2022, §5)",
			Kind:      Conformance,
			// 10 s on top: an undone timeout (RFC 4015 §2, Linux's
			// tcp_try_undo_loss) may reset the backoff, so the current rto
			// can be far below the time already spent backing off. And the
			// time the path takes to deliver what is in flight (in_flight
			// packets at p.bw, queued maybe in an earlier phase's larger
			// buffer): at 0.1 Mbit/s 700 packets take 80 s; and three
			// times the mean random delay per packet (Gamma: shape ×
			// scale ms), which can reach 1.6 s. since_progress > 10 is
			// implied by the rest (every term is ≥ 0) and comes first:
			// it fails at once on nearly every record.
			Spec: corpus.ConditionSpec{When: `in_flight > 0 && since_progress > 10 && since_progress * 1000 > 3 * rto + 2 * p.ack_agg + 10000 + in_flight * 11.584 / p.bw + 3 * p.qshape * p.qscale && p.link_trace == "none"`},
		},
		{
			Name:      "rto-backoff",
			Statement: "a second timeout in a row without progress doubles the RTO, up to its maximum",
			Source:    "RFC 6298 §5.5 (RTO ← 2·RTO on expiry; a maximum of at least 60 s, §2.5)",
			Kind:      Conformance,
			Linux:     "Linux doubles icsk_rto up to TCP_RTO_MAX = 120 s (net/ipv4/tcp_timer.c tcp_retransmit_timer); its linear timeouts for thin streams are off by default (tcp_thin_linear_timeouts)",
			Spec:      corpus.ConditionSpec{When: `reason == "rto" && timeouts >= 2 && last_timeout_rto > 0 && last_timeout_rto < 60000 && rto < 0.95 * min(2 * last_timeout_rto, 60000)`},
		},
	}
}

// growthOracles check that cwnd grows only while the sender uses it
// (RFC 7661 §4.3).
func growthOracles() []Oracle {
	return []Oracle{
		{
			Name:      "cwnd-validation",
			Statement: "cwnd does not grow in Open while the last round trip never had half of it in flight",
			Source:    "RFC 7661 §4.3 (no cwnd increase while the sender is not cwnd-limited); Linux's slow-start allowance (cwnd < 2·max_packets_out counts as limited) is the bound",
			Kind:      Conformance,
			Except:    []string{"bbr"},
			Linux:     "Linux's Vegas grows cwnd in slow start without asking (net/ipv4/tcp_vegas.c tcp_vegas_cong_avoid calls tcp_slow_start with no tcp_is_cwnd_limited check on its Vegas path): the oracle reports it, a departure of Linux's own. Linux's Hybla asks tcp_is_cwnd_limited once an ACK and then adds 2^ρ − 1 segments in slow start (at most 65535, clamped to ssthresh) or ρ²/cwnd in congestion avoidance (net/ipv4/tcp_hybla.c hybla_cong_avoid), and tcp_is_cwnd_limited holds on every ACK of a window in which the sender once filled cwnd (is_cwnd_limited, kept per window by net/ipv4/tcp_output.c tcp_cwnd_validate): an application-limited sender that filled a small window grows it again on that window's next ACK, after the first took it far past twice what is in flight (measured: cwnd 2 → 17 → 19 with at most 2 in flight, ρ = 5.5): the oracle reports that too. Linux's tcp_is_cwnd_limited (include/net/tcp.h) counts a sender as limited while is_cwnd_limited was set in the current window, and in slow start also while cwnd < 2·max_packets_out; the oracle uses the slow-start bound for both, so that records taken after an ACK (in flight one below cwnd) never trip it. And Linux renews that window only when it sends (net/ipv4/tcp_output.c tcp_write_xmit calls tcp_cwnd_validate only when it sent something or is cwnd-limited): a sender that filled cwnd and then ran out of data keeps is_cwnd_limited until its next send after the window is acknowledged, so with a queue that makes the round trip long every ACK of that window grows cwnd; the oracle reports it (measured: native DCTCP and Westwood+ campaigns of 2,000, 1 hit each, slow start after an undone timeout, a 3,500–5,400-packet buffer at 0.1–0.2 Mbit/s making srtt 53–174 s and an application sending 1 kbit/s: cwnd grew past twice the largest flight of the last round trip, up to 2,929 with 4 in flight). In slow start the ACKs of a cwnd-limited window double the cwnd of its last cwnd-limited send, which the records, taken after an ACK and before the sender refills, show in flight only up to that refill: the bound can fall short by a few percent (measured: 1 hit in a native Westwood+ campaign of 2,000, cwnd 4,063 against a bound of 4,000, slow start after an undone timeout with 2,000 packets of application backlog and srtt 1.9 s)",
			// Open for a whole round trip: in Open nothing is SACKed or
			// marked lost, so in_flight is Linux's packets_out, which
			// tcp_is_cwnd_limited judges by (after a timeout in_flight
			// leaves out the lost-marked packets that packets_out counts).
			// Records come after an ACK, before the sender refills the
			// window: with a few packets a round trip every record may
			// show none in flight. What the round trip delivered was in
			// flight in it too, so the larger of the two is the bound,
			// plus 4 for what an ACK took out of flight before the
			// sender refilled it (two delayed-ACK segments, twice).
			// Three round trips in Open: Linux's max_packets_out is
			// packets_out (FlightSize, SACKed packets included) at the
			// start of a window that lasts until snd_una passes it, so a
			// window begun in recovery may still allow growth one round
			// trip into Open.
			// Growth is judged between two ACKs' records: the kernel's
			// record of a recovery's exit holds PRR's cwnd, set to
			// ssthresh right after it (tcp_end_cwnd_reduction), so the
			// next ACK's record, which may come rounds later at a
			// transfer's tail, shows a rise that is the reduction's end
			// (measured: 1 group in 2,000 kernel runs).
			ReportsLinux: []string{"vegas"},
			Spec:         corpus.ConditionSpec{While: `ca_state == "open"`, For: "3rtt", When: `reason == "ack" && prev.reason != "state" && cwnd > prev.cwnd && 2 * (max(rtt_max.in_flight, delivered - rtt_ago.delivered) + 4) < prev.cwnd`},
		},
	}
}

// reductionOracles check a window reduction from entry to exit: how deep,
// how often, and how it ends or is undone (RFC 5681, 6582, 6937, 5682).
func reductionOracles() []Oracle {
	return []Oracle{
		{
			Name:      "reduction-bound",
			Statement: "a window reduction keeps at least β of cwnd (ssthresh ≥ ⌊β·prior_cwnd⌋ − 1; on ns-3, of the flight it is computed from if less) and reduces (ssthresh ≤ max(prior_cwnd, 2))",
			Source:    "RFC 5681 §3.1 eq. (4) (Reno, β = ½ of FlightSize); RFC 9438 §4.6 (CUBIC, β = 0.7 of flight_size); RFC 8257 §3.3 (DCTCP, cwnd·(1 − α/2) ≥ ½); each algorithm's paper for its own β (ccai.Info.Beta)",
			Kind:      Conformance,
			Linux:     "Linux computes ssthresh from snd_cwnd, not FlightSize (net/ipv4/tcp_cong.c tcp_reno_ssthresh), and keeps it over a recovery entered from CWR (tcp_enter_recovery); prior_cwnd is snd_cwnd at tcp_init_cwnd_reduction",
			// DEEPER: β of prior_cwnd; on ns-3 of the lesser of
			// prior_cwnd and the flight ns-3 gives GetSsThresh
			// (TcpSocketBase::EnterRecovery passes BytesInFlight(), RFC
			// 6675's pipe, which TcpNewReno::GetSsThresh halves:
			// RFC 5681 eq. (4) sets ssthresh to no more than
			// FlightSize/2, so a pipe below cwnd gives less).
			Spec: corpus.ConditionSpec{When: `ca_state in REDUCED && ENTRY && (DEEPER || ssthresh > max(prior_cwnd, 2) + SLACK)`},
		},
		{
			Name:      "one-reduction-per-window",
			Statement: "a flow does not enter a second window reduction (recovery or CWR) within half its shortest possible round trip (its smallest srtt, and twice the smallest propagation delay it crossed) of the last one that was not undone, before what was in flight at the last one was delivered",
			Source:    "RFC 6582 §3.2 steps 1 and 4 (no new reduction before the recovery point is acknowledged); RFC 3168 §6.1.2 (reduce at most once per window of data for ECN)",
			Kind:      Conformance,
			Except:    []string{"bbr"},
			// A recovery point is acknowledged one round trip after the
			// reduction at the soonest, and a new reduction after a
			// completed recovery is the RFC's own. Not srtt: it may lag
			// seconds behind a drained queue; nor srtt_min alone: with
			// random per-packet queuing delay one round trip can take far
			// less than the smallest average (ns-3's TcpCubic completed a
			// recovery in 98 ms with srtt_min 312 ms on a 31 ms path, and
			// lost again 24 ms later). rtt_floor, twice the smallest
			// propagation delay the flow has crossed, no round trip beats
			// (gVisor, seeds with Gamma delays of 100-400 ms a packet: a
			// recovery completed 0.7 s after it began, srtt_min 1.57 s).
			// Both are timings: a recovery point sent long before the
			// reduction (the sender had stalled) is acknowledged sooner
			// still. reduction_left rules that out: a recovery point
			// acknowledged delivered at least what was in flight when the
			// reduction began (2 for rounding and RFC 6675's pipe, which
			// counts a retransmitted segment twice). gVisor, whose
			// sender stalled on phantom in-flight packets (google/gvisor
			// #14092), completed a recovery 190 ms after it began on a
			// 1 s round trip, having delivered all 131 packets in flight.
			// A native Hybla run (the silent case in generic_test.go) went
			// from 149 ms one way to 6 ms behind a queue of seconds,
			// srtt_min 203 ms: a timeout's recovery point was
			// acknowledged 46 ms after it, and a loss in the next window
			// began a recovery 86 ms after the timeout.
			Spec: corpus.ConditionSpec{When: `ca_state in ["recovery", "cwr"] && prev.ca_state in ` + calm + ` && ssthresh < prior_cwnd && since_reduction >= 0 && since_reduction * 1000 < 0.5 * min(srtt_min, rtt_floor) && reduction_left > 2`},
		},
		{
			Name:         "ssthresh-steady",
			Statement:    "ssthresh does not fall during a recovery: it is set once, on entering it",
			Source:       "RFC 6582 §3.2 step 2 and RFC 6937 §3 (ssthresh is set when recovery starts and is the target PRR steers to); RFC 9406 §4.2 (HyStart++ runs in slow start, not in recovery)",
			Kind:         Conformance,
			Except:       []string{"bbr"},
			Linux:        "Linux's CUBIC runs HyStart on any ACK while cwnd < ssthresh and HyStart has not fired (net/ipv4/tcp_cubic.c cubictcp_acked checks tcp_in_slow_start, not ca_state), and PRR keeps cwnd below ssthresh in recovery: a delay rise there sets ssthresh to the reduced cwnd. The oracle keeps the RFC's rule and reports it. ns-3.37's TcpCubic does the same (tcp-cubic.cc TcpCubic::PktsAcked calls HystartUpdate while cWnd ≤ ssThresh, in any state, after TcpPrrRecovery has set cWnd near the pipe)",
			ReportsLinux: []string{"cubic"},
			Spec:         corpus.ConditionSpec{When: `ca_state == "recovery" && prev.ca_state == "recovery" && ssthresh + SLACK < prev.ssthresh`},
		},
		{
			Name:       "recovery-exit",
			ExceptCCAs: map[string]string{"lp": "TCP-LP halves cwnd, or sets it to 1, on its own early-congestion inference in any state (net/ipv4/tcp_lp.c tcp_lp_pkts_acked), a recovery's last ACK included"},
			Statement:  "a recovery or CWR ends either with cwnd ≤ ssthresh (the reduction completed) or with the window restored (undone; not on ns-3, which undoes nothing), not in between",
			Source:     "RFC 6582 §3.2 step 3 (full acknowledgment: cwnd = ssthresh or less); RFC 6937 §3 (PRR ends with cwnd = ssthresh)",
			Kind:       Conformance,
			Except:     []string{"bbr"},
			Linux:      "Linux sets cwnd = ssthresh at the end of a CWR or of a recovery that can be undone (net/ipv4/tcp_input.c tcp_end_cwnd_reduction); an undo restores max(cwnd, prior_cwnd) (tcp_undo_cwnd_reduction with tcp_reno_undo_cwnd)",
			NotOn:      map[string]string{"linux": "the kernel's exit record is taken in tcp_set_ca_state, which tcp_try_undo_recovery calls before tcp_fastretrans_alert's tcp_end_cwnd_reduction sets cwnd to ssthresh (net/ipv4/tcp_input.c): the record holds PRR's last cwnd, not the exit's (measured: 1 group of 768 kernel runs, cwnd 16, ssthresh 14, at the Open record)"},
			// RESTORED: an undo gave the window back (native, Linux,
			// gVisor); ns-3.37 undoes nothing, so there a window above
			// ssthresh at the end of a recovery is never a restored one.
			Spec: corpus.ConditionSpec{When: `prev.ca_state in ["recovery", "cwr"] && ca_state in ` + calm + ` && cwnd > ssthresh + SLACK && !(RESTORED)`},
		},
		{
			Name:      "undo-restores",
			Statement: "an undone reduction restores the window from before it, and no more",
			Source:    "RFC 5682 §3.1 and RFC 4015 §2 (a spurious timeout's response restores the congestion state from before it); ACT (NSDI 2019) §4.5, Fig. 13",
			Kind:      Conformance,
			Except:    []string{"bbr"},
			Linux:     "Linux's undo sets cwnd = max(cwnd, prior_cwnd) (net/ipv4/tcp_input.c tcp_undo_cwnd_reduction, tcp_cong.c tcp_reno_undo_cwnd); 3.10 without an undo_cwnd op took max(cwnd, 2·ssthresh), the paper's bug",
			NotOn: map[string]string{"gvisor": "gVisor undoes no reduction: its Eifel detection only counts a spurious recovery (pkg/tcpip/transport/tcp/snd.go detectSpuriousRecovery; no RFC 4015 response, google/gvisor#14102), so a cwnd above prior_cwnd on leaving Loss is growth, not an undo: gVisor grows cwnd in RTO recovery (handleRcvdSegment calls cc.Update whenever fast recovery is not active), and CUBIC's unbounded target (cubic-target-bound) grows it past prior_cwnd within the Loss state",
				"ns3": "ns-3.37 undoes no reduction: no D-SACK, Eifel or F-RTO undo; TcpSocketBase::ProcessAck leaves CA_RECOVERY and CA_LOSS only on a cumulative ACK past m_recover, restoring neither cwnd nor ssthresh (src/internet/model/tcp-socket-base.cc). " +
					"A window above the one from before a recovery on the ACK that ends it is that ACK's growth, which recovery-exit checks on ns3 without an undo allowance; after a timeout it is TcpCubic's slow start, which adds all the segments an ACK acknowledges without stopping at ssthresh (tcp-cubic.cc TcpCubic::IncreaseWindow, byte counting to stand in for Linux's quick ACKs)"},
			// An undo leaves cwnd above ssthresh, or restores ssthresh
			// to 0x7fffffff in slow start; a completed reduction leaves
			// cwnd = ssthresh, which Westwood+ sets to its BtlBw·RTTmin
			// estimate, above prior_cwnd at times (net/ipv4/tcp_westwood.c
			// tcp_westwood_event, CA_EVENT_COMPLETE_CWR). The floor of 2
			// keeps out a recovery begun at cwnd 1 that ends at ssthresh's
			// floor (RFC 5681 eq. (4)).
			Spec: corpus.ConditionSpec{When: `prev.ca_state in ["recovery", "cwr", "loss"] && ca_state in ` + calm + ` && cwnd > max(prev.cwnd, prior_cwnd, 2) + SLACK && (cwnd > ssthresh + SLACK || ssthresh >= 2147483647)`},
		},
	}
}

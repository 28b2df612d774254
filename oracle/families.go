package oracle

import (
	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/corpus"
)

// nativeTarget says why cubic-target-bound does not run on the native
// CUBIC: it reports Linux's bic_target.
const nativeTarget = "the native CUBIC reports Linux's bic_target, which Linux does not clamp (net/ipv4/tcp_cubic.c bictcp_update): it caps the growth instead (cnt ≥ 2, 1.5×cwnd a round trip), which cubic-growth checks"

func renoFamily() []Oracle {
	return []Oracle{{
		Name:      "reno-half",
		Statement: "Reno sets ssthresh to at most half the window, and no less than 2 segments",
		Source:    "RFC 5681 §3.1 eq. (4): ssthresh = max(FlightSize/2, 2·SMSS)",
		Kind:      Conformance,
		Families:  []string{ccai.FamilyReno},
		Linux:     "Linux halves snd_cwnd rather than FlightSize (net/ipv4/tcp_cong.c tcp_reno_ssthresh); FlightSize ≤ cwnd, so half the window bounds both",
		// HALVED is prior_cwnd, or on gVisor, which halves the flight,
		// the greater of it and the flight before the entry (fill).
		Spec: corpus.ConditionSpec{When: `ca_state in REDUCED && ENTRY && ssthresh > max(floor(HALVED / 2), 2) + SLACK`},
	}}
}

func cubicFamily() []Oracle {
	return []Oracle{
		{
			Name:      "cubic-growth",
			Statement: "in congestion avoidance CUBIC's window grows by at most one segment per two segments ACKed (1.5× a round trip)",
			Source:    "RFC 9438 §4.2 (target ≤ 1.5·cwnd; cwnd += (target − cwnd)/cwnd per ACKed segment, at most ½)",
			Kind:      Conformance,
			Families:  []string{ccai.FamilyCubic},
			Linux:     "Linux caps cnt at ≥ 2, one segment per two ACKed (net/ipv4/tcp_cubic.c bictcp_update, since 3.18); 3.10 had no such cap (the ACT paper's §4.4 case)",
			// Per ACKed segment, not per srtt: after a queue drains srtt
			// lags behind the round trip, and a window of one srtt holds
			// more than one round trip's growth.
			// +2: the ACK that ends a recovery or slow start is counted in
			// the stretch's first record, and Linux's snd_cwnd_cnt carries
			// credit over a recovery (tcp_cong_avoid_ai).
			// The stretch starts after a state record: the native subject
			// emits the change of state before the ACK's growth, and that
			// ACK (a recovery's last, which may acknowledge a whole
			// repaired hole at once) is counted in delivered already.
			// A rise of ssthresh is an undo (RFC 5682 §3.1; Linux's
			// tcp_undo_cwnd_reduction restores prior_ssthresh, a DSACK
			// undo in Open included), which restores cwnd at once: it
			// ends the stretch, and the next one starts after it
			// (measured on the kernel: cwnd 9 → 13 with ssthresh 9 → 13).
			Spec: corpus.ConditionSpec{While: `ca_state == "open" && cwnd >= ssthresh && reason != "state" && ssthresh <= prev.ssthresh`, For: "1ns", When: `cwnd - first.cwnd > (delivered - first.delivered) / 2 + 2 + SLACK`},
		},
		{
			Name:      "cubic-target-bound",
			Statement: "in congestion avoidance CUBIC's target stays at most 1.5·cwnd",
			Source:    "RFC 9438 §4.2",
			Kind:      Conformance,
			Families:  []string{ccai.FamilyCubic},
			Linux:     "3.10's CUBIC neither clamps bic_target nor caps the growth (cnt ≥ 1, divided by the delayed-ACK ratio), so a target above 1.5·cwnd is growth faster than RFC 9438 allows: the ACT paper's §4.4 case, checked on the native linux-3.10 profile",
			NotOn:     map[string]string{"native/linux": nativeTarget},
			// On gVisor target is W_cubic(t+srtt) as getCwnd grows cwnd
			// toward it, bounded below by cwnd (cubic.go getCwnd,
			// google/gvisor#13958) and not above: the oracle reports
			// that. The subject reports target only where gVisor's
			// update uses it (not in fast recovery, slow start or the
			// TCP-friendly region: netenv/gvisor cubicVars.grows), and
			// the oracle reads it in Open congestion avoidance only (gVisor
			// runs the update in RTO recovery too, with Loss's own
			// records: not checked).
			Spec: corpus.ConditionSpec{When: `ca_state == "open" && prev.ca_state == "open" && cwnd >= ssthresh && target > 1.5 * cwnd + 1`},
		},
		{
			Name:      "cubic-reno-friendly",
			Statement: "while W_est is above cwnd, cwnd grows toward W_est within a round trip in which a window was delivered, whichever CUBIC region it is in",
			Source:    "RFC 9438 §4.3 (in the Reno-friendly region, W_cubic(t) < W_est, cwnd SHOULD be set to W_est; W_est grows by α_cubic per round trip, eq. 4); §4.4 and §4.5 (in the concave and convex regions, W_cubic(t) ≥ W_est, the target is at least min(W_cubic(t), 1.5·cwnd) and cwnd MUST grow by (target − cwnd)/cwnd per ACK)",
			Kind:      Conformance,
			Families:  []string{ccai.FamilyCubic},
			Linux:     "Linux approaches W_est (ca->tcp_cwnd) rather than jumping to it: net/ipv4/tcp_cubic.c bictcp_update sets cnt ≤ cwnd / (tcp_cwnd − cwnd), one segment per cnt ACKed, and never below 2 (growth at most ½ per ACKed segment); the oracle asks for half that growth in the round trip: min(W_est − cwnd, cwnd/2)/2",
			// One srtt of congestion avoidance in Open after two
			// (the windows are full), in which the window of a round
			// trip ago was delivered and filled (cwnd-limited, RFC 7661
			// §4.3, Linux's tcp_is_cwnd_limited: in flight reached cwnd
			// but for a delayed ACK's two segments; measured: an
			// application at 0.6 Mbit/s delivered cwnd's 74 segments in a
			// 1.39 s round trip with 71 in flight, and Linux rightly did
			// not grow). ACK records only: an idle record is RFC 2861's
			// decay (or restart) of a window that did not limit the
			// sender for an RTO, which starts the stretch anew (its
			// in_flight, taken after sending, is not one an ACK left).
			Spec: corpus.ConditionSpec{While: `ca_state == "open" && cwnd >= ssthresh && reason == "ack"`, For: "2rtt",
				When: `rtt_ago.w_est > rtt_ago.cwnd + 2 && delivered - rtt_ago.delivered >= rtt_ago.cwnd && rtt_max.in_flight + 2 >= rtt_ago.cwnd && cwnd - rtt_ago.cwnd < 0.5 * min(rtt_ago.w_est - rtt_ago.cwnd, rtt_ago.cwnd / 2) - 1 - SLACK`},
		},
		{
			Name:      "hystart-exit",
			Statement: "a slow-start exit on delay (ssthresh lowered in Open, with no loss or ECN) sets ssthresh to cwnd",
			Source:    "RFC 9406 §4.2 (leaving slow start for congestion avoidance: ssthresh = cwnd); Ha & Rhee, \"Taming the elephants\", Computer Networks 2011, §3 (HyStart's exit, the one Linux runs)",
			Kind:      Conformance,
			Families:  []string{ccai.FamilyCubic},
			Linux:     "Linux runs HyStart (2011), not HyStart++: net/ipv4/tcp_cubic.c hystart_update sets snd_ssthresh = snd_cwnd on an ACK train or a delay rise, only from 16 packets (hystart_low_window) and not only in the initial slow start (RFC 9406 §4.2 says SHOULD); its exits in recovery are ssthresh-steady's",
			// The exit comes before the ACK's growth (pkts_acked runs
			// before cong_avoid), which at cwnd = ssthresh is congestion
			// avoidance's: at most half the segments the ACK delivered
			// (CUBIC's cnt ≥ 2), and one more from the count of ACKed
			// segments that slow start left behind (tcp_cong_avoid_ai's
			// snd_cwnd_cnt is not reset by tcp_slow_start; measured: cwnd
			// 44 → 45 on the exit ACK of one segment).
			Spec: corpus.ConditionSpec{When: `ca_state == "open" && prev.ca_state == "open" && prev.cwnd < prev.ssthresh && ssthresh < prev.ssthresh && (ssthresh > cwnd + SLACK || cwnd - ssthresh > (delivered - prev.delivered) / 2 + 1 + SLACK)`},
		},
		{
			Name:      "cubic-beta",
			Statement: "a CUBIC reduction sets ssthresh to 0.7·cwnd (a cwnd saturated at the records' ceiling of 2³¹ − 1 packets is not checked: window-overflow reports it)",
			Source:    "RFC 9438 §4.6 (β_cubic = 0.7)",
			Kind:      Conformance,
			Families:  []string{ccai.FamilyCubic},
			Linux:     "Linux multiplies by 717/1024 = 0.7002 (net/ipv4/tcp_cubic.c bictcp_recalc_ssthresh, beta = 717): 1 packet more than 0.7 at 5,000 packets, so the tolerance grows by 0.1% of cwnd",
			// A window at the records' ceiling (2³¹ − 1 packets,
			// ccai.InfiniteSSThresh) is saturated: the subject's own
			// window was at least that (gVisor's int windows; measured:
			// gVisor CUBIC's cwnd of 5.8·10¹⁰ after its unbounded
			// target, reduced to 4.1·10¹⁰, both reported as 2³¹ − 1), so
			// the ratio of ssthresh to it says nothing and is not
			// checked; window-overflow reports such a window.
			Spec: corpus.ConditionSpec{When: `ca_state in REDUCED && ENTRY && prior_cwnd < 2147483647 && abs(ssthresh - max(floor(0.7 * prior_cwnd), 2)) > 1 + SLACK + 0.001 * prior_cwnd`},
		},
		{
			Name:      "cubic-fast-convergence",
			Statement: "a CUBIC loss below the last W_max sets W_max to cwnd·(1 + β)/2",
			Source:    "RFC 9438 §4.7",
			Kind:      Conformance,
			Families:  []string{ccai.FamilyCubic},
			NotOn:     map[string]string{"gvisor": "gVisor keeps the window before the loss as w_last_max and applies fast convergence to it (pkg/tcpip/transport/tcp/cubic.go fastConvergence): its w_max is not RFC 9438's W_max"},
			Linux:     "Linux resets CUBIC on a timeout (net/ipv4/tcp_cubic.c bictcp_state: bictcp_reset on TCP_CA_Loss), W_max included: the rule is checked on entering recovery",
			Spec:      corpus.ConditionSpec{When: `ca_state == "recovery" && prev.ca_state in ` + calm + ` && prev.w_max > prior_cwnd + 1 && abs(w_max - 0.85 * prior_cwnd) > 1 + 0.01 * prior_cwnd`},
		},
	}
}

func bbrFamily() []Oracle {
	fam := []string{ccai.FamilyBBR}
	return []Oracle{
		{
			Name:      "bbr-min-cwnd",
			Statement: "outside loss recovery BBR's cwnd is at least 4 packets",
			Source:    "draft-ietf-ccwg-bbr-02 §5.6.4.1 (BBRMinPipeCwnd = 4·SMSS); Cardwell et al., ACM Queue 2016",
			Kind:      Conformance,
			Families:  fam,
			Linux:     "Linux lets cwnd fall to in-flight minus losses during recovery (net/ipv4/tcp_bbr.c bbr_set_cwnd_to_recover_or_restore) and to 1 after a timeout; the floor is checked in Open only. A connection whose SYN was sent again starts with cwnd 1 (RFC 5681 §3.1; net/ipv4/tcp_input.c tcp_init_transfer), which BBR raises to its floor on the first ACK that acknowledges data (bbr_set_cwnd applies the floor only then): the floor is checked from the second record of an Open stretch (measured: 1 kernel BBR hit in 2,000, cwnd 1 on the record before the connection's first data ACK)",
			Spec:      corpus.ConditionSpec{When: `ca_state == "open" && prev.ca_state == "open" && prev.reason == "ack" && cwnd < 4`},
		},
		{
			Name:      "bbr-pacing-rate",
			Statement: "BBR's pacing rate is positive once data was delivered",
			Source:    "draft-ietf-ccwg-bbr-02 §5.6.2 (BBRSetPacingRateWithGain sets a positive rate from BBR.bw or the initial cwnd/SRTT)",
			Kind:      Conformance,
			Families:  fam,
			Spec:      corpus.ConditionSpec{When: `delivered > 0 && pacing_rate <= 0`},
		},
		{
			Name:      "bbr-probe-rtt-cwnd",
			Statement: "in ProbeRTT BBR holds cwnd at 4 packets at most",
			Source:    "draft-ietf-ccwg-bbr-02 §4.3.4.4 (ProbeRTT: cwnd = BBRMinPipeCwnd)",
			Kind:      Conformance,
			Families:  fam,
			Linux:     "net/ipv4/tcp_bbr.c bbr_set_cwnd: min(cwnd, bbr_cwnd_min_target) in BBR_PROBE_RTT",
			Spec:      corpus.ConditionSpec{When: `mode == "probe_rtt" && prev.mode == "probe_rtt" && cwnd > 4`},
		},
		{
			Name:      "bbr-probe-rtt-duration",
			Statement: "BBR stays in ProbeRTT for at least 200 ms",
			Source:    "draft-ietf-ccwg-bbr-02 §4.3.4.4 (ProbeRTTDuration = 200 ms, at least one round trip, counted from when inflight reaches BBRMinPipeCwnd); Cardwell et al., ACM Queue 2016 (ProbeRTT for 200 ms every 10 s)",
			Kind:      Conformance,
			Families:  fam,
			Linux:     "net/ipv4/tcp_bbr.c bbr_update_min_rtt and bbr_check_probe_rtt_done: probe_rtt_done_stamp = now + bbr_probe_rtt_mode_ms (200) once inflight ≤ 4, in jiffies: on subjects other than the native one the bound is 4 ms short (one jiffy at HZ=250)",
			// held.mode on the record that leaves ProbeRTT is how long
			// it lasted, from the record that entered it.
			Spec: corpus.ConditionSpec{When: `prev.mode == "probe_rtt" && mode != "probe_rtt" && held.mode * 1000 < 200 - 4 * SLACK`},
		},
		{
			Name:      "bbr-cwnd-target",
			Statement: "once STARTUP found the pipe full, BBR's cwnd does not grow past cwnd_gain·BDP plus its allowances",
			Source:    "draft-ietf-ccwg-bbr-02 §5.6.4.4 (BBRSetCwnd: cwnd = min(cwnd + acked, BBR.max_inflight) once the pipe is full)",
			Kind:      Conformance,
			Families:  fam,
			Linux:     "net/ipv4/tcp_bbr.c bbr_set_cwnd: min(cwnd + acked, target_cwnd) when bbr_full_bw_reached; leaving recovery (bbr_set_cwnd_to_recover_or_restore) or ProbeRTT (bbr_exit_probe_rtt) restores the cwnd saved before, which may exceed the target",
			// Not on the ACK that leaves recovery (native: the record after
			// the state record) nor the one that leaves ProbeRTT: both
			// restore the cwnd saved before them (bbr_exit_probe_rtt).
			Spec: corpus.ConditionSpec{When: `full_bw_reached == 1 && ca_state == "open" && prev.ca_state == "open" && prev.reason != "state" && prev.mode != "probe_rtt" && cwnd > prev.cwnd && cwnd > target_cwnd`},
		},
	}
}

func dctcpFamily() []Oracle {
	fam := []string{ccai.FamilyDCTCP}
	return []Oracle{
		{
			Name:      "dctcp-alpha-range",
			Statement: "DCTCP's α stays within [0, 1]",
			Source:    "RFC 8257 §3.3 (α ← (1 − g)·α + g·M, M the fraction of marked bytes)",
			Kind:      Conformance,
			Families:  fam,
			Spec:      corpus.ConditionSpec{When: `alpha < 0 || alpha > 1`},
		},
		{
			Name:      "dctcp-reduction",
			Statement: "a DCTCP reduction on ECN sets ssthresh to cwnd·(1 − α/2)",
			Source:    "RFC 8257 §3.3",
			Kind:      Conformance,
			Families:  fam,
			Linux:     "net/ipv4/tcp_dctcp.c dctcp_ssthresh: max(cwnd − cwnd·α/2, 2) with α scaled by 1024",
			Spec:      corpus.ConditionSpec{When: `ca_state == "cwr" && prev.ca_state in ` + calm + ` && abs(ssthresh - max(floor(prior_cwnd * (1 - alpha / 2)), 2)) > 1`},
		},
	}
}

func performance() []Oracle {
	return []Oracle{{
		Name:      "starvation",
		Statement: "flows of one congestion control on one bottleneck do not starve: none gets below a tenth of another's delivery rate for 10 s",
		Source:    "Arun, Alizadeh and Balakrishnan, \"Starvation in End-to-End Congestion Control\", SIGCOMM 2022, §2 (s-fairness with s = 10)",
		Kind:      Performance,
		MinFlows:  2,
		Spec:      corpus.ConditionSpec{When: `share < 0.1`, For: "10s"},
	}}
}

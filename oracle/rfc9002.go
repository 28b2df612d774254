package oracle

import (
	"github.com/actfuzz/actfuzz/corpus"
)

// quicSubjects are the subjects that run a QUIC stack, which the RFC 9002
// oracles check (netenv.Capabilities.Name).
var quicSubjects = []string{"quic"}

// minWindowBytes is RFC 9002's kMinimumWindow (§7.2: 2 ·
// max_datagram_size) for the quic subject, whose datagrams are at most
// 1280 bytes (path MTU discovery off: netenv/quicgo's doc).
const minWindowBytes = "2560"

// rfc9002 are the oracles of RFC 9002 ("QUIC Loss Detection and
// Congestion Control"), for the Reno-family controller a QUIC stack runs
// (RFC 9002 §7's NewReno; quic-go's "reno"). They read the quic subject's
// own variables (cwnd_bytes, min_rtt_ms: netenv/quicgo's doc, "State"),
// so they run on QUIC subjects only (Oracle.Subjects).
//
// One rule of RFC 9002 §7 has no oracle: §7.7's bursts (at most the
// initial window when not pacing) need the bytes a sender puts on the wire
// between two ACKs, and the observer sees records per ACK only, on every
// subject: no burst variable exists or can be derived from the records.
func rfc9002() []Oracle {
	// RFC 9002 §7 specifies NewReno: quic-go's "reno" (its native name).
	newReno := []string{"reno"}
	return []Oracle{
		{
			Name:      "quic-recovery-steady",
			Statement: "within a QUIC recovery period cwnd does not change after the reduction that began it: a loss of a packet sent before the period began does not reduce again, and nothing grows it (persistent congestion's collapse to kMinimumWindow and an undo of a spurious loss to the window before excepted)",
			Source:    "RFC 9002 §7.3.2 (on entering a recovery period cwnd is reduced once; a loss of a packet sent before the period's start does not start a new one; the sender does not increase cwnd until a packet sent during the period is acknowledged)",
			Kind:      Conformance,
			CCAs:      newReno,
			Subjects:  quicSubjects,
			// A new recovery period can begin only after the old one
			// ended, when a packet sent in it was acknowledged (§7.3.2),
			// which takes a round trip from the period's start, and no
			// round trip is shorter than min_rtt (§5.2: the smallest RTT
			// sample, the one of that acknowledgment included; it takes
			// no ack_delay off). quic-go can end a period and begin the
			// next within one ACK (OnPacketAcked before the loss
			// detection of the same ACK, sent_packet_handler.go), so a
			// reduction of a record that stays in recovery more than
			// min_rtt into the period may be a new period's: not checked.
			// held.ca_state is the time since the record that entered the
			// period; 1 ms for the records' time taken after the ACK.
			// quic-go's undo (cubic_sender.go OnSpuriousLoss) restores the
			// window from before the cutback exactly: cwnd == prior_cwnd.
			Spec: corpus.ConditionSpec{When: `ca_state == "recovery" && prev.ca_state == "recovery" && cwnd_bytes != prev.cwnd_bytes && held.ca_state * 1000 < min_rtt_ms - 1 && cwnd_bytes > ` + minWindowBytes + ` && cwnd != prior_cwnd`},
		},
		{
			Name:      "quic-persistent-congestion",
			Statement: "when persistent congestion is established, cwnd collapses to kMinimumWindow (2 datagrams)",
			Source:    "RFC 9002 §7.6.2 (on persistent congestion the sender's cwnd MUST be reduced to kMinimumWindow); §7.6.1 (the duration: (smoothed_rtt + max(4·rttvar, kGranularity) + max_ack_delay) · kPersistentCongestionThreshold)",
			Kind:      Conformance,
			CCAs:      newReno,
			Subjects:  quicSubjects,
			NotOn: map[string]string{"quic": "quic-go v0.65.0 reports no persistent congestion: its qlog has no such event or field, and its sent-packet handler never establishes it (internal/ackhandler/sent_packet_handler.go calls no OnRetransmissionTimeout, the only code that sets cwnd to the minimum window; docs/bugs/quicgo-no-persistent-congestion.md). " +
				"Deriving it needs the send time of every ack-eliciting packet declared lost (§7.6.1), which the subject's records, one per ACK, do not carry: the oracle reads persistent_congestion (periods established so far), which no subject reports yet"},
			Spec: corpus.ConditionSpec{When: `persistent_congestion > prev.persistent_congestion && cwnd_bytes > ` + minWindowBytes},
		},
		{
			Name:      "quic-app-limited-no-growth",
			Statement: "cwnd does not grow while the last two round trips never had half of it in flight (application- or flow-control-limited)",
			Source:    "RFC 9002 §7.8 (when bytes in flight is below cwnd and sending is not pacing-limited, cwnd is underutilized and SHOULD NOT be increased in slow start or congestion avoidance)",
			Kind:      Conformance,
			CCAs:      newReno,
			Subjects:  quicSubjects,
			// quic-go grows only while the bytes in flight before the
			// ACK were above half of cwnd in slow start or within
			// maxBurstBytes of it (cubic_sender.go isCwndLimited), and
			// flags itself application_limited otherwise (cc_state).
			// The records come after an ACK, so they show the flight
			// before it less what the ACK acknowledged: two datagrams
			// for a delayed ACK, twice that for one lost ACK, and what
			// ACK aggregation gathers (p.bw Mbit/s over p.ack_agg ms, in
			// 1280-byte datagrams: p.bw · p.ack_agg / 10.24).
			Spec: corpus.ConditionSpec{While: `ca_state == "open"`, For: "2rtt",
				When: `cwnd > prev.cwnd && 2 * (rtt_max.in_flight + 4 + p.bw * p.ack_agg / 10.24) < prev.cwnd`},
		},
		{
			Name:      "quic-ecn-ce-reduces",
			Statement: "an ACK that raises the ECN-CE count enters a recovery period with a reduced window, as a loss does (unless already in one)",
			Source:    "RFC 9002 §7.1 (a sender reduces its window on an increase of the ECN-CE count, as on a loss); §7.3.2 (an ECN-CE increase starts a recovery period)",
			Kind:      Conformance,
			CCAs:      newReno,
			Subjects:  quicSubjects,
			NotOn: map[string]string{"quic": "the quic subject refuses ECN (ecn and ecn_k are refused at start): quic-go uses ECN only on an OOBCapablePacketConn, which the harness's is not, so it neither sends ECT nor reads CE (netenv/quicgo's doc). " +
				"The oracle reads ecn_ce (CE marks the peer's ACKs reported so far), which no subject reports yet; it is tested on synthetic records"},
			Spec: corpus.ConditionSpec{When: `ecn_ce > prev.ecn_ce && prev.ca_state != "recovery" && !(ca_state == "recovery" && (cwnd_bytes < prev.cwnd_bytes || cwnd_bytes <= ` + minWindowBytes + `))`},
		},
	}
}

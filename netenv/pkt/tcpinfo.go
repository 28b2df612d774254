package pkt

import (
	"fmt"
	"time"

	"github.com/actfuzz/actfuzz/ccai"
)

// TCP_INFO over the model (Linux's tcp_get_info, include/uapi/linux/tcp.h).
// Times are in microseconds, as struct tcp_info reports them. See doc.go
// for what each field means in the model.

// tcpState is the connection's state, numbered as Linux's TCP_* states
// (include/net/tcp_states.h).
type tcpState int

const (
	stateEstablished tcpState = 1
	stateSynSent     tcpState = 2
	stateSynRecv     tcpState = 3
	stateFinWait1    tcpState = 4
	stateFinWait2    tcpState = 5
	stateTimeWait    tcpState = 6
	stateClose       tcpState = 7
	stateListen      tcpState = 10
)

// caStateNames are packetdrill's names of the congestion states (Linux's
// enum tcp_ca_state, which ccai.CAState numbers alike).
var caStateNames = [...]string{
	ccai.StateOpen:     "TCP_CA_Open",
	ccai.StateDisorder: "TCP_CA_Disorder",
	ccai.StateCWR:      "TCP_CA_CWR",
	ccai.StateRecovery: "TCP_CA_Recovery",
	ccai.StateLoss:     "TCP_CA_Loss",
}

// CAStateName is packetdrill's name of a congestion state.
func CAStateName(st ccai.CAState) string {
	if int(st) < len(caStateNames) {
		return caStateNames[st]
	}
	return fmt.Sprint(int(st))
}

// constant is a name the suite's asserts compare with.
func constant(name string) (float64, bool) {
	for st, n := range caStateNames {
		if n == name {
			return float64(st), true
		}
	}
	switch name {
	case "TCP_ESTABLISHED":
		return float64(stateEstablished), true
	case "TCP_SYN_SENT":
		return float64(stateSynSent), true
	case "TCP_SYN_RECV":
		return float64(stateSynRecv), true
	case "TCP_FIN_WAIT1":
		return float64(stateFinWait1), true
	case "TCP_FIN_WAIT2":
		return float64(stateFinWait2), true
	case "TCP_TIME_WAIT":
		return float64(stateTimeWait), true
	case "TCP_CLOSE":
		return float64(stateClose), true
	case "TCP_LISTEN":
		return float64(stateListen), true
	}
	return 0, false
}

func usecs(d time.Duration) float64 { return float64(d / time.Microsecond) }

// field reads one name of an assert: a tcpi_* field of the model's
// TCP_INFO or a constant.
func (in *interp) field(name string) (float64, error) {
	if v, ok := constant(name); ok {
		return v, nil
	}
	if name == "tcpi_state" {
		return float64(in.state), nil
	}
	if name == "tcpi_reordering" {
		// The model's DupThresh is fixed at 3 (netenv/tcp's dupThresh):
		// Linux raises tp->reordering when it detects reordering.
		return 3, nil
	}
	if name == "tcpi_advmss" {
		return float64(in.advMSS()), nil
	}
	if in.snd == nil {
		// Before the first write the sender is not built (interp.go):
		// its state is the initial one.
		switch name {
		case "tcpi_snd_cwnd":
			return tcpInitCwnd, nil
		case "tcpi_snd_ssthresh":
			return float64(ccai.InfiniteSSThresh), nil
		case "tcpi_ca_state", "tcpi_retransmits", "tcpi_backoff", "tcpi_unacked", "tcpi_sacked",
			"tcpi_lost", "tcpi_retrans", "tcpi_total_retrans", "tcpi_data_segs_out":
			return 0, nil
		case "tcpi_delivered":
			return float64(in.synDelivered()), nil
		case "tcpi_snd_mss":
			return float64(in.mss), nil
		case "tcpi_rtt":
			return usecs(in.handshakeRTT), nil
		case "tcpi_rttvar":
			return usecs(in.handshakeRTT / 2), nil
		}
		return 0, unsupported("TCP_INFO field %s", name)
	}
	sk := in.snd.Sock()
	st := in.snd.Stats()
	switch name {
	case "tcpi_snd_cwnd":
		return float64(sk.Cwnd), nil
	case "tcpi_snd_ssthresh":
		return float64(sk.SSThresh), nil
	case "tcpi_ca_state":
		return float64(sk.CAState), nil
	case "tcpi_rto":
		return usecs(in.snd.RTO()), nil
	case "tcpi_rtt":
		return usecs(sk.SRTT), nil
	case "tcpi_rttvar":
		return usecs(sk.RTTVar), nil
	case "tcpi_min_rtt":
		return usecs(sk.MinRTT), nil
	case "tcpi_retransmits", "tcpi_backoff":
		// icsk_retransmits and icsk_backoff: timeouts in a row; the
		// model keeps one counter for both (tcp.Sender.Backoff).
		return float64(in.snd.Backoff()), nil
	case "tcpi_unacked":
		return float64(sk.PacketsOut), nil
	case "tcpi_sacked":
		return float64(sk.SackedOut), nil
	case "tcpi_lost":
		return float64(sk.LostOut), nil
	case "tcpi_retrans":
		return float64(sk.RetransOut), nil
	case "tcpi_total_retrans":
		return float64(st.Retransmits), nil
	case "tcpi_data_segs_out":
		return float64(st.SegmentsSent), nil
	case "tcpi_delivered":
		return float64(sk.Delivered + in.synDelivered()), nil
	case "tcpi_snd_mss":
		return float64(sk.MSS), nil
	}
	return 0, unsupported("TCP_INFO field %s", name)
}

// tcpInitCwnd is Linux's TCP_INIT_CWND (RFC 6928).
const tcpInitCwnd = 10

// synDelivered: Linux counts the handshake's SYN (or SYN-ACK) as one
// delivered packet (tcp_rcv_state_process and tcp_finish_connect do
// tp->delivered++, since 4.10); the model's sender starts after the
// handshake at 0.
func (in *interp) synDelivered() uint64 {
	if in.state == stateEstablished || in.state >= stateFinWait1 && in.state <= stateClose {
		return 1
	}
	return 0
}

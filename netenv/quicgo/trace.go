package quicgo

import (
	"sync"

	"github.com/quic-go/quic-go/qlog"
	"github.com/quic-go/quic-go/qlogwriter"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

// maxDatagramSize is the datagram size that cwnd is counted in: quic-go's
// protocol.InitialPacketSize (1280 bytes of UDP payload), its
// congestion controller's maxDatagramSize with path MTU discovery off.
const maxDatagramSize = 1280

// The subject's own variables (Vars), in the order of StateRecord.Vars.
const (
	varCCState = iota
	varCwndBytes
	varInFlightBytes
	varPacketsInFlight
	varMinRTT
	varLatestRTT
	varPTOCount
	varLost
	numVars
)

// ccStates are quic-go's congestion states (qlog.CongestionState), the
// values of variable cc_state.
var ccStates = []string{string(qlog.CongestionStateSlowStart), string(qlog.CongestionStateCongestionAvoidance),
	string(qlog.CongestionStateRecovery), string(qlog.CongestionStateApplicationLimited)}

var varDescs = []ccai.VarDesc{
	{Name: "cc_state", Doc: "quic-go's congestion state (qlog recovery:congestion_state_updated, cubic_sender.go maybeQlogStateChange)", Values: ccStates},
	{Name: "cwnd_bytes", Doc: "quic-go's congestion window in bytes (qlog recovery:metrics_updated congestion_window)"},
	{Name: "in_flight_bytes", Doc: "quic-go's bytes in flight (qlog recovery:metrics_updated bytes_in_flight)"},
	{Name: "packets_in_flight", Doc: "packets quic-go's sent-packet history holds as outstanding (qlog recovery:metrics_updated packets_in_flight)"},
	{Name: "min_rtt_ms", Doc: "quic-go's minimum RTT, RFC 9002 §5.2 min_rtt (qlog recovery:metrics_updated min_rtt), ms"},
	{Name: "latest_rtt_ms", Doc: "quic-go's latest RTT sample, RFC 9002 §5.1 latest_rtt (qlog recovery:metrics_updated latest_rtt), ms"},
	{Name: "pto_count", Doc: "quic-go's PTO count, RFC 9002 §6.2.1 pto_count (qlog recovery:metrics_updated pto_count)"},
	{Name: "lost", Doc: "packets quic-go declared lost so far (qlog recovery:packet_lost events)"},
}

// Vars lists the variables of the subject's records for congestion
// control cca (quic-go has one, "reno").
func Vars(cca string) []ccai.VarDesc {
	if cca != "reno" {
		return nil
	}
	return varDescs
}

// tracer turns the qlog events of one flow's client (sending) connection
// into state records. It is quic-go's qlogwriter.Trace and Recorder:
// quic-go calls RecordEvent synchronously on the connection's goroutine,
// right where the event happens (the sent-packet handler, the congestion
// controller), so a record shows quic-go's state as of that event.
type tracer struct {
	h   *harness
	f   *flow
	mu  sync.Mutex
	rec observe.Record
	// vars is rec.Vars.
	vars [numVars]float64
	seen bool // a congestion state was recorded
	// stateChanged: ca_state changed since the last record.
	stateChanged bool
}

var (
	_ qlogwriter.Trace    = (*tracer)(nil)
	_ qlogwriter.Recorder = (*tracer)(nil)
)

func newTracer(h *harness, f *flow) *tracer {
	t := &tracer{h: h, f: f}
	t.rec.Flow = int32(f.idx)
	t.rec.Vars = t.vars[:]
	return t
}

// AddProducer implements qlogwriter.Trace: every producer of the
// connection records into the same state.
func (t *tracer) AddProducer() qlogwriter.Recorder { return t }

// Close implements qlogwriter.Recorder.
func (t *tracer) Close() error { return nil }

// RecordEvent implements qlogwriter.Recorder.
func (t *tracer) RecordEvent(ev qlogwriter.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch e := ev.(type) {
	case qlog.CongestionStateUpdated:
		t.congestionState(e.State)
	case qlog.PTOCountUpdated:
		t.vars[varPTOCount] = float64(e.PTOCount)
	case qlog.PacketLost:
		t.vars[varLost]++
	case qlog.MetricsUpdated:
		if t.metrics(&e) {
			t.emit()
		}
	}
}

// congestionState maps quic-go's congestion state to ca_state: recovery
// is RFC 9002 §7.3.2's recovery period (quic-go's InRecovery), everything
// else is open. RFC 9002 has no CWR, disorder or loss state: a PTO is not
// a congestion event (§6.2), and persistent congestion (§7.6) only
// reduces cwnd.
func (t *tracer) congestionState(s qlog.CongestionState) {
	for i, v := range ccStates {
		if string(s) == v {
			t.vars[varCCState] = float64(i)
		}
	}
	st := ccai.StateOpen
	if s == qlog.CongestionStateRecovery {
		st = ccai.StateRecovery
	}
	if t.rec.ObserveTransition(st, !t.seen) {
		t.stateChanged = true
	}
	t.seen = true
}

// metrics merges a metrics_updated event, which carries only the fields
// that changed (sent_packet_handler.go qlogMetricsUpdated; a zero is
// "unchanged" for the RTTs and cwnd, which are never zero once set).
// Bytes and packets in flight can change to zero, so a zero there is read
// as "now zero" when the other in-flight count is zero too. It reports
// whether the event is one to record: quic-go logs metrics after every
// ACK that acknowledged something (OnPacketAcked) and after every
// ack-eliciting packet sent (SentPacket); a send only raises bytes in
// flight, so an event that does nothing else is a send and is not a
// record (S is per ACK).
func (t *tracer) metrics(e *qlog.MetricsUpdated) bool {
	r := &t.rec
	prevFlight := t.vars[varInFlightBytes]
	if e.MinRTT != 0 {
		t.vars[varMinRTT] = float64(e.MinRTT) / 1e6
	}
	if e.SmoothedRTT != 0 {
		r.SRTT = e.SmoothedRTT
	}
	if e.RTTVariance != 0 || e.SmoothedRTT != 0 {
		r.RTTVar = e.RTTVariance
	}
	if e.LatestRTT != 0 {
		t.vars[varLatestRTT] = float64(e.LatestRTT) / 1e6
	}
	cwndChanged := e.CongestionWindow != 0
	if cwndChanged {
		t.vars[varCwndBytes] = float64(e.CongestionWindow)
		r.Cwnd = uint32(e.CongestionWindow / maxDatagramSize)
	}
	if e.BytesInFlight != 0 || e.PacketsInFlight == 0 {
		t.vars[varInFlightBytes] = float64(e.BytesInFlight)
	}
	if e.PacketsInFlight != 0 || e.BytesInFlight == 0 {
		t.vars[varPacketsInFlight] = float64(e.PacketsInFlight)
	}
	flight := t.vars[varInFlightBytes]
	r.InFlight = uint32((uint64(flight) + maxDatagramSize - 1) / maxDatagramSize)
	sendOnly := flight > prevFlight && !cwndChanged && e.LatestRTT == 0 && !t.stateChanged
	return !sendOnly
}

// emit sends the current record to the observer.
func (t *tracer) emit() {
	r := &t.rec
	r.Reason = observe.ReasonAck
	if t.stateChanged {
		r.Reason = observe.ReasonState
		t.stateChanged = false
	}
	r.Time = t.h.now()
	t.f.last = *r
	t.f.last.Vars = nil
	t.h.observe(r)
}

package gvisor

import (
	"reflect"
	"unsafe"

	gtcp "gvisor.dev/gvisor/pkg/tcpip/transport/tcp"
)

// peekSender reads a connected endpoint's sender state and, for CUBIC, its
// cubic state, between two events (at quiescence, so nothing else touches
// them). gVisor exposes this state only to the TCP probe, which runs when a
// segment is received; a timer (RTO, RACK reordering, tail-loss probe)
// changes it without a probe call. The sender and its congestion control
// are unexported fields (Endpoint.snd, sender.cc), reached by reflection;
// the structures read are gVisor's exported TCPSenderState and
// TCPCubicState. ok is false when the layout is not what this code knows
// (a gVisor upgrade renamed a field); callers then keep the probe's last
// values, and TestPeek fails.
func peekSender(ep *gtcp.Endpoint) (snd gtcp.TCPSenderState, cubic gtcp.TCPCubicState, isCubic, ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	sp := reflect.ValueOf(ep).Elem().FieldByName("snd")
	if sp.Kind() != reflect.Pointer || sp.IsNil() {
		return snd, cubic, false, false
	}
	sv := sp.Elem()
	ts := sv.FieldByName("TCPSenderState")
	if ts.Type() != reflect.TypeFor[gtcp.TCPSenderState]() {
		return snd, cubic, false, false
	}
	snd = *(*gtcp.TCPSenderState)(unsafe.Pointer(ts.UnsafeAddr()))
	cc := sv.FieldByName("cc")
	if cc.Kind() == reflect.Interface && !cc.IsNil() {
		if c := cc.Elem(); c.Kind() == reflect.Pointer && c.Type().Elem().Name() == "cubicState" {
			cs := c.Elem().FieldByName("TCPCubicState")
			if cs.Type() == reflect.TypeFor[gtcp.TCPCubicState]() {
				cubic = *(*gtcp.TCPCubicState)(unsafe.Pointer(cs.UnsafeAddr()))
				isCubic = true
			}
		}
	}
	return snd, cubic, isCubic, true
}

package ccai

import "testing"

// TestIsCwndLimited: Linux's tcp_is_cwnd_limited (include/net/tcp.h) since
// commit f4ce91ce12a7 (6.1): a window in which the sender was cwnd-limited
// counts, in slow start too; else slow start counts while cwnd is below
// twice the window's largest packets_out. ProfileLinux310 tests in-flight
// before the ACK against cwnd, within tcp_max_burst (3).
func TestIsCwndLimited(t *testing.T) {
	for _, tc := range []struct {
		name             string
		profile          Profile
		cwnd, ssthresh   uint32
		limited          bool
		maxOut, inFlight uint32
		want             bool
	}{
		{"limited window, avoidance", ProfileLinux, 20, 10, true, 20, 19, true},
		{"limited window, slow start past twice packets_out", ProfileLinux, 100, 1000, true, 20, 19, true},
		{"slow start below twice packets_out", ProfileLinux, 39, 1000, false, 20, 10, true},
		{"slow start at twice packets_out", ProfileLinux, 40, 1000, false, 20, 10, false},
		{"avoidance, not limited", ProfileLinux, 20, 10, false, 19, 19, false},
		{"3.10: within 3 of cwnd", ProfileLinux310, 20, 10, false, 0, 17, true},
		{"3.10: 4 below cwnd", ProfileLinux310, 20, 10, true, 20, 16, false},
	} {
		s := &Sock{Cwnd: tc.cwnd, SSThresh: tc.ssthresh, CwndLimited: tc.limited, MaxPacketsOut: tc.maxOut, PriorInFlight: tc.inFlight, Profile: tc.profile}
		if got := s.IsCwndLimited(); got != tc.want {
			t.Errorf("%s: IsCwndLimited() = %v, want %v", tc.name, got, tc.want)
		}
	}
}

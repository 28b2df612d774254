package ccai

import (
	"math"
	"testing"
	"time"
)

// fakeSock returns a sender in congestion avoidance-ready shape: IW10, no
// ssthresh, 1448-byte segments, a large clamp.
func fakeSock(p Profile) *Sock {
	return &Sock{
		Cwnd:      10,
		CwndClamp: 1 << 30,
		SSThresh:  InfiniteSSThresh,
		MSS:       1448,
		Profile:   p,
	}
}

// ack reports one ACK of acked packets to a window-based algorithm the way
// the machinery does: pkts_acked with the RTT sample, then cong_avoid. The
// sender is made cwnd-limited first.
func ack(a Algorithm, s *Sock, acked uint32, rtt time.Duration) {
	s.CwndLimited = true
	s.MaxPacketsOut = s.Cwnd
	s.PriorInFlight = s.Cwnd
	s.SndUna += uint64(acked) * uint64(s.MSS)
	s.Delivered += uint64(acked)
	if p, ok := a.(PktsAcker); ok {
		p.PktsAcked(s, AckSample{PktsAcked: acked, RTT: rtt, InFlight: s.Cwnd})
	}
	a.CongAvoid(s, acked)
}

// enterRecovery does what the machinery does on a fast retransmit.
func enterRecovery(a Algorithm, s *Sock) {
	s.PriorCwnd = s.Cwnd
	s.PriorSSThresh = s.SSThresh
	s.SSThresh = a.SSThresh(s)
	a.SetState(s, StateRecovery)
	s.CAState = StateRecovery
	s.Cwnd = s.SSThresh
}

func profiles() []Profile { return []Profile{ProfileLinux, ProfileLinux310} }

func near(got, want, tol float64) bool { return math.Abs(got-want) <= tol }

// TestAllAlgorithmsContract checks every registered algorithm: its exposed
// variables are well formed, ReadVars does not allocate, and a long
// deterministic mix of ACKs, losses, timeouts, undos and idle restarts
// keeps cwnd at least 1 and never panics (divisions by zero, index out of
// range).
func TestAllAlgorithmsContract(t *testing.T) {
	want := []string{"bbr", "bic", "cubic", "highspeed", "htcp", "hybla", "illinois", "lp", "reno", "scalable", "vegas", "veno", "westwood", "yeah"}
	names := Names()
	for _, n := range want {
		if _, ok := Lookup(n); !ok {
			t.Errorf("algorithm %q not registered (have %v)", n, names)
		}
	}
	for _, name := range names {
		for _, p := range profiles() {
			t.Run(name+"/"+p.String(), func(t *testing.T) {
				a, err := New(name)
				if err != nil {
					t.Fatal(err)
				}
				s := fakeSock(p)
				s.SndNxt = 100 * 1448
				a.Init(s)
				vars := VarsOf(a)
				seen := map[string]bool{}
				for _, v := range vars {
					if v.Name == "" || seen[v.Name] {
						t.Errorf("bad or duplicate variable name %q", v.Name)
					}
					seen[v.Name] = true
				}
				var dst []float64
				if ve, ok := a.(VarExporter); ok {
					dst = make([]float64, len(vars))
					if n := testing.AllocsPerRun(100, func() { ve.ReadVars(s, dst) }); n != 0 {
						t.Errorf("ReadVars allocates %v times", n)
					}
				}
				drive(t, a, s, dst)
			})
		}
	}
}

// drive runs a deterministic scenario mixing every event the machinery can
// produce.
func drive(t *testing.T, a Algorithm, s *Sock, dst []float64) {
	t.Helper()
	cc, _ := a.(CongController)
	ve, _ := a.(VarExporter)
	x := uint64(12345)
	next := func() uint64 { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return x }
	for i := 0; i < 20000; i++ {
		s.Now += time.Duration(100+next()%2000) * time.Microsecond
		rtt := 20*time.Millisecond + time.Duration(next()%30000)*time.Microsecond
		s.SRTT = rtt
		s.MinRTT = 20 * time.Millisecond
		s.OneWayDelay = rtt / 2
		s.SndNxt = s.SndUna + uint64(s.Cwnd)*uint64(s.MSS) + 1
		s.PacketsOut = min(s.Cwnd, 5000)
		s.PriorInFlight = s.PacketsOut
		switch r := next() % 1000; {
		case r < 5: // fast retransmit, sometimes undone
			if s.CAState == StateOpen {
				enterRecovery(a, s)
				if next()%2 == 0 {
					s.Cwnd = a.UndoCwnd(s)
					s.SSThresh = max(s.SSThresh, s.PriorSSThresh)
				}
				a.SetState(s, StateOpen)
				s.CAState = StateOpen
				a.CwndEvent(s, EventCompleteCWR)
			}
		case r < 7: // timeout
			s.PriorCwnd = s.Cwnd
			s.SSThresh = a.SSThresh(s)
			a.CwndEvent(s, EventLoss)
			a.SetState(s, StateLoss)
			s.CAState = StateLoss
			s.Cwnd = 1
			a.SetState(s, StateOpen)
			s.CAState = StateOpen
		case r < 9: // idle restart
			s.LastSend = s.Now
			s.Now += time.Second
			s.AppLimited = true
			a.CwndEvent(s, EventTxStart)
			s.AppLimited = false
		default:
			acked := uint32(1 + next()%3)
			if cc != nil {
				s.SndUna += uint64(acked) * uint64(s.MSS)
				s.Delivered += uint64(acked)
				s.DeliveredTime = s.Now
				rs := RateSample{
					PriorDelivered: s.Delivered - uint64(s.Cwnd),
					Delivered:      int64(s.Cwnd), Interval: rtt, RTT: rtt,
					AckedSacked: acked, PriorInFlight: s.PacketsOut,
				}
				cc.CongControl(s, &rs)
			} else {
				ack(a, s, acked, rtt)
				if ie, ok := a.(InAckEventer); ok {
					ie.InAckEvent(s, 0, acked*s.MSS)
				}
			}
		}
		if s.Cwnd == 0 {
			t.Fatalf("step %d: cwnd is 0", i)
		}
		if ve != nil {
			ve.ReadVars(s, dst)
			for j, v := range dst {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("step %d: variable %d is %v", i, j, v)
				}
			}
		}
	}
}

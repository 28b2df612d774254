package ccai

import (
	"testing"
	"time"
)

func TestBBRMaxFilter(t *testing.T) {
	type step struct {
		round uint32
		v     uint64
		want  uint64
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"keeps the max for the window", []step{
			{1, 100, 100}, {2, 50, 100}, {5, 60, 100}, {11, 40, 100},
		}},
		// The filter keeps three estimates, not every sample: 80 at round 3
		// falls under all of them and is forgotten; 70 at round 6 (more
		// than a quarter window later) becomes the second-best and takes
		// over when 100 expires.
		{"the max expires after 10 rounds", []step{
			{1, 100, 100}, {3, 80, 100}, {6, 70, 100}, {11, 10, 100}, {12, 10, 70},
		}},
		{"a new max replaces everything", []step{
			{1, 100, 100}, {2, 50, 100}, {3, 120, 120}, {14, 10, 10},
		}},
		{"nothing in the window: take the sample", []step{
			{1, 100, 100}, {30, 5, 5},
		}},
	}
	for _, tc := range tests {
		var f bbrMaxFilter
		for _, st := range tc.steps {
			if got := f.update(bbrBWRTTs, st.round, st.v); got != st.want {
				t.Errorf("%s: round %d value %d: max = %d, want %d", tc.name, st.round, st.v, got, st.want)
			}
		}
	}
}

// bbrPipe drives BBR with synthetic delivery-rate samples, one round at a
// time: every ACK of a round delivers one packet and reports the round's
// delivery rate n packets per rtt.
type bbrPipe struct {
	t *testing.T
	b *BBR
	s *Sock
}

func newBBRPipe(t *testing.T) *bbrPipe {
	s := fakeSock(ProfileLinux)
	b := &BBR{}
	b.Init(s)
	return &bbrPipe{t: t, b: b, s: s}
}

// round delivers n packets over one rtt with inflight packets in flight,
// each ACK carrying a rate sample of n packets per rtt.
func (p *bbrPipe) round(n int, rtt time.Duration, inflight uint32, appLimited bool) {
	s := p.s
	prior := s.Delivered
	start := s.Now
	for i := 0; i < n; i++ {
		s.Now = start + rtt*time.Duration(i+1)/time.Duration(n)
		s.SRTT = rtt
		s.Delivered++
		s.DeliveredTime = s.Now
		s.PacketsOut = inflight
		rs := RateSample{
			PriorDelivered: prior, Delivered: int64(n), Interval: rtt, RTT: rtt,
			AckedSacked: 1, PriorInFlight: inflight, IsAppLimited: appLimited,
		}
		p.b.CongControl(s, &rs)
	}
}

func (p *bbrPipe) vars() []float64 {
	dst := make([]float64, len(p.b.Vars()))
	p.b.ReadVars(p.s, dst)
	return dst
}

// TestBBRStartupDrainProbeBW: delivery doubles per round until it reaches
// 100 packets per 100 ms RTT (1000 packets/s, 11.58 Mbit/s at 1448 B);
// three rounds without 25% growth end STARTUP; DRAIN lasts until in-flight
// falls to the BDP; PROBE_BW then paces at BtlBw × the cycle gain.
func TestBBRStartupDrainProbeBW(t *testing.T) {
	p := newBBRPipe(t)
	rtt := 100 * time.Millisecond
	if p.b.mode != BBRStartup || p.b.pacingGain != bbrHighGain || p.s.SSThresh != InfiniteSSThresh {
		t.Fatalf("after Init: mode %d gain %d ssthresh %d", p.b.mode, p.b.pacingGain, p.s.SSThresh)
	}
	// Initial pacing: 10 packets per 1 ms (no SRTT yet) at 2/ln 2.
	if want := uint64(10 * 1448 * 1000 * 2.89 * 0.99); !near(float64(p.s.PacingRate), float64(want), float64(want)/100) {
		t.Errorf("initial pacing rate %d, want ≈ %d", p.s.PacingRate, want)
	}
	type step struct {
		n        int
		inflight uint32
		wantMode uint8
	}
	steps := []step{
		{10, 20, BBRStartup},
		{20, 40, BBRStartup},
		{40, 80, BBRStartup},
		{80, 160, BBRStartup},
		{100, 200, BBRStartup}, // +25%: still growing
		{100, 200, BBRStartup}, // plateau round 1
		{100, 200, BBRStartup}, // plateau round 2
		{100, 200, BBRDrain},   // plateau round 3: pipe full
		{100, 150, BBRDrain},
		{100, 100, BBRProbeBW}, // in-flight ≤ BDP + budget
	}
	for i, st := range steps {
		p.round(st.n, rtt, st.inflight, false)
		if p.b.mode != st.wantMode {
			t.Fatalf("round %d: mode %s, want %s", i, BBRModeNames[p.b.mode], BBRModeNames[st.wantMode])
		}
		if st.wantMode == BBRDrain && i == 7 {
			// ssthresh = BDP (100) + 3 × 2 TSO segments, rounded to even.
			if p.s.SSThresh != 106 {
				t.Errorf("ssthresh on entering DRAIN = %d, want 106", p.s.SSThresh)
			}
			if p.b.pacingGain != bbrDrainGain || p.b.cwndGain != bbrHighGain {
				t.Errorf("DRAIN gains %d %d", p.b.pacingGain, p.b.cwndGain)
			}
		}
	}
	v := p.vars()
	if BBRModeNames[int(v[0])] != "probe_bw" {
		t.Errorf("mode var = %v", v[0])
	}
	if !near(v[2], 11.584, 0.01) {
		t.Errorf("btlbw = %.3f Mbit/s, want 11.584", v[2])
	}
	if v[3] != 100 {
		t.Errorf("rtprop = %v ms, want 100", v[3])
	}
	if idx := p.b.cycleIdx; idx == 1 || idx >= bbrCycleLen {
		t.Errorf("PROBE_BW started in phase %d", idx)
	}
	gain := float64(bbrPacingGains[p.b.cycleIdx]) / bbrUnit
	if want := 1000 * 1448 * 0.99 * gain; !near(float64(p.s.PacingRate), want, want/1000) {
		t.Errorf("pacing rate %d B/s, want %.0f (gain %.2f)", p.s.PacingRate, want, gain)
	}
	if p.b.fullBWReached != true || v[7] != 1 {
		t.Errorf("full_bw_reached not exposed")
	}
}

// TestBBRCycle: in PROBE_BW, a gain-1 phase lasts one RTprop of delivery
// time; the 5/4 phase also needs in-flight to reach 5/4 of the BDP.
func TestBBRCycle(t *testing.T) {
	p := newBBRPipe(t)
	rtt := 100 * time.Millisecond
	for _, n := range []int{10, 20, 40, 80, 100, 100, 100, 100} {
		p.round(n, rtt, 2*uint32(n), false)
	}
	p.round(100, rtt, 100, false)
	if p.b.mode != BBRProbeBW {
		t.Fatalf("mode %s", BBRModeNames[p.b.mode])
	}
	// Walk the cycle: a phase ends on the first ACK more than one RTprop of
	// delivery time after it began, so phase 2 ends at the start of the
	// second round; the 5/4 phase holds while in-flight stays at the BDP.
	p.b.cycleIdx = 2
	p.b.cycleStamp = p.s.DeliveredTime
	p.b.updateGains()
	seen := []uint32{}
	for r := 0; r < 8; r++ {
		p.round(100, rtt, 100, false)
		seen = append(seen, p.b.cycleIdx)
	}
	// 2→3…→7→0 one phase per round; phase 0 (5/4) never ends at 100 in
	// flight, as it needs 5/4·BDP + budget = 134.
	want := []uint32{2, 3, 4, 5, 6, 7, 0, 0}
	for i := range want {
		if seen[i] != want[i] {
			t.Fatalf("cycle phases %v, want %v", seen, want)
		}
	}
	// Reaching the probe target ends phase 0 after an RTprop; phase 1
	// (3/4) ends as soon as in-flight is back to the BDP.
	p.round(100, rtt, 140, false)
	if p.b.cycleIdx != 1 {
		t.Fatalf("phase %d after probing at 140 in flight, want 1", p.b.cycleIdx)
	}
	p.round(1, time.Millisecond, 100, false)
	if p.b.cycleIdx != 2 {
		t.Errorf("phase %d after draining, want 2", p.b.cycleIdx)
	}
}

// TestBBRProbeRTT: when RTprop has not been refreshed for 10 s, BBR enters
// PROBE_RTT, holds cwnd at 4 for 200 ms and a round once in-flight is down
// to 4, then restores cwnd and returns to PROBE_BW.
func TestBBRProbeRTT(t *testing.T) {
	p := newBBRPipe(t)
	rtt := 100 * time.Millisecond
	for _, n := range []int{10, 20, 40, 80, 100, 100, 100, 100} {
		p.round(n, rtt, 2*uint32(n), false)
	}
	p.round(100, rtt, 100, false)
	// 10 s of slightly higher RTTs: RTprop stays 100 ms until its sample
	// is 10 s old.
	expiry := p.b.minRTTStamp + bbrMinRTTWin
	for p.s.Now+rtt <= expiry {
		p.round(100, rtt+5*time.Millisecond, 100, false)
		if p.b.mode == BBRProbeRTT {
			t.Fatalf("PROBE_RTT at %v, before %v", p.s.Now, expiry)
		}
	}
	var cwndBefore uint32
	for p.b.mode != BBRProbeRTT {
		cwndBefore = p.s.Cwnd
		p.s.Now += time.Millisecond
		p.round(1, rtt+5*time.Millisecond, 100, false)
		if p.s.Now > expiry+time.Second {
			t.Fatal("no PROBE_RTT after 10 s")
		}
	}
	if p.s.Now <= expiry {
		t.Errorf("PROBE_RTT at %v, before %v", p.s.Now, expiry)
	}
	if p.s.Cwnd != bbrCwndMinTarget {
		t.Errorf("cwnd in PROBE_RTT = %d, want 4", p.s.Cwnd)
	}
	if p.b.minRTTus != 105000 {
		t.Errorf("RTprop after expiry = %d µs, want the fresh 105 ms", p.b.minRTTus)
	}
	// In-flight drains to 4: 200 ms plus a round later, PROBE_RTT ends.
	entered := p.s.Now
	for p.b.mode == BBRProbeRTT {
		p.round(4, rtt, 4, false)
		if p.s.Now > entered+time.Second {
			t.Fatal("PROBE_RTT did not end")
		}
	}
	if d := p.s.Now - entered; d < bbrProbeRTTTime {
		t.Errorf("PROBE_RTT lasted %v, want ≥ 200 ms", d)
	}
	// cwnd is restored to what it was on entry, then capped by the
	// PROBE_BW target on the same ACK.
	if p.b.mode != BBRProbeBW || p.b.priorCwnd != cwndBefore || p.s.Cwnd != min(cwndBefore+1, p.b.targetCwnd) {
		t.Errorf("after PROBE_RTT: mode %s cwnd %d (saved %d), want probe_bw and min(%d+1, target %d)",
			BBRModeNames[p.b.mode], p.s.Cwnd, p.b.priorCwnd, cwndBefore, p.b.targetCwnd)
	}
	// The low-rate samples of PROBE_RTT (4 packets per RTT) did not lower
	// BtlBw below the 100 packets per 105 ms of the rounds before.
	if v := p.vars(); !near(v[2], 100*1448*8/0.105/1e6, 0.01) {
		t.Errorf("btlbw after PROBE_RTT = %.3f", v[2])
	}
}

// TestBBRAppLimited: application-limited samples neither lower BtlBw nor
// count as plateau rounds in STARTUP.
func TestBBRAppLimited(t *testing.T) {
	p := newBBRPipe(t)
	rtt := 100 * time.Millisecond
	p.round(50, rtt, 100, false)
	for i := 0; i < 5; i++ {
		p.round(10, rtt, 20, true)
	}
	if p.b.mode != BBRStartup || p.b.fullBWReached {
		t.Errorf("app-limited rounds ended STARTUP")
	}
	if v := p.vars(); !near(v[2], 50*1448*8/0.1/1e6, 0.01) {
		t.Errorf("btlbw = %.3f, want the 50-packet rate", v[2])
	}
}

// TestBBRRecovery: packet conservation in the first round of Recovery,
// restore of the saved cwnd when it ends; ssthresh is left alone.
func TestBBRRecovery(t *testing.T) {
	p := newBBRPipe(t)
	rtt := 100 * time.Millisecond
	for _, n := range []int{10, 20, 40, 80, 100, 100, 100, 100} {
		p.round(n, rtt, 2*uint32(n), false)
	}
	p.round(100, rtt, 100, false)
	s, b := p.s, p.b
	before := s.Cwnd
	ssthresh := s.SSThresh
	if got := b.SSThresh(s); got != ssthresh {
		t.Errorf("SSThresh changed ssthresh: %d → %d", ssthresh, got)
	}
	b.SetState(s, StateRecovery)
	s.CAState = StateRecovery
	s.PacketsOut = 60
	s.Delivered++
	rs := RateSample{PriorDelivered: s.Delivered - 1, Delivered: 100, Interval: rtt, RTT: rtt, AckedSacked: 1, Losses: 3, PriorInFlight: 61}
	b.CongControl(s, &rs)
	if s.Cwnd != 61 || !b.conservation {
		t.Errorf("first Recovery ACK: cwnd %d conservation %v, want in-flight+acked = 61", s.Cwnd, b.conservation)
	}
	b.SetState(s, StateOpen)
	s.CAState = StateOpen
	s.Delivered++
	rs = RateSample{PriorDelivered: s.Delivered - 1, Delivered: 100, Interval: rtt, RTT: rtt, AckedSacked: 1, PriorInFlight: 61}
	b.CongControl(s, &rs)
	if s.Cwnd < before {
		t.Errorf("after Recovery cwnd %d, want restored to ≥ %d", s.Cwnd, before)
	}
	if got := b.UndoCwnd(s); got != s.Cwnd {
		t.Errorf("undo changed cwnd")
	}
}

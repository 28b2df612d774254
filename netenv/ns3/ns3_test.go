package ns3

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

var (
	realOnce sync.Once
	realSubj *Subject
	realErr  error
)

// realSubject is the ns-3 subject on the real driver. When ns-3's headers
// are installed the driver is (re)built with make first; the tests skip,
// saying so, only when ns-3 is absent.
func realSubject(t testing.TB) *Subject {
	t.Helper()
	realOnce.Do(func() {
		if os.Getenv(EnvDriver) == "" && ns3Headers() {
			if root := ModuleRoot(); root != "" {
				cmd := exec.Command("make", "-C", root, "--no-print-directory", "bin/"+DriverName)
				if out, err := cmd.CombinedOutput(); err != nil {
					realErr = errors.New("make bin/" + DriverName + " failed: " + string(out))
					return
				}
			}
		}
		realSubj, realErr = New(Options{})
	})
	if errors.Is(realErr, ErrNotInstalled) && !ns3Headers() {
		t.Skipf("ns-3 is not installed, so the ns-3 subject cannot be tested: %v", realErr)
	}
	if realErr != nil {
		t.Fatal(realErr)
	}
	return realSubj
}

func ns3Headers() bool {
	for _, pat := range []string{"/usr/include/ns3/core-module.h", "/usr/include/ns3*/ns3/core-module.h",
		"/usr/local/include/ns3/core-module.h", "/usr/local/include/ns3*/ns3/core-module.h"} {
		if m, _ := filepath.Glob(pat); len(m) > 0 {
			return true
		}
	}
	return false
}

func shortConfig(model string, seed uint64) netenv.Config {
	env := netenv.Env{Loss: 1e-3, BW: 10, Delay: 10, App: 10000, Buffer: 50}
	return netenv.Config{Seed: seed, Schedule: netenv.Constant(env), SACK: true, HashTrace: true,
		Flows: []netenv.Flow{{CCA: model, Bytes: 300_000}}}
}

type collect struct{ recs []observe.Record }

func (c *collect) Observe(r *observe.Record) { c.recs = append(c.recs, *r) }

func TestEveryModelRunsAShortG(t *testing.T) {
	s := realSubject(t)
	if got := s.CCAs(); len(got) != len(Models) {
		t.Errorf("driver offers %d models %v, want the %d of Models", len(got), got, len(Models))
	}
	for _, m := range Models {
		t.Run(m, func(t *testing.T) {
			var c collect
			res, err := s.Run(context.Background(), shortConfig(m, 7), &c)
			if err != nil {
				t.Fatal(err)
			}
			f := res.Flows[0]
			if !f.Done || f.DeliveredBytes != 300_000 {
				t.Fatalf("flow not complete: %+v", f)
			}
			if len(c.recs) < 20 {
				t.Fatalf("only %d state records", len(c.recs))
			}
			var acks, srtt int
			for _, r := range c.recs {
				if r.Cwnd == 0 && m != "TcpBbr" {
					t.Fatalf("zero cwnd at %v: %+v", r.Time, r)
				}
				if r.Reason == observe.ReasonAck {
					acks++
				}
				if r.SRTT > 0 {
					srtt++
				}
			}
			if acks == 0 || srtt == 0 {
				t.Fatalf("records carry no ACKs (%d) or no srtt (%d)", acks, srtt)
			}
			if res.TraceSHA256 == "" || res.SimTime <= 0 || res.Events == 0 {
				t.Fatalf("result incomplete: %+v", res)
			}
			t.Logf("%s: %.3f s simulated, %d records, segs %d, retx %d, recoveries %d, final cwnd %d",
				m, res.SimTime.Seconds(), len(c.recs), f.SegmentsSent, f.Retransmits, f.Recoveries, f.Final.Cwnd)
		})
	}
}

func TestSameSeedSameTrace(t *testing.T) {
	s := realSubject(t)
	cfg := shortConfig("TcpCubic", 42)
	cfg.Schedule[0].Env.QShape, cfg.Schedule[0].Env.QScale = 2, 1 // random queuing delay too
	cfg.Schedule[0].Env.Loss = 5e-3
	cfg.Flows[0].Bytes = 1_000_000
	run := func(s *Subject) netenv.Result {
		t.Helper()
		res, err := s.Run(context.Background(), cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	a := run(s)
	b := run(s) // the same, reused driver
	if a.TraceSHA256 != b.TraceSHA256 {
		t.Fatalf("same seed, same driver: %s vs %s", a.TraceSHA256, b.TraceSHA256)
	}
	// A fresh driver process gives the same trace as one that has already
	// run other simulations.
	fresh, err := New(Options{Driver: s.Driver()})
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if c := run(fresh); c.TraceSHA256 != a.TraceSHA256 {
		t.Fatalf("same seed, fresh driver: %s vs %s", c.TraceSHA256, a.TraceSHA256)
	}
	cfg.Seed = 43
	if d := run(s); d.TraceSHA256 == a.TraceSHA256 {
		t.Fatalf("seeds 42 and 43 gave the same trace %s", a.TraceSHA256)
	}
	if a.Losses == 0 {
		t.Fatalf("no random losses at loss 5e-3: %+v", a)
	}
}

// TestScheduleChangeAtTi switches the one-way delay from 10 ms to 80 ms at
// t1 = 1 s. ACKs that left the receiver before t1 still arrive within
// 10 ms; the next ones need 80 ms: no ACK arrives in (t1+15ms, t1+80ms).
// (80 ms keeps the RTT below the 200 ms minimum RTO: a jump above the RTO
// sends ns-3 into a loop of spurious timeouts, see the package doc.)
func TestScheduleChangeAtTi(t *testing.T) {
	s := realSubject(t)
	t1 := time.Second
	e1 := netenv.Env{BW: 10, Delay: 10, App: 10000, Buffer: 100}
	e2 := e1
	e2.Delay = 80
	cfg := netenv.Config{Seed: 1, SACK: true, Flows: []netenv.Flow{{CCA: "TcpLinuxReno", Bytes: 3_000_000}},
		Schedule: netenv.Schedule{{Env: e1, Until: t1}, {Env: e2}}}
	var c collect
	res, err := s.Run(context.Background(), cfg, &c)
	if err != nil {
		t.Fatal(err)
	}
	var lastBefore, firstAfter time.Duration = -1, -1
	for _, r := range c.recs {
		if r.Reason != observe.ReasonAck {
			continue
		}
		if r.Time <= t1+15*time.Millisecond {
			lastBefore = r.Time
		} else if firstAfter < 0 {
			firstAfter = r.Time
		}
	}
	if lastBefore < t1-20*time.Millisecond {
		t.Fatalf("ACKs stopped at %v, before the switch at %v", lastBefore, t1)
	}
	if firstAfter < t1+80*time.Millisecond {
		t.Fatalf("an ACK arrived at %v, less than the new 80 ms delay after the switch at %v", firstAfter, t1)
	}
	if firstAfter > t1+150*time.Millisecond {
		t.Fatalf("ACKs resumed only at %v", firstAfter)
	}
	// And the RTT estimate follows the new delay.
	last := c.recs[len(c.recs)-1]
	if last.SRTT < 160*time.Millisecond {
		t.Fatalf("final srtt %v, want ≥ 160 ms after the switch to 80 ms one way", last.SRTT)
	}
	t.Logf("last ACK before %v, first after %v; final srtt %v; %.3f s simulated", lastBefore, firstAfter, last.SRTT, res.SimTime.Seconds())
}

// TestBandwidthAndAppRateSwitch checks that bandwidth and application-rate
// switches change the delivery rate from t_i on. (As in the native
// subject, an unlimited application has written everything at once, so a
// switch from unlimited to a rate changes nothing: the test starts
// limited.)
func TestBandwidthAndAppRateSwitch(t *testing.T) {
	s := realSubject(t)
	e1 := netenv.Env{BW: 10, Delay: 5, App: 0.5, Buffer: 100}
	e2 := e1
	e2.App = 4
	e3 := e2
	e3.BW, e3.App = 1, 10000
	cfg := netenv.Config{Seed: 3, SACK: true, Flows: []netenv.Flow{{CCA: "TcpCubic", Bytes: 4_000_000}},
		Schedule: netenv.Schedule{{Env: e1, Until: 2 * time.Second}, {Env: e2, Until: 4 * time.Second}, {Env: e3}}}
	cfg.Limits.MaxTime = 7 * time.Second
	var c collect
	res, err := s.Run(context.Background(), cfg, &c)
	if err != nil {
		t.Fatal(err)
	}
	delivered := func(t time.Duration) uint64 { // packets delivered by t
		var d uint64
		for _, r := range c.recs {
			if r.Time > t {
				break
			}
			d = r.Delivered
		}
		return d
	}
	mbps := func(a, b time.Duration) float64 {
		return float64(delivered(b)-delivered(a)) * MSS * 8 / (b - a).Seconds() / 1e6
	}
	r1, r2, r3 := mbps(500*time.Millisecond, 2*time.Second), mbps(2500*time.Millisecond, 4*time.Second), mbps(4500*time.Millisecond, 7*time.Second)
	t.Logf("goodput %.2f, %.2f, %.2f Mbit/s; capped=%v", r1, r2, r3, res.Capped)
	if r1 < 0.4 || r1 > 0.6 || r2 < 3.5 || r2 > 4.5 || r3 < 0.7 || r3 > 1.05 {
		t.Fatalf("goodput %.2f / %.2f / %.2f Mbit/s, want ≈ 0.5 / 4 / ≤ 1", r1, r2, r3)
	}
	if !res.Capped || res.CapReason != "time" {
		t.Fatalf("want a time cap at 7 s: %+v", res)
	}
}

func TestNativeNamesAndErrors(t *testing.T) {
	s := realSubject(t)
	res, err := s.Run(context.Background(), shortConfig("cubic", 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Flows[0].CCA != "cubic" || !res.Flows[0].Done {
		t.Fatalf("%+v", res.Flows[0])
	}
	if _, err := s.Run(context.Background(), shortConfig("TcpNoSuch", 1), nil); err == nil || !strings.Contains(err.Error(), "unknown ns-3") {
		t.Fatalf("want an unknown-model error, got %v", err)
	}
	var f *netenv.Fault
	if errors.As(err, &f) {
		t.Fatal("a configuration error must not be a fault")
	}
}

func TestTwoFlowsShareTheBottleneck(t *testing.T) {
	s := realSubject(t)
	cfg := shortConfig("TcpCubic", 5)
	cfg.Flows = append(cfg.Flows, netenv.Flow{CCA: "TcpLinuxReno", Bytes: 300_000})
	var c collect
	res, err := s.Run(context.Background(), cfg, &c)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int32]bool{}
	for _, r := range c.recs {
		seen[r.Flow] = true
	}
	if len(res.Flows) != 2 || !res.Flows[0].Done || !res.Flows[1].Done || !seen[0] || !seen[1] {
		t.Fatalf("two flows: %+v, records of flows %v", res.Flows, seen)
	}
}

func TestConcurrentRuns(t *testing.T) {
	s := realSubject(t)
	want, err := s.Run(context.Background(), shortConfig("TcpBic", 9), nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := s.Run(context.Background(), shortConfig("TcpBic", 9), nil)
			if err == nil && res.TraceSHA256 != want.TraceSHA256 {
				err = errors.New("concurrent run gave another trace")
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestDiffNativeVsNS3(t *testing.T) {
	s := realSubject(t)
	for _, cca := range []string{"cubic", "reno"} {
		cfg := netenv.Config{Seed: 1, SACK: true, Schedule: netenv.Constant(netenv.DefaultEnv()),
			Flows: []netenv.Flow{{CCA: cca, Bytes: 1_000_000}}}
		rep, err := Diff(context.Background(), cfg, netenv.Native{}, s)
		if err != nil {
			t.Fatal(err)
		}
		if rep.A.Subject != "native" || rep.B.Subject != "ns3" || len(rep.Flows) != 1 || len(rep.Flows[0].Points) == 0 {
			t.Fatalf("incomplete report: %+v", rep)
		}
		f := rep.Flows[0]
		if f.ThroughputMbps[0] <= 0 || f.ThroughputMbps[1] <= 0 || !f.Done[0] || !f.Done[1] {
			t.Fatalf("throughput or completion missing: %+v", f)
		}
		var b strings.Builder
		if err := rep.Format(&b); err != nil {
			t.Fatal(err)
		}
		t.Logf("\n%s", b.String())
	}
}

// TestSimCommandTraceStable is what `actfuzz sim --subject ns3 --cca
// TcpCubic --bytes 1000000 --json` runs: two separate driver processes
// give the same trace_sha256.
func TestSimCommandTraceStable(t *testing.T) {
	s := realSubject(t)
	cfg := netenv.Config{Seed: 1, SACK: true, HashTrace: true, Schedule: netenv.Constant(netenv.DefaultEnv()),
		Flows: []netenv.Flow{{CCA: "TcpCubic", Bytes: 1_000_000}}}
	var hashes []string
	for i := 0; i < 2; i++ {
		sub, err := Open()
		if err != nil {
			t.Fatal(err)
		}
		res, err := sub.Run(context.Background(), cfg, nil)
		sub.(*Subject).Close()
		if err != nil {
			t.Fatal(err)
		}
		hashes = append(hashes, res.TraceSHA256)
	}
	if hashes[0] != hashes[1] || hashes[0] == "" {
		t.Fatalf("trace_sha256 %q then %q", hashes[0], hashes[1])
	}
	_ = s
	t.Logf("trace_sha256 %s", hashes[0])
}

// TestReductionEntryRecord: the record that enters a recovery or CWR is
// emitted at the reduction itself (doc.go, "State records"): a state
// record with the model's own reduced ssthresh, cwnd still the window
// before it (= prior_cwnd) and in flight the pipe ssthresh was computed
// from, before the ACK's own record at the same time. TcpCubic keeps 0.7
// of cwnd, TcpLinuxReno half of it, TcpNewReno half of the pipe (each
// within a packet: bytes are rounded to packets). Before protocol 4 the
// record came after the whole ACK, where TcpCubic's HyStart may already
// have lowered ssthresh to the cwnd PRR left. CWR comes from RED's ECN
// marks (TcpSocketBase::EnterCwr sets ssthresh before the state).
func TestReductionEntryRecord(t *testing.T) {
	s := realSubject(t)
	want := map[string]func(r observe.Record) int{
		"TcpCubic":     func(r observe.Record) int { return max(int(float64(r.PriorCwnd)*0.7), 2) },
		"TcpLinuxReno": func(r observe.Record) int { return max(int(r.PriorCwnd)/2, 2) },
		"TcpNewReno":   func(r observe.Record) int { return max(int(r.InFlight)/2, 2) },
	}
	for _, tc := range []struct {
		model string
		state ccai.CAState
		env   netenv.Env
	}{
		{"TcpCubic", ccai.StateRecovery, netenv.Env{Loss: 0.01, BW: 10, Delay: 10, App: 10000, Buffer: 50}},
		{"TcpCubic", ccai.StateRecovery, netenv.Env{Loss: 0.002, BW: 50, Delay: 40, App: 10000, Buffer: 300}},
		{"TcpLinuxReno", ccai.StateRecovery, netenv.Env{Loss: 0.01, BW: 10, Delay: 10, App: 10000, Buffer: 50}},
		{"TcpNewReno", ccai.StateRecovery, netenv.Env{Loss: 0.01, BW: 10, Delay: 10, App: 10000, Buffer: 50}},
		{"TcpLinuxReno", ccai.StateCWR, netenv.Env{BW: 10, Delay: 10, App: 10000, Buffer: 100, AQM: netenv.AQMRED, ECN: netenv.ECNOn}},
		{"TcpCubic", ccai.StateCWR, netenv.Env{BW: 10, Delay: 10, App: 10000, Buffer: 100, AQM: netenv.AQMRED, ECN: netenv.ECNOn}},
	} {
		t.Run(tc.model+"/"+tc.state.String(), func(t *testing.T) {
			cfg := shortConfig(tc.model, 11)
			cfg.Schedule = netenv.Constant(tc.env)
			cfg.Flows[0].Bytes = 3_000_000
			var c collect
			if _, err := s.Run(context.Background(), cfg, &c); err != nil {
				t.Fatal(err)
			}
			entries := 0
			for i, r := range c.recs {
				calm := r.PrevCAState == ccai.StateOpen || r.PrevCAState == ccai.StateDisorder
				if r.Reason != observe.ReasonState || r.CAState != tc.state || !calm {
					continue
				}
				entries++
				if r.Cwnd != r.PriorCwnd {
					t.Errorf("entry at %v: cwnd %d, want prior_cwnd %d (the window before the reduction)", r.Time, r.Cwnd, r.PriorCwnd)
				}
				if w := want[tc.model](r); int(r.SSThresh) < w-1 || int(r.SSThresh) > w+1 {
					t.Errorf("entry at %v: ssthresh %d, want %d ± 1 (prior_cwnd %d, in flight %d)", r.Time, r.SSThresh, w, r.PriorCwnd, r.InFlight)
				}
				if i+1 >= len(c.recs) || c.recs[i+1].Time != r.Time || c.recs[i+1].Reason != observe.ReasonAck {
					t.Errorf("entry at %v is not followed by its ACK's record", r.Time)
				}
				if i > 0 && c.recs[i-1].Time == r.Time && c.recs[i-1].CAState == tc.state {
					t.Errorf("entry at %v comes after a record of the same ACK in the new state", r.Time)
				}
			}
			if entries == 0 {
				t.Fatalf("no %v entry: the test says nothing", tc.state)
			}
			t.Logf("%s: %d %v entries", tc.model, entries, tc.state)
		})
	}
}

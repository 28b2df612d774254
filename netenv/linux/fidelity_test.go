package linux

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
	"github.com/actfuzz/actfuzz/netenv/tcp"
)

// The fidelity figures of doc.go. They take minutes of real time, so they
// run only with ACTFUZZ_LINUX_SLOW=1 (make linux-test).

func slowOrSkip(t *testing.T) *Subject {
	t.Helper()
	if os.Getenv("ACTFUZZ_LINUX_SLOW") == "" {
		t.Skip("fidelity figures: set ACTFUZZ_LINUX_SLOW=1 (make linux-test)")
	}
	return openOrSkip(t)
}

// meanOf averages cwnd and srtt over a run's records after skip.
type meanOf struct {
	skip       time.Duration
	n          float64
	cwnd, srtt float64
}

func (m *meanOf) Observe(r *observe.Record) {
	if r.Time < m.skip || r.Flow != 0 {
		return
	}
	m.n++
	m.cwnd += float64(r.Cwnd)
	m.srtt += r.SRTT.Seconds()
}

func (m *meanOf) means() (cwnd, srtt float64) {
	if m.n == 0 {
		return 0, 0
	}
	return m.cwnd / m.n, m.srtt / m.n
}

// TestMathis checks kernel reno on a long-lived flow with random loss p
// against Mathis et al.'s 1.22·MSS/(RTT·√p) (CCR 27(3), 1997) within 25%,
// with RTT the flow's mean srtt and a bottleneck that never limits it.
func TestMathis(t *testing.T) {
	s := slowOrSkip(t)
	for _, tc := range []struct {
		p    float64
		wall time.Duration
	}{{1e-2, 15 * time.Second}, {1e-3, 25 * time.Second}} {
		t.Run(fmt.Sprint(tc.p), func(t *testing.T) {
			e := netenv.Env{Loss: tc.p, BW: 150, Delay: 10, App: 1e7, Buffer: 5000}
			cfg := config("reno", 1<<40, e)
			cfg.Limits.MaxTime = tc.wall
			m := &meanOf{skip: 2 * time.Second}
			res, err := s.Run(context.Background(), cfg, m)
			if err != nil {
				t.Fatal(err)
			}
			_, srtt := m.means()
			got := float64(res.Flows[0].DeliveredBytes) * 8 / res.SimTime.Seconds() / 1e6
			want := 1.22 * float64(tcp.DefaultMSS) * 8 / (srtt * math.Sqrt(tc.p)) / 1e6
			t.Logf("reno p=%g: %.2f Mbit/s over %.1f s, mean srtt %.2f ms; Mathis %.2f Mbit/s; ratio %.3f (retransmits %d, timeouts %d)",
				tc.p, got, res.SimTime.Seconds(), srtt*1e3, want, got/want, res.Flows[0].Retransmits, res.Flows[0].Timeouts)
			if r := got / want; r < 0.75 || r > 1.25 {
				t.Errorf("throughput %.2f Mbit/s is %.0f%% of Mathis' %.2f (want within 25%%)", got, 100*r, want)
			}
		})
	}
}

// TestAgainstNative runs kernel cubic and reno and the native subject's on
// the same environments and reports the ratios kernel/native of goodput,
// retransmits, timeouts and mean cwnd. It fails if the median goodput
// ratio is outside [0.67, 1.5]: the emulator or the state mapping is
// broken then, not merely the kernel different.
func TestAgainstNative(t *testing.T) {
	s := slowOrSkip(t)
	envs := []netenv.Env{
		{Loss: 0, BW: 10, Delay: 20, App: 1e7, Buffer: 100},
		{Loss: 1e-3, BW: 10, Delay: 20, App: 1e7, Buffer: 100},
		{Loss: 1e-2, BW: 10, Delay: 20, App: 1e7, Buffer: 100},
		{Loss: 1e-4, BW: 50, Delay: 10, App: 1e7, Buffer: 200},
		{Loss: 1e-3, BW: 5, Delay: 40, App: 1e7, Buffer: 50},
		{Loss: 0, BW: 20, Delay: 5, App: 1e7, Buffer: 20},
		{Loss: 1e-3, BW: 10, Delay: 20, QShape: 2, QScale: 1, App: 1e7, Buffer: 100},
		{Loss: 5e-3, BW: 2, Delay: 80, App: 1e7, Buffer: 30},
		{Loss: 0, BW: 10, Delay: 20, App: 3, Buffer: 100},
		{Loss: 2e-2, BW: 20, Delay: 10, App: 1e7, Buffer: 400},
	}
	type ratios struct{ goodput, retx, rto, cwnd []float64 }
	all := map[string]*ratios{}
	ratio := func(a, b float64) float64 {
		if a == b {
			return 1
		}
		if b == 0 {
			return math.Inf(1)
		}
		return a / b
	}
	for _, cca := range []string{"cubic", "reno"} {
		rs := &ratios{}
		all[cca] = rs
		for i, e := range envs {
			// About 3 s of the bottleneck's worth of bytes.
			bytes := uint64(min(e.BW, e.App) * 1e6 / 8 * 3)
			cfg := config(cca, bytes, e)
			cfg.Seed = uint64(i + 1)
			var out [2]struct {
				res  netenv.Result
				cwnd float64
			}
			for j, subj := range []netenv.Subject{s, netenv.Native{}} {
				m := &meanOf{}
				res, err := subj.Run(context.Background(), cfg, m)
				if err != nil {
					t.Fatal(err)
				}
				out[j].res = res
				out[j].cwnd, _ = m.means()
			}
			k, n := out[0].res.Flows[0], out[1].res.Flows[0]
			gk := float64(k.DeliveredBytes) * 8 / k.DoneAtS / 1e6
			gn := float64(n.DeliveredBytes) * 8 / n.DoneAtS / 1e6
			rs.goodput = append(rs.goodput, ratio(gk, gn))
			rs.retx = append(rs.retx, ratio(float64(k.Retransmits), float64(n.Retransmits)))
			rs.rto = append(rs.rto, ratio(float64(k.Timeouts), float64(n.Timeouts)))
			rs.cwnd = append(rs.cwnd, ratio(out[0].cwnd, out[1].cwnd))
			t.Logf("%s env %d %+v: goodput %.2f/%.2f Mbit/s, retx %d/%d, rto %d/%d, mean cwnd %.1f/%.1f (kernel/native)",
				cca, i+1, e, gk, gn, k.Retransmits, n.Retransmits, k.Timeouts, n.Timeouts, out[0].cwnd, out[1].cwnd)
		}
	}
	med := func(v []float64) float64 {
		v = slices.Clone(v)
		slices.Sort(v)
		return v[len(v)/2]
	}
	worst := func(v []float64) float64 {
		w := 1.0
		for _, x := range v {
			if math.Abs(math.Log(x)) > math.Abs(math.Log(w)) {
				w = x
			}
		}
		return w
	}
	for _, cca := range []string{"cubic", "reno"} {
		rs := all[cca]
		t.Logf("%s kernel/native: goodput median %.3f worst %.3f; retransmits median %.3f worst %.3f; timeouts median %.3f worst %.3f; mean cwnd median %.3f worst %.3f",
			cca, med(rs.goodput), worst(rs.goodput), med(rs.retx), worst(rs.retx), med(rs.rto), worst(rs.rto), med(rs.cwnd), worst(rs.cwnd))
		if g := med(rs.goodput); g < 0.67 || g > 1.5 {
			t.Errorf("%s: median goodput ratio kernel/native %.3f outside [0.67, 1.5]", cca, g)
		}
	}
}

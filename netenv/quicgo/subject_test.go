package quicgo

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

type collect struct{ recs []observe.Record }

func (c *collect) Observe(r *observe.Record) {
	cp := *r
	cp.Vars = append([]float64(nil), r.Vars...)
	c.recs = append(c.recs, cp)
}

func shortConfig(bytes uint64, loss float64) netenv.Config {
	e := netenv.DefaultEnv()
	e.BW, e.Delay, e.Loss, e.Buffer, e.QShape, e.QScale = 20, 10, loss, 100, 0, 0
	return netenv.Config{Seed: 1, Schedule: netenv.Constant(e), Flows: []netenv.Flow{{CCA: "reno", Bytes: bytes}}}
}

// TestShortFlow runs 300 kB over a 20 Mbit/s, 20 ms RTT path in real time
// and checks the records: every byte delivered, records per ACK in time
// order, cwnd from quic-go's initial window (32 datagrams), srtt near the
// path's RTT.
func TestShortFlow(t *testing.T) {
	if testing.Short() {
		t.Skip("real-time run")
	}
	s, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	var c collect
	res, err := s.Run(context.Background(), shortConfig(300_000, 0), &c)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Flows) != 1 || !res.Flows[0].Done || res.Flows[0].DeliveredBytes != 300_000 {
		t.Fatalf("flow result %+v", res.Flows)
	}
	if len(c.recs) < 20 {
		t.Fatalf("%d records, want at least one per few ACKs of 240 datagrams", len(c.recs))
	}
	var prev time.Duration
	for i, r := range c.recs {
		if r.Time < prev {
			t.Fatalf("record %d at %v before %v", i, r.Time, prev)
		}
		prev = r.Time
		if r.Cwnd < 2 {
			t.Fatalf("record %d: cwnd %d below quic-go's minimum of 2 datagrams", i, r.Cwnd)
		}
		if len(r.Vars) != len(Vars("reno")) {
			t.Fatalf("record %d: %d vars", i, len(r.Vars))
		}
	}
	first := c.recs[0]
	if first.Cwnd != 32 {
		t.Errorf("first record's cwnd %d, want quic-go's initial window 32", first.Cwnd)
	}
	last := c.recs[len(c.recs)-1]
	if last.SRTT < 20*time.Millisecond || last.SRTT > 2*time.Second {
		t.Errorf("final srtt %v, want at least the path's 20 ms", last.SRTT)
	}
	if last.Cwnd <= 32 {
		t.Errorf("final cwnd %d: no slow-start growth without loss", last.Cwnd)
	}
}

// TestRefused: what the subject cannot honour is refused, naming it.
func TestRefused(t *testing.T) {
	s := &Subject{}
	ecn := shortConfig(1000, 0)
	ecn.Schedule[0].Env.ECN = 1
	cubic := shortConfig(1000, 0)
	cubic.Flows[0].CCA = "cubic"
	prof := shortConfig(1000, 0)
	prof.Profile = ccai.ProfileLinux310
	for _, tc := range []struct {
		name string
		cfg  netenv.Config
		want string
	}{
		{"ecn", ecn, "ecn"},
		{"cca", cubic, "cubic"},
		{"profile", prof, "profile"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := s.Check(&tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check: %v, want an error naming %q", err, tc.want)
			}
		})
	}
}

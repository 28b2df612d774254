package netenv_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

// ns3Like is a subject with names of its own, native aliases, two
// topologies, no profiles, no pacing_rate and no variables: the shapes
// Capabilities must handle, without needing ns-3.
func ns3Like() netenv.Capabilities {
	return netenv.Capabilities{Name: "fake", CCAs: []string{"TcpCubic", "TcpLinuxReno"},
		Aliases:    map[string]string{"cubic": "TcpCubic", "reno": "TcpLinuxReno"},
		Params:     []string{"loss", "bw", "delay", "app", "buffer"}, // no qshape, qscale
		Topologies: []string{netenv.TopoSingleLink, netenv.TopoDumbbell},
		Base:       []string{"cwnd", "ssthresh", "ca_state", "time", "flow"},
		Vars: func(cca string) []ccai.VarDesc {
			if cca == "TcpCubic" {
				return []ccai.VarDesc{{Name: "w_max"}, {Name: "cwnd"}} // cwnd: named like a base variable
			}
			return nil
		}}
}

func TestCapabilitiesResolve(t *testing.T) {
	native, fake := netenv.NativeCapabilities(), ns3Like()
	for _, tc := range []struct {
		caps      netenv.Capabilities
		name, own string
		err       string // in the error; "" for none
	}{
		{native, "cubic", "cubic", ""},
		{native, "TcpCubic", "", `unknown congestion control "TcpCubic" for the native subject`},
		{native, "cubc", "", `did you mean "cubic"?`},
		{fake, "TcpCubic", "TcpCubic", ""},
		{fake, "tcpcubic", "TcpCubic", ""},
		{fake, "cubic", "TcpCubic", ""},
		{fake, "RENO", "TcpLinuxReno", ""},
		{fake, "bbr", "", "for the fake subject"},
		{fake, "TcpCubik", "", `did you mean "TcpCubic"?`},
	} {
		own, err := tc.caps.Resolve(tc.name)
		switch {
		case tc.err == "" && (err != nil || own != tc.own):
			t.Errorf("%s: Resolve(%q) = %q, %v; want %q", tc.caps.Name, tc.name, own, err, tc.own)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: Resolve(%q) error %v, want it to contain %q", tc.caps.Name, tc.name, err, tc.err)
		}
	}
	if got := fake.NativeName("TcpCubic"); got != "cubic" {
		t.Errorf("NativeName(TcpCubic) = %q, want cubic", got)
	}
}

func TestCapabilitiesCheckConfig(t *testing.T) {
	fake := ns3Like()
	cfg := func(edit func(*netenv.Config)) *netenv.Config {
		c := &netenv.Config{Seed: 1, Schedule: netenv.Constant(netenv.DefaultEnv()), Flows: []netenv.Flow{{CCA: "cubic", Bytes: 1000}}}
		edit(c)
		return c
	}
	for _, tc := range []struct {
		name string
		cfg  *netenv.Config
		err  string
	}{
		{"defaults", cfg(func(*netenv.Config) {}), ""},
		{"own name", cfg(func(c *netenv.Config) { c.Flows[0].CCA = "TcpLinuxReno" }), ""},
		{"dumbbell", cfg(func(c *netenv.Config) { c.Topology = netenv.TopoDumbbell }), ""},
		{"unknown cca", cfg(func(c *netenv.Config) { c.Flows = append(c.Flows, netenv.Flow{CCA: "vegas", Bytes: 1}) }), `flow 1: unknown congestion control "vegas"`},
		{"parking-lot", cfg(func(c *netenv.Config) { c.Topology = netenv.TopoParkingLot }), `cannot build topology "parking-lot"`},
		{"profile", cfg(func(c *netenv.Config) { c.Profile = ccai.ProfileLinux310 }), "profile linux-3.10 does not apply to the fake subject"},
		{"param varied", cfg(func(c *netenv.Config) { c.Schedule[0].Env.QShape = 3 }), "cannot express parameter qshape"},
		{"param varied in a later phase", cfg(func(c *netenv.Config) {
			e := netenv.DefaultEnv()
			e.QScale = 7
			c.Schedule[0].Until = time.Second
			c.Schedule = append(c.Schedule, netenv.Phase{Env: e})
		}), "cannot express parameter qscale"},
	} {
		err := fake.CheckConfig(tc.cfg)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
		}
	}
	// The native subject takes all of it.
	c := cfg(func(c *netenv.Config) {
		c.Topology, c.Profile = netenv.TopoParkingLot, ccai.ProfileLinux310
		c.Schedule[0].Env.QShape = 3
	})
	if err := netenv.NativeCapabilities().CheckConfig(c); err != nil {
		t.Errorf("native: %v", err)
	}
}

// TestCSVTraceColumns: a trace has the columns of what the subject
// reports, each name once, and each value under its own column.
func TestCSVTraceColumns(t *testing.T) {
	rec := &observe.Record{Cwnd: 10, SSThresh: 7, CAState: ccai.StateRecovery, PacingRate: 999, Vars: []float64{42, 11}}
	for _, tc := range []struct {
		name string
		caps netenv.Capabilities
		cca  string
		cols string
		row  string
	}{
		{"native reno", netenv.NativeCapabilities(), "reno",
			"time_s,flow,reason,cwnd,ssthresh,srtt_ms,rttvar_ms,rto_ms,ca_state,prev_ca_state,prior_cwnd,in_flight,delivered,pacing_rate", ""},
		{"fake cubic", ns3Like(), "cubic", "time_s,flow,reason,cwnd,ssthresh,ca_state,w_max",
			"0.000000000,0,ack,10,7,recovery,42"},
		{"fake reno", ns3Like(), "reno", "time_s,flow,reason,cwnd,ssthresh,ca_state", "0.000000000,0,ack,10,7,recovery"},
	} {
		var b bytes.Buffer
		tr := netenv.NewCSVTrace(&b, tc.caps, tc.cca)
		tr.Observe(rec)
		if err := tr.Flush(); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(b.String(), "\n")
		if lines[0] != tc.cols {
			t.Errorf("%s: columns\n%s\nwant\n%s", tc.name, lines[0], tc.cols)
		}
		if tc.row != "" && lines[1] != tc.row {
			t.Errorf("%s: row %s, want %s", tc.name, lines[1], tc.row)
		}
	}
}

// TestBBRTraceHasPacingRateOnce: BBR's own pacing_rate (Mbit/s) has the
// name of the base one (bytes/s); the trace shows the base one only.
func TestBBRTraceHasPacingRateOnce(t *testing.T) {
	var b bytes.Buffer
	tr := netenv.NewCSVTrace(&b, netenv.NativeCapabilities(), "bbr")
	cfg := netenv.Config{Seed: 1, Schedule: netenv.Constant(netenv.DefaultEnv()), Flows: []netenv.Flow{{CCA: "bbr", Bytes: 100_000}}, SACK: true}
	if _, err := (netenv.Native{}).Run(context.Background(), cfg, tr); err != nil {
		t.Fatal(err)
	}
	if err := tr.Flush(); err != nil {
		t.Fatal(err)
	}
	header := strings.SplitN(b.String(), "\n", 2)[0]
	if n := strings.Count(","+header+",", ",pacing_rate,"); n != 1 {
		t.Fatalf("pacing_rate %d times in %s", n, header)
	}
	if !strings.Contains(header, ",btlbw,") {
		t.Fatalf("BBR's variables missing: %s", header)
	}
}

//go:build !gofuzz

package corpus

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

func TestConditionReads(t *testing.T) {
	for _, tc := range []struct {
		when string
		ccas []string
		want []string
	}{
		{"cwnd > 1e7", []string{"cubic"}, []string{"cwnd"}},
		{"cwnd > ssthresh && target > 2*cwnd", []string{"cubic", "reno"}, []string{"cwnd", "ssthresh", "target"}},
		{"cwnd > ssthresh && target > 2*cwnd", []string{"reno"}, nil}, // reno has no target
		{`prev.ca_state == "recovery" && ca_state == "open" && cwnd > prior_cwnd`, []string{"reno"}, []string{"cwnd", "ca_state", "prior_cwnd"}},
	} {
		got := ConditionReads(ConditionSpec{Name: "c", When: tc.when}, netenv.NativeCapabilities(), tc.ccas)
		slices.Sort(got)
		want := slices.Clone(tc.want)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("ConditionReads(%q, %v) = %v, want %v", tc.when, tc.ccas, got, want)
		}
	}
}

func TestEnvChange(t *testing.T) {
	a := netenv.DefaultEnv()
	b, c := a, a
	b.BW = 100
	c.BW, c.Delay, c.Loss, c.Buffer = 1, 200, 0.01, 7
	for _, tc := range []struct {
		x, y netenv.Env
		want string
	}{
		{a, a, "(same)"},
		{a, b, "bw 10 → 100"},
		{a, c, "loss 0.0001 → 0.01, bw 10 → 1, +2"},
	} {
		if got := envChange(tc.x, tc.y); got != tc.want {
			t.Errorf("envChange = %q, want %q", got, tc.want)
		}
	}
}

// TestTracePlot draws two flows, a schedule with a switch and a condition
// variable, as SVG (its text can be read back) and PNG.
func TestTracePlot(t *testing.T) {
	p := &TracePlot{Flow: 0, CCAI: []string{"cubic", "reno"}, Reads: []string{"cwnd", "ssthresh", "target", "srtt"}, Caps: netenv.NativeCapabilities()}
	nv := len(SchemaFor("cubic")) - len(BaseVars)
	ti := SchemaFor("cubic").Index("target") - len(BaseVars)
	for i := range 2000 {
		for f := range int32(2) {
			r := &observe.Record{Time: time.Duration(i) * 10 * time.Millisecond, Flow: f, Cwnd: uint32(10 + i%50 + int(f)),
				SSThresh: 30, SRTT: 40 * time.Millisecond, CAState: ccai.CAState(i / 100 % 5)}
			if f == 0 {
				r.Vars = make([]float64, nv)
				r.Vars[ti] = float64(20 + i*4300)
			}
			p.Observe(r)
		}
	}
	a := netenv.DefaultEnv()
	b := a
	b.BW = 100
	sched := netenv.Schedule{{Env: a, Until: 7 * time.Second}, {Env: b}}
	dir := t.TempDir()
	for _, name := range []string{"p.svg", "p.png"} {
		if err := p.Save(filepath.Join(dir, name), "cubic + reno on native (linux), seed 1: c", sched, 12*time.Second, 40); err != nil {
			t.Fatal(err)
		}
	}
	svg, err := os.ReadFile(filepath.Join(dir, "p.svg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"cubic + reno on native", "whole run", "around the hit at 12.000 s", "flow 0 cubic (hit): cwnd",
		"flow 1 reno: ssthresh", "target (flow 0)", "srtt (flow 0)", "ca_state recovery (band)", "environment switch",
		"bw 10 → 100", "hit", "environment (each phase's values)", "phase 1, 0–7 s: loss 0.0001, bw 10 Mbit/s, delay 20 ms", "phase 2, from 7 s: loss 0.0001, bw 100 Mbit/s"} {
		if !strings.Contains(svg2text(string(svg)), want) {
			t.Errorf("plot lacks %q", want)
		}
	}
	// CUBIC's target (here up to 8.6 M packets) has a panel of its own:
	// it is not on cwnd's axis, whose scale it would flatten cwnd to 0 on.
	if strings.Contains(svg2text(string(svg)), "flow 0 cubic (hit): target") {
		t.Error("target drawn on cwnd's axis")
	}
	if png, err := os.ReadFile(filepath.Join(dir, "p.png")); err != nil || !strings.HasPrefix(string(png), "\x89PNG") {
		t.Errorf("PNG: %v", err)
	}
}

// svg2text undoes the SVG writer's escapes.
func svg2text(s string) string {
	return strings.NewReplacer("&#43;", "+", "&gt;", ">", "&lt;", "<", "&#34;", `"`, "&#39;", "'", "&amp;", "&").Replace(s)
}

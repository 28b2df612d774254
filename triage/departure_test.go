package triage

import (
	"strings"
	"testing"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/oracle"
)

// A hit of an oracle that reports Linux's own departure (ReportsLinux) is
// that documented departure on the native model at profile linux, and
// stays a finding elsewhere.
func TestDepartureReportsLinux(t *testing.T) {
	o, ok := oracle.Lookup("ssthresh-steady")
	if !ok {
		t.Fatal("no ssthresh-steady oracle")
	}
	cases := []struct {
		subject, profile, ccai string
		departure              bool
	}{
		{"native", "linux", "cubic", true},
		{"", "", "cubic", true}, // native, default profile linux
		{"native", "linux-3.10", "cubic", false},
		{"native", "linux", "reno", false},
		{"linux", "linux", "cubic", false}, // the kernel's own: docs/bugs
	}
	for _, c := range cases {
		g := &group{Group: Group{
			Condition:   act.TriageCondition{Condition: o.Name, Source: o.Source},
			TriageGroup: act.TriageGroup{CCAI: c.ccai},
			Seed:        &corpus.Seed{Subject: c.subject, Profile: c.profile},
		}}
		g.departure()
		if got := g.ev.Departure != "" && strings.Contains(g.ev.Departure, "follows Linux"); got != c.departure {
			t.Errorf("%s/%s %s: departure %q, want one: %v", c.subject, c.profile, c.ccai, g.ev.Departure, c.departure)
		}
	}
}

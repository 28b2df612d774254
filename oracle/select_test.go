package oracle

import (
	"strings"
	"testing"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/netenv"
)

// TestLibraryCompiles: every oracle compiles on every congestion control
// it applies to on the native subject (or, for an oracle of some subjects
// only, on the first of them), and names a statement and a source.
func TestLibraryCompiles(t *testing.T) {
	bySubject := map[string]netenv.Capabilities{"quic": quicCaps()}
	for _, o := range Library() {
		if o.Statement == "" || o.Source == "" || o.Kind == "" {
			t.Errorf("%s: statement, source and kind are required", o.Name)
		}
		caps, ccas := netenv.NativeCapabilities(), ccai.Names()
		if len(o.Subjects) > 0 {
			var ok bool
			if caps, ok = bySubject[o.Subjects[0]]; !ok {
				t.Fatalf("%s: runs on subject %s, which this test does not know", o.Name, o.Subjects[0])
			}
			ccas = caps.CCAs
		}
		specs, skips := Select(Choice{Names: []string{o.Name}}, caps, ccas, ccai.ProfileLinux)
		if len(specs) == 0 && o.NotOn[caps.Name] == "" && o.NotOn[caps.Name+"/linux"] == "" && o.MinFlows == 0 {
			t.Errorf("%s: no condition on the %s subject (%v)", o.Name, caps.Name, skips)
		}
		for _, sp := range specs {
			for _, cca := range sp.Only {
				if _, err := corpus.Compile([]corpus.ConditionSpec{sp}, corpus.SchemaOf(caps, cca)); err != nil {
					t.Errorf("%s on %s: %v", o.Name, cca, err)
				}
			}
		}
	}
}

// TestEntryBySubject: the native and linux subjects' records enter a
// reduction with its ssthresh (and report CWR's prior_cwnd); on the
// others the reduced ssthresh may come a record later, so the first
// quarter round trip of the reduction counts as its entry.
func TestEntryBySubject(t *testing.T) {
	for _, tc := range []struct {
		subject        string
		lateEntry, cwr bool
		slack          string
	}{
		{"native", false, true, "+ 0"},
		{"linux", false, true, "+ 1"},
		{"gvisor", true, false, "+ 1"},
		{"ns3", false, true, "+ 1"},
	} {
		caps := netenv.NativeCapabilities()
		caps.Name = tc.subject
		specs, _ := Select(Choice{Names: []string{"reduction-bound"}}, caps, []string{"reno"}, ccai.ProfileLinux)
		if len(specs) != 1 {
			t.Fatalf("%s: %d conditions, want 1", tc.subject, len(specs))
		}
		w := specs[0].When
		if got := strings.Contains(w, "since_reduction"); got != tc.lateEntry {
			t.Errorf("%s: a late entry counted: %v, want %v (%s)", tc.subject, got, tc.lateEntry, w)
		}
		if got := strings.Contains(w, `"cwr"`); got != tc.cwr {
			t.Errorf("%s: cwr among the reductions: %v, want %v (%s)", tc.subject, got, tc.cwr, w)
		}
		if !strings.Contains(w, tc.slack) {
			t.Errorf("%s: want slack %q in %s", tc.subject, tc.slack, w)
		}
	}
}

// TestSkipNamesMissingState: an oracle that reads a variable the
// subject does not report is skipped with the variable's name.
func TestSkipNamesMissingState(t *testing.T) {
	caps := netenv.NativeCapabilities()
	caps.Name = "bare"
	caps.Vars = func(string) []ccai.VarDesc { return nil }
	_, skips := Select(Choice{Names: []string{"cubic-target-bound"}}, caps, []string{"cubic"}, ccai.ProfileLinux)
	if len(skips) != 1 || !strings.Contains(skips[0].Why, "needs target, which bare's cubic flows do not report") {
		t.Errorf("skips %+v, want one naming target", skips)
	}
}

// TestNoBetaNoBound: an oracle that bounds a reduction by β (BETA, or
// DEEPER, filled with it) has no condition for a congestion control
// without a declared β (BBR), on any subject. (DEEPER once slipped
// through: reduction-bound judged ns-3's TcpBbr by β = 0.)
func TestNoBetaNoBound(t *testing.T) {
	for _, caps := range []netenv.Capabilities{netenv.NativeCapabilities(), ns3Caps(), {Name: "linux"}} {
		for _, name := range []string{"reduction-bound", "cubic-beta", "reno-half"} {
			specs, _ := Select(Choice{Names: []string{name}}, caps, []string{"bbr", "reno", "cubic"}, ccai.ProfileLinux)
			for _, sp := range specs {
				for _, cca := range sp.Only {
					if cca == "bbr" {
						t.Errorf("%s on %s checks bbr, which declares no β: %s", name, caps.Name, sp.When)
					}
				}
			}
		}
		specs, _ := Select(Choice{Names: []string{"reduction-bound"}}, caps, []string{"bbr", "reno"}, ccai.ProfileLinux)
		if len(specs) != 1 || len(specs[0].Only) != 1 || specs[0].Only[0] != "reno" {
			t.Errorf("reduction-bound on %s for bbr and reno: %+v, want one condition for reno", caps.Name, specs)
		}
	}
}

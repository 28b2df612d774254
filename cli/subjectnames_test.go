package cli

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/actfuzz/actfuzz/netenv"
)

// TestSubjectNamesEverywhere: the one list of subject names
// (netenv.SubjectNames) is every subject the command line opens, and the
// help texts and messages that name subjects list them all: run's and
// sim's --subject, and the worker host's --subject, which serves the
// deterministic ones and says why the others (linux, quic) are not
// distributed.
func TestSubjectNamesEverywhere(t *testing.T) {
	var declared []string
	for _, c := range declaredCapabilities() {
		declared = append(declared, c.Name)
	}
	if !slices.Equal(declared, netenv.SubjectNames()) {
		t.Fatalf("declared subjects %v, netenv.SubjectNames %v", declared, netenv.SubjectNames())
	}
	if _, err := openSubject("bogus"); err == nil || !strings.Contains(err.Error(), "linux or quic") {
		t.Errorf("unknown subject: %v, want the list of subjects", err)
	}
	for _, cmd := range []string{"run", "sim"} {
		_, _, errs := runCLI(context.Background(), cmd, "-h")
		for _, n := range netenv.SubjectNames() {
			if !strings.Contains(errs, n) {
				t.Errorf("%s -h does not name subject %s", cmd, n)
			}
		}
	}
	if !slices.Equal(clusterSubjects(), []string{"native", "ns3", "gvisor"}) {
		t.Errorf("cluster subjects %v, want the deterministic ones: native, ns3, gvisor", clusterSubjects())
	}
	_, _, errs := runCLI(context.Background(), "worker", "--nats", "nats://127.0.0.1:1", "-h")
	for _, want := range []string{"--subject native|ns3|gvisor", "linux and quic run in real time"} {
		if !strings.Contains(errs, want) {
			t.Errorf("worker --nats -h lacks %q:\n%s", want, errs)
		}
	}
	code, _, errs := runCLI(context.Background(), "worker", "--nats", "nats://127.0.0.1:1", "--subject", "quic")
	if code != exitUsage || !strings.Contains(errs, "--subject \"quic\"") || !strings.Contains(errs, "repeat bit for bit") {
		t.Errorf("worker --subject quic: exit %d, want 2 saying why: %s", code, errs)
	}
}

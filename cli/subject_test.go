package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/actfuzz/actfuzz/netenv/ns3"
)

// TestSubjectRefusals: what a subject lacks is bad input (exit 2) at
// start, naming the flag, the field or the condition.
func TestSubjectRefusals(t *testing.T) {
	dir := t.TempDir()
	file := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ns3Names := file("ns3names.yaml", "ccai: [TcpCubic]\nbytes: 100000\nbudget: 2\n")
	cnt := file("cnt.yaml", "ccai: [cubic]\nbudget: 2\nconditions:\n  - {name: c, when: \"cnt > 5\"}\n")
	wc := file("wc.yaml", "ccai: [cubic]\nbytes: 100000\nbudget: 2\noracles: none\nconditions:\n  - {name: c, when: \"w_c > 1e12\"}\n")
	seed := findingSeed(t, dir)
	sb, _ := os.ReadFile(seed)
	old := bytes.Replace(sb, []byte(`"profile": "linux"`), []byte(`"profile": "linux-3.10"`), 1)
	if bytes.Equal(old, sb) {
		t.Fatal("the seed has no profile field to edit")
	}
	gv := file("gvisor310.json", string(bytes.Replace(old, []byte(`"subject": "native"`), []byte(`"subject": "gvisor"`), 1)))
	linux310 := file("native310.json", string(old))
	for _, tc := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"sim profile", []string{"sim", "--subject", "gvisor", "--profile", "linux-3.10"}, 2, "--profile linux-3.10: profile linux-3.10 does not apply to the gvisor subject"},
		{"sim cca", []string{"sim", "--subject", "gvisor", "--cca", "bbr"}, 2, `--cca: unknown congestion control "bbr" for the gvisor subject`},
		{"run own names on native", []string{"run", ns3Names, "--isolate=false", "--quiet", "--out", filepath.Join(dir, "o1")}, 2, `ns3names.yaml:1: ccai: unknown congestion control "TcpCubic" for the native subject`},
		{"hint the subject that fits", []string{"run", ns3Names, "--isolate=false", "--quiet", "--out", filepath.Join(dir, "o1")}, 2, "; it runs as it is with --subject ns3"},
		{"hint both subjects that fit", []string{"run", wc, "--isolate=false", "--quiet", "--out", filepath.Join(dir, "o5")}, 2, "; it runs as it is with --subject gvisor\n"},
		{"run variable gVisor lacks", []string{"run", cnt, "--subject", "gvisor", "--isolate=false", "--quiet", "--out", filepath.Join(dir, "o2")}, 2, `condition "c" reads cnt: the gvisor subject does not provide cnt for cubic`},
		{"run gVisor's own variable", []string{"run", wc, "--subject", "gvisor", "--isolate=false", "--quiet", "--out", filepath.Join(dir, "o3")}, 0, "no findings"},
		{"run gVisor's variable on native", []string{"run", wc, "--isolate=false", "--quiet", "--out", filepath.Join(dir, "o4")}, 2, `reads w_c: the native subject does not provide w_c`},
		{"replay profile on gVisor", []string{"replay", gv}, 2, "gvisor310.json: profile linux-3.10 does not apply to the gvisor subject"},
		{"diff profile vs gVisor", []string{"diff", linux310, "--vs", "gvisor"}, 2, "--vs gvisor: " + linux310 + ": profile linux-3.10"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCLI(context.Background(), tc.args...)
			if code != tc.code || !strings.Contains(out+errs, tc.msg) {
				t.Errorf("%v: exit %d, stdout %q, stderr %q; want %d mentioning %q", tc.args, code, out, errs, tc.code, tc.msg)
			}
		})
	}
}

// TestSubjectRefusalsNS3 needs ns-3 (make ns3); it skips without it.
func TestSubjectRefusalsNS3(t *testing.T) {
	s, err := openSubject("ns3")
	if errors.Is(err, ns3.ErrNotInstalled) {
		t.Skipf("ns-3 is not installed: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	closeSubject(s)
	dir := t.TempDir()
	file := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	own := file("own.yaml", "ccai: [TcpCubic]\nbytes: 100000\nbudget: 2\nconditions:\n  - {name: c, when: \"cwnd > 1e9\"}\n")
	lot := file("lot.yaml", "ccai: [cubic, reno]\ntopology: parking-lot\nbudget: 2\n")
	target := file("target.yaml", "ccai: [TcpCubic]\nbudget: 2\nconditions:\n  - {name: t, when: \"target > 2*cwnd\"}\n")
	for _, tc := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"own names", []string{"run", own, "--subject", "ns3", "--isolate=false", "--quiet", "--out", filepath.Join(dir, "o1")}, 0, "act on TcpCubic"},
		{"parking-lot", []string{"run", lot, "--subject", "ns3", "--isolate=false", "--quiet", "--out", filepath.Join(dir, "o2")}, 2, `lot.yaml:2: topology: the ns3 subject cannot build topology "parking-lot"`},
		{"native-only variable", []string{"run", target, "--subject", "ns3", "--isolate=false", "--quiet", "--out", filepath.Join(dir, "o3")}, 2, "reads target: the ns3 subject does not provide target for TcpCubic"},
		{"sim profile", []string{"sim", "--subject", "ns3", "--profile", "linux-3.10"}, 2, "--profile linux-3.10: profile linux-3.10 does not apply to the ns3 subject"},
		{"sim own name", []string{"sim", "--subject", "ns3", "--cca", "TcpBbr", "--bytes", "100000"}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCLI(context.Background(), tc.args...)
			if code != tc.code || !strings.Contains(out+errs, tc.msg) {
				t.Errorf("%v: exit %d, stdout %q, stderr %q; want %d mentioning %q", tc.args, code, out, errs, tc.code, tc.msg)
			}
		})
	}
}

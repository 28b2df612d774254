package ns3

import (
	"bufio"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/actfuzz/actfuzz/netenv"
)

// TestPhaseParamsAreRows checks that every mapped parameter is a row of
// netenv's table, once, and that a PHASE line carries them all.
func TestPhaseParamsAreRows(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range phaseParams {
		if netenv.ParamIndex(p.param) < 0 || seen[p.param] {
			t.Fatalf("mapping %q: not a row of the table, or mapped twice", p.param)
		}
		seen[p.param] = true
	}
	ph := netenv.Phase{Env: netenv.DefaultEnv(), Until: 5e8}
	line := string(appendPhase(nil, &ph))
	want := "PHASE 500000000 loss=0.0001 bw_bps=10000000 delay_ns=20000000 qshape=0 qscale_ms=0 app_bps=0 buffer=100 aqm=droptail codel_target_ns=5000000 codel_interval_ns=100000000 ecn=0\n"
	if line != want {
		t.Fatalf("PHASE line\n got %q\nwant %q", line, want)
	}
}

// TestDriverRefusesUnknownPhaseKeys checks the driver's side of the
// mapping: a key it does not know, a missing one or a repeated one is an
// ERR, never a parameter silently ignored or defaulted.
func TestDriverRefusesUnknownPhaseKeys(t *testing.T) {
	path, err := FindDriver()
	if err != nil {
		t.Skipf("ns-3 driver not built (make ns3): %v", err)
	}
	cmd := exec.Command(path)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	rd := bufio.NewReader(out)
	if hello, err := rd.ReadString('\n'); err != nil || !strings.HasPrefix(hello, fmt.Sprintf("HELLO actfuzz-ns3 %d ", ProtocolVersion)) {
		t.Fatalf("HELLO: %q, %v", hello, err)
	}
	good := "loss=0 bw_bps=10000000 delay_ns=20000000 qshape=0 qscale_ms=0 app_bps=0 buffer=100 aqm=red codel_target_ns=5000000 codel_interval_ns=100000000 ecn=0"
	for _, tc := range []struct{ phase, want string }{
		{good + " ecn_k=20", "unknown PHASE parameter ecn_k"},
		{good + " policer_rate=5", "unknown PHASE parameter policer_rate"},
		{strings.Replace(good, " ecn=0", "", 1), "PHASE lacks parameter ecn"},
		{strings.Replace(good, "aqm=red", "aqm=pie", 1), "PHASE parameter aqm: malformed value"},
		{strings.Replace(good, "ecn=0", "ecn=2", 1), "PHASE parameter ecn: malformed value"},
		{strings.Replace(good, "codel_target_ns=5000000", "codel_target_ns=0", 1), "PHASE parameter codel_target_ns: malformed value"},
		{strings.Replace(good, " buffer=100", "", 1), "PHASE lacks parameter buffer"},
		{good + " loss=0.1", "PHASE parameter loss given twice"},
		{strings.Replace(good, "bw_bps=10000000", "bw_bps=fast", 1), "PHASE parameter bw_bps: malformed value"},
		{"", "aqm must be the same in every phase"},
	} {
		req := "RUN x1 1 1 1000000000 1000000 1 1\nFLOW TcpLinuxReno 10000\nPHASE 0 " + tc.phase + "\n"
		if tc.phase == "" {
			// Two phases with different queue discs: one root disc per run.
			req = "RUN x1 1 1 1000000000 1000000 1 2\nFLOW TcpLinuxReno 10000\nPHASE 1000 " + good +
				"\nPHASE 0 " + strings.Replace(good, "aqm=red", "aqm=codel", 1) + "\n"
		}
		if _, err := in.Write([]byte(req)); err != nil {
			t.Fatal(err)
		}
		ans, err := rd.ReadString('\n')
		if err != nil || ans != "ERR x1 "+tc.want+"\n" {
			t.Fatalf("PHASE %q: answer %q (%v), want ERR %q", tc.phase, ans, err, tc.want)
		}
	}
}

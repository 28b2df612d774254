package symbolic

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseScenarioErrors(t *testing.T) {
	base := `name: x
end_s: 2
topology:
  nodes: 2
  links: [{a: 0, b: 1, bw: 1, delay: 1}]
  cbr: [{src: 0, dst: 1, packet_bytes: 100, rate: 0.1, start_s: 0, stop_s: 1}]
window: {flow: 0, last: 2, lo_ms: 1, hi_ms: 8}
`
	if _, err := ParseScenario([]byte(base)); err != nil {
		t.Fatalf("base scenario: %v", err)
	}
	for _, c := range []struct{ edit, want string }{
		{"window: {flow: 0, last: 2, lo_ms: 1, hi_ms: 8, color: red}", "color"},
		{"end_sec: 3", "end_sec"},
		{"window: {flow: 0, last: 2, lo_ms: 1, hi_ms: 8, hop: [1, 0]}", "window.hop"},
		{"window: {flow: 3, last: 2, lo_ms: 1, hi_ms: 8}", "window.flow"},
		{"window: {flow: 0, last: 9, lo_ms: 1, hi_ms: 8}", "window.n"},
		{"window: {flow: 0, last: 2, lo_ms: 1, hi_ms: 8, kind: fin}", "window.kind"},
		{"window: {flow: 0, last: 2, lo_ms: 9, hi_ms: 8}", "window"},
		{"metrics: [goodput]", "metrics"},
		{"conditions: [{name: c, when: 'flow0.nope > 1'}]", "condition \"c\""},
	} {
		var doc string
		switch {
		case strings.HasPrefix(c.edit, "window:"):
			doc = strings.Replace(base, "window: {flow: 0, last: 2, lo_ms: 1, hi_ms: 8}", c.edit, 1)
		default:
			doc = base + c.edit + "\n"
		}
		_, err := ParseScenario([]byte(doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %q", c.edit, err, c.want)
		}
	}
	tcp := `end_s: 10
tcp: {flows: [{cca: nosuch, bytes: 100000}], env: {bw: 1, delay: 5}}
window: {last: 1, lo_ms: 1, hi_ms: 4}
`
	if _, err := ParseScenario([]byte(tcp)); err == nil || !strings.Contains(err.Error(), "tcp.flows[0].cca") {
		t.Errorf("unknown CCA: %v", err)
	}
	syn := strings.Replace(strings.Replace(tcp, "nosuch", "reno", 1), "last: 1", "kind: syn-ack", 1)
	if _, err := ParseScenario([]byte(syn)); err == nil || !strings.Contains(err.Error(), "handshake") {
		t.Errorf("syn-ack: %v", err)
	}
}

// TestEncodeScenarioRoundTrip: encoding and parsing gives the same
// exploration, and replaying a branch's witness on the default heap gives
// the branch's outcome.
func TestEncodeScenarioRoundTrip(t *testing.T) {
	ties, err := LoadScenario("testdata/ties.yaml")
	if err != nil {
		t.Fatal(err)
	}
	fin := TCPBulk(1, 32*time.Millisecond)
	fin.Window.Select, fin.Window.Kind = "kind", "fin"
	synAck := handshakeTCP(Window{N: 1, Select: "kind", Kind: "syn-ack", Lo: 900 * time.Millisecond, Hi: 1100 * time.Millisecond}, 5*time.Second, "cwnd", "syn_retransmits")
	acks := handshakeTCP(Window{N: 2, Select: "kind", Kind: "ack", From: 32, Lo: time.Millisecond, Hi: 16 * time.Millisecond}, 190*time.Millisecond, "cwnd", "done")
	acks.TCP.Handshake = false
	for k, sc := range []*Scenario{UDP4(2, time.Millisecond, 64*time.Millisecond), TCPBulk(2, 32*time.Millisecond), ties, fin, synAck, acks} {
		var b []byte
		var back *Scenario
		var err error
		if k%2 == 0 {
			b, err = EncodeScenario(sc)
			if err == nil {
				back, err = ParseScenario(b)
			}
		} else {
			b, err = ScenarioJSON(sc)
			if err == nil {
				back, err = ParseScenarioJSON(b)
			}
		}
		if err != nil {
			t.Fatalf("%s: %v\n%s", sc.Name, err, b)
		}
		red, _ := ParseReductions("SCI")
		r1, err1 := Explore(context.Background(), sc, Options{Reductions: red})
		r2, err2 := Explore(context.Background(), back, Options{Reductions: red})
		if err1 != nil || err2 != nil || r1.Branches != r2.Branches || strings.Join(r1.Outcomes, "|") != strings.Join(r2.Outcomes, "|") {
			t.Fatalf("%s: round trip changed the exploration (%v %v)\n%s", sc.Name, err1, err2, b)
		}
		for i, b := range r1.BranchList {
			if i%5 != 0 {
				continue
			}
			out, err := Replay(context.Background(), back, b.Witness, nil)
			if err != nil || out.Outcome != b.Outcome {
				t.Errorf("%s: replaying branch %d's witness %v: %+v, %v; want %q", sc.Name, b.ID, b.Witness, out, err, b.Outcome)
			}
		}
	}
}

func TestMain_CLI(t *testing.T) {
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := Main(context.Background(), args, &out, &errb)
		return code, out.String(), errb.String()
	}
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"--n", "0"}, "--n"},
		{[]string{"--n", "9"}, "--n"},
		{[]string{"--reductions", "SQ"}, "--reductions"},
		{[]string{"--scenario", "udp5"}, "--scenario"},
		{[]string{"--lo", "-1"}, "--lo"},
		{[]string{"--hi", "5", "--dmax", "6"}, "--dmax"},
		{[]string{"--granularity", "link"}, "--granularity"},
		{[]string{"--res", "0"}, "--res"},
		{[]string{"--max-branches", "0"}, "--max-branches"},
		{[]string{"--bogus"}, "bogus"},
		{[]string{"a.yaml", "b.yaml"}, "one scenario file"},
		{[]string{"--reductions", "SCIH"}, "--reductions"},
		{[]string{"--scenario", "tcp-bulk", "--reductions", "SCH"}, "--reductions"},
	} {
		code, _, msg := run(c.args...)
		if code != ExitUsage || !strings.Contains(msg, c.flag) {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming %s", c.args, code, msg, c.flag)
		}
	}
	code, out, msg := run("--scenario", "udp4", "--n", "2", "--reductions", "SCI", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, msg)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"branches", "comparisons", "outcomes", "branch_list", "extremes"} {
		if _, ok := rep[k]; !ok {
			t.Errorf("--json lacks %q", k)
		}
	}
	if rep["branches"].(float64) < 2 {
		t.Errorf("branches = %v", rep["branches"])
	}
	code, out, msg = run("--branches", "testdata/ties.yaml")
	if code != 0 || !strings.Contains(out, "branches ") || !strings.Contains(out, "#0 d=(") {
		t.Fatalf("scenario file: exit %d\n%s\n%s", code, out, msg)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("end_s: 1\nwindow: {last: 1, lo_ms: 1, hi_ms: 2}\ntopology: {nodes: 2, lnks: []}\n"), 0o644)
	if code, _, msg := run(bad); code != ExitUsage || !strings.Contains(msg, "lnks") {
		t.Errorf("bad file: exit %d, %q", code, msg)
	}
}

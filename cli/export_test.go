package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// actfuzz export --pkt: 0 with the script written (which actfuzz pkt
// passes), 1 when the model does not reach the finding, 2 naming what the
// script cannot express or the missing flag.
func TestExportExit(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile("../corpus/pktexport/testdata/cubic-ssthresh-steady.json")
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, edit func(m map[string]any)) string {
		var m map[string]any
		dec := json.NewDecoder(strings.NewReader(string(src)))
		dec.UseNumber() // the seed is a uint64
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		edit(m)
		b, _ := json.Marshal(m)
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.json", func(map[string]any) {})
	ns3 := write("ns3.json", func(m map[string]any) { m["subject"] = "ns3" })
	two := write("two.json", func(m map[string]any) { m["ccai"] = []string{"cubic", "cubic"} })
	late := write("late.json", func(m map[string]any) {
		f := m["finding"].(map[string]any)
		ns, _ := f["time_ns"].(json.Number).Int64()
		f["time_ns"] = ns + 1e9
	})
	out := filepath.Join(dir, "out", "good.pkt")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{good, "--pkt", "--out", out}, exitOK, "wrote " + out},
		{[]string{good}, exitUsage, "--pkt: missing"},
		{[]string{ns3, "--pkt", "--out", "-"}, exitUsage, `subject "ns3"`},
		{[]string{two, "--pkt", "--out", "-"}, exitUsage, "ccai: 2 flows"},
		{[]string{late, "--pkt", "--out", "-"}, exitFound, "does not reach the finding"},
		{[]string{filepath.Join(dir, "none.json"), "--pkt"}, exitUsage, "none.json"},
	} {
		code, stdout, stderr := runCLI(context.Background(), append([]string{"export"}, tc.args...)...)
		if code != tc.code || !strings.Contains(stdout+stderr, tc.want) {
			t.Errorf("%v: exit %d, want %d with %q:\n%s%s", tc.args, code, tc.code, tc.want, stdout, stderr)
		}
	}
	code, stdout, stderr := runCLI(context.Background(), "pkt", out, "--profile", "linux")
	if code != exitOK {
		t.Errorf("actfuzz pkt of the exported script: exit %d:\n%s%s", code, stdout, stderr)
	}
}

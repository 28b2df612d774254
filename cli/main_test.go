package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func TestSimExitCodes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"sim", "--bw", "-1"}, 2, "--bw"},
		{[]string{"sim", "--loss", "1.5"}, 2, "--loss"},
		{[]string{"sim", "--cca", "nope"}, 2, "--cca"},
		{[]string{"sim", "--profile", "bsd"}, 2, "--profile"},
		{[]string{"sim", "--seed", "x"}, 2, "-seed"},
		{[]string{"nosuch"}, 2, "unknown command"},
		{[]string{"run", "--method", "x"}, 2, "--method"},
		{[]string{"replay", "/nonexistent.json"}, 2, "nonexistent"},
	} {
		var out, errb bytes.Buffer
		code := dispatch(context.Background(), tc.args, &out, &errb)
		if code != tc.code || !strings.Contains(errb.String(), tc.msg) {
			t.Errorf("%v: exit %d, stderr %q; want %d mentioning %q", tc.args, code, errb.String(), tc.code, tc.msg)
		}
	}
}

func TestSimJSONSummary(t *testing.T) {
	var out, errb bytes.Buffer
	if code := dispatch(context.Background(), []string{"sim", "--bytes", "1000000", "--json"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var m map[string]any
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"cca", "sim_time_s", "wall_s", "events", "segments_sent", "retransmits", "timeouts", "delivered_bytes", "capped", "trace_sha256", "final"} {
		if _, ok := m[k]; !ok {
			t.Errorf("summary lacks %q", k)
		}
	}
	final := m["final"].(map[string]any)
	for _, k := range []string{"cwnd", "ssthresh", "srtt_ms", "rttvar_ms", "ca_state"} {
		if _, ok := final[k]; !ok {
			t.Errorf("final lacks %q", k)
		}
	}
}

// TestSymSeedsReplay: `actfuzz sym --seeds DIR` writes seeds that `actfuzz
// replay` reproduces, with a trace and a plot.
func TestSymSeedsReplay(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	ctx := context.Background()
	if code := dispatch(ctx, []string{"sym", "--scenario", "udp4", "--n", "2", "--hi", "64", "--seeds", dir, "--json"}, &out, &errb); code != 0 {
		t.Fatalf("sym exit %d: %s", code, errb.String())
	}
	seeds, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(seeds) == 0 {
		t.Fatalf("no seeds in %s (stderr %q)", dir, errb.String())
	}
	for _, s := range seeds {
		out.Reset()
		errb.Reset()
		trace := filepath.Join(dir, "replay.csv")
		if code := dispatch(ctx, []string{"replay", s, "--trace", trace, "--plot", filepath.Join(dir, "replay.png")}, &out, &errb); code != 0 {
			t.Errorf("replay %s: exit %d: %s%s", s, code, out.String(), errb.String())
		}
		if !strings.HasPrefix(out.String(), "reproduced: branch") {
			t.Errorf("replay %s: %q", s, out.String())
		}
	}
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"minimize", seeds[0]}, "witness seed"},
		{[]string{"sym", "--seeds-every-branch"}, "--seeds"},
		{[]string{"sym", "--table", "--seeds", dir}, "--seeds"},
	} {
		errb.Reset()
		if code := dispatch(ctx, tc.args, &out, &errb); code != 2 || !strings.Contains(errb.String(), tc.msg) {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming %q", tc.args, code, errb.String(), tc.msg)
		}
	}
}

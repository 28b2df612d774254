package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportCommand: run writes the report and prints its path; `report
// DIR` rewrites it (0), and refuses a missing argument or a directory that
// holds no campaign (2, naming DIR).
func TestReportCommand(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "camp")
	code, stdout, errs := runCLI(context.Background(), "run", tinyCampaign(t, dir, "cwnd >= 1"), "--out", out, "--isolate=false", "--quiet")
	if code != exitFound {
		t.Fatalf("run: exit %d, want 1: %s", code, errs)
	}
	page := filepath.Join(out, "report", "index.html")
	if !strings.Contains(stdout, "report: "+page) {
		t.Errorf("run does not print the report's path %s:\n%s", page, stdout)
	}
	if _, err := os.Stat(page); err != nil {
		t.Fatalf("run wrote no report: %v", err)
	}
	if err := os.Remove(page); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	for _, tc := range []struct {
		args    []string
		code    int
		stdout  string
		stderr  string
		written bool
	}{
		{[]string{"report", out}, exitOK, page, "", true},
		{[]string{"report"}, exitUsage, "", "usage: actfuzz report DIR", false},
		{[]string{"report", filepath.Join(dir, "nope")}, exitUsage, "", "DIR " + filepath.Join(dir, "nope"), false},
		{[]string{"report", empty}, exitUsage, "", "DIR " + empty, false},
		{[]string{"report", out, "--method", "fuzz"}, exitUsage, "", "--method", false},
		{[]string{"report", out, "--method", "ran"}, exitUsage, "", "no checkpoint of method \"ran\"", false},
	} {
		code, stdout, stderr := runCLI(context.Background(), tc.args...)
		if code != tc.code || !strings.Contains(stdout, tc.stdout) || !strings.Contains(stderr, tc.stderr) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %d, %q, %q", tc.args, code, stdout, stderr, tc.code, tc.stdout, tc.stderr)
		}
		if _, err := os.Stat(page); (err == nil) != tc.written {
			t.Errorf("%v: report written: %v, want %v", tc.args, err == nil, tc.written)
		}
		os.Remove(page) // for the next case

	}
}

// TestCompareOut: compare --out keeps every method's campaign and writes
// a report that shows ACT against the baselines.
func TestCompareOut(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cmp")
	var out, errb bytes.Buffer
	code := dispatch(context.Background(), []string{"compare", "--budget", "32", "--methods", "act,ran", "--isolate=false", "--out", dir, "--quiet"}, &out, &errb)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	page, err := os.ReadFile(filepath.Join(dir, "report", "index.html"))
	if err != nil || !strings.Contains(out.String(), "report: "+filepath.Join(dir, "report", "index.html")) {
		t.Fatalf("report: %v; output %q", err, out.String())
	}
	for _, m := range []string{"act", "ran"} {
		if _, err := os.Stat(filepath.Join(dir, "coverage", "checkpoint-"+m+".gob")); err != nil {
			t.Errorf("no checkpoint of %s: %v", m, err)
		}
		if !strings.Contains(string(page), ">"+m+"<") {
			t.Errorf("the report does not name %s", m)
		}
	}
	// A second compare into the same directory is refused, not mixed in.
	if code := dispatch(context.Background(), []string{"compare", "--budget", "32", "--out", dir, "--quiet"}, &out, &errb); code != exitUsage {
		t.Fatalf("compare into a used --out: exit %d", code)
	}
}

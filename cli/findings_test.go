package cli

import (
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/actfuzz/actfuzz/corpus"
)

// TestRunSummaryCommandsRun: the summary at the end of a run prints each
// top group's replay command, and each runs as printed; `replay --trace
// FILE.csv.gz` writes the whole trace, of which the stored one keeps a
// window: as many records as the seed says the simulation wrote.
func TestRunSummaryCommandsRun(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "o")
	code, stdout, errs := runCLI(context.Background(), "run", tinyCampaign(t, dir, "cwnd >= 1"), "--out", out, "--isolate=false", "--quiet")
	if code != exitFound {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var seeds []string
	for _, line := range strings.Split(stdout, "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[1] != "replay" {
			continue
		}
		seeds = append(seeds, f[2])
		if code, o, e := runCLI(context.Background(), f[1:]...); code != exitOK || !strings.HasPrefix(o, "reproduced: ") {
			t.Errorf("%s: exit %d, %s%s", line, code, o, e)
		}
	}
	if len(seeds) == 0 {
		t.Fatalf("no replay command printed:\n%s", stdout)
	}
	for _, tc := range []struct{ file, magic string }{{"whole.csv.gz", "\x1f\x8b"}, {"whole.csv", "time_s,"}} {
		trace := filepath.Join(dir, tc.file)
		if code, o, e := runCLI(context.Background(), "replay", seeds[0], "--trace", trace); code != exitOK {
			t.Fatalf("replay --trace %s: exit %d, %s%s", tc.file, code, o, e)
		}
		b, err := os.ReadFile(trace)
		if err != nil || !strings.HasPrefix(string(b), tc.magic) {
			t.Fatalf("%s: %q…, %v", tc.file, b[:min(len(b), 8)], err)
		}
		var r io.Reader = strings.NewReader(string(b))
		if strings.HasSuffix(tc.file, ".gz") {
			if r, err = gzip.NewReader(r); err != nil {
				t.Fatal(err)
			}
		}
		all, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		s, err := corpus.ReadSeed(seeds[0])
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(all), "\n") - 1; s.Finding.Trace == nil || n != s.Finding.Trace.Records {
			t.Errorf("%s: %d records, the seed's trace says %+v", tc.file, n, s.Finding.Trace)
		}
	}
}

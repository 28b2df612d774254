package act

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// status.json appears during the run, every StatusEvery, not only at the
// checkpoints and the end.
func TestStatusWrittenDuringRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for StatusEvery")
	}
	c := smallCampaign(t)
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	seen := false
	opt := Options{Out: out, Budget: 1 << 30, Workers: 1, CheckpointEvery: time.Hour, Progress: func(Status) {
		if _, err := os.Stat(filepath.Join(out, "status.json")); err == nil {
			seen = true
			cancel()
		}
		if time.Since(start) > 4*StatusEvery {
			cancel()
		}
	}}
	if _, err := Run(ctx, c, opt); err != nil {
		t.Fatal(err)
	}
	if !seen {
		t.Errorf("no status.json within %v of a run whose checkpoints are an hour apart", 4*StatusEvery)
	}
}

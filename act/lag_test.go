package act

import (
	"context"
	"testing"

	"github.com/actfuzz/actfuzz/internal/race"
)

// The lag is a setting results depend on, recorded in the checkpoint: a
// run resumed without it continues with the checkpoint's, and ends as the
// uninterrupted run with that lag (not as one with the default).
func TestLagRecordedInCheckpoint(t *testing.T) {
	if race.Enabled {
		t.Skip("under -race: the same concurrent code: two-worker in-process campaigns resumed from a checkpoint, as TestDurationStopsMidBatchInProcess runs under -race; the lag is a setting, not concurrency")
	}
	c := smallCampaign(t)
	const budget = 448
	run := func(lag int) string {
		rep, err := Run(context.Background(), c, Options{Budget: budget, Workers: 2, Lag: lag})
		if err != nil {
			t.Fatal(err)
		}
		return outcome(rep, nil)
	}
	lag3, lag2 := run(3), run(DefaultLag)
	if lag3 == lag2 {
		t.Fatalf("lag 3 and lag %d give the same results: the test cannot tell them apart", DefaultLag)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := Run(ctx, c, Options{Budget: budget, Workers: 2, Lag: 3, Out: dir, CheckpointEvery: 1,
		Progress: func(st Status) {
			if st.Sims >= 192 {
				cancel()
			}
		}}); err != nil {
		t.Fatal(err)
	}
	info, err := ReadCheckpoint(dir, "act")
	if err != nil {
		t.Fatal(err)
	}
	if info.Lag != 3 {
		t.Fatalf("checkpoint lag %d, want 3", info.Lag)
	}
	rep, err := Run(context.Background(), c, Options{Budget: budget, Workers: 1, Out: dir, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := outcome(rep, nil); got != lag3 {
		t.Fatalf("resumed:\n%s\nuninterrupted, lag 3:\n%s", got, lag3)
	}
}

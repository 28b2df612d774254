package act

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A campaign reports its status and writes status.json when it starts,
// before a simulation has ended (a batch of 64 can take a minute on a
// loaded machine), and status.json keeps the fields docs/status.md names.
func TestStatusBeforeFirstBatch(t *testing.T) {
	c := smallCampaign(t)
	out := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var first *Status
	var firstFile liveStatus
	opt := Options{Out: out, Budget: 1 << 30, Workers: 1, CheckpointEvery: time.Hour, Progress: func(st Status) {
		if first != nil {
			return
		}
		first = &st
		b, err := os.ReadFile(filepath.Join(out, "status.json"))
		if err == nil {
			err = json.Unmarshal(b, &firstFile)
		}
		if err != nil {
			t.Errorf("status.json at the first status: %v", err)
		}
		cancel()
	}}
	if _, err := Run(ctx, c, opt); err != nil {
		t.Fatal(err)
	}
	if first == nil {
		t.Fatal("no status reported")
	}
	if first.Sims != 0 || first.Budget != 1<<30 {
		t.Errorf("first status: sims %d budget %d, want 0 and %d", first.Sims, first.Budget, 1<<30)
	}
	if firstFile.Done || firstFile.Simulated != 0 || firstFile.Budget != 1<<30 || firstFile.ETAS != -1 {
		t.Errorf("first status.json: %+v, want not done, 0 simulated of %d, eta -1 (unknown)", firstFile, 1<<30)
	}
}

func TestStatusLeft(t *testing.T) {
	for _, tc := range []struct {
		name string
		st   Status
		want time.Duration
		ok   bool
	}{
		{"no simulation ended yet", Status{Budget: 2000}, 0, false},
		{"budget at the rate so far", Status{Sims: 100, SimsPerS: 10, Budget: 2000}, 190 * time.Second, true},
		{"duration ends first", Status{Sims: 100, SimsPerS: 1, Budget: 2000, Elapsed: time.Minute, Duration: 2 * time.Minute}, time.Minute, true},
		{"budget ends first", Status{Sims: 100, SimsPerS: 10, Budget: 200, Elapsed: time.Minute, Duration: time.Hour}, 10 * time.Second, true},
		{"duration only, no rate yet", Status{Elapsed: time.Minute, Duration: 2 * time.Minute}, time.Minute, true},
		{"duration past", Status{Sims: 1, SimsPerS: 1, Budget: 10, Elapsed: 3 * time.Minute, Duration: 2 * time.Minute}, 0, true},
		{"budget spent", Status{Sims: 10, SimsPerS: 1, Budget: 10}, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := tc.st.Left()
			if ok != tc.ok || (ok && got != tc.want) {
				t.Errorf("Left() = %v, %v; want %v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

package act

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/actfuzz/actfuzz/corpus"
)

// A campaign over a trace file of the user's: the file is read relative
// to the campaign, isolated workers get its content from the header (they
// give the in-process results), a finding's seed carries it and replays
// from anywhere, and a resume after the file changed is refused.
func TestCampaignUserLinkTrace(t *testing.T) {
	dir := t.TempDir()
	lte, err := os.ReadFile("../netenv/linktrace/traces/lte.trace")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mine.trace"), lte, 0o644); err != nil {
		t.Fatal(err)
	}
	src := []byte(`ccai: [bbr]
bytes: 1000000
link_traces: [mine.trace]
params:
  link_trace: {values: [user1, steady]}
  link_trace_scale: {min: 0.25, max: 2, step: 0.05}
  delay: {min: 5, max: 100, step: 1}
conditions:
  - {name: slow, when: 'srtt > 150'}
`)
	path := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(path, src, 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := LoadCampaign(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.LinkTraces) != 1 || c.LinkTraces[0].Name != "mine.trace" {
		t.Fatalf("link traces %v", c.LinkTraces)
	}
	const budget = 64
	ref, err := Run(context.Background(), c, Options{Budget: budget, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	iso, err := Run(context.Background(), c, Options{Budget: budget, Workers: 2, Isolate: true})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := outcome(ref, nil), outcome(iso, nil); a != b {
		t.Fatalf("isolated:\n%s\nin-process:\n%s", b, a)
	}
	var seed *corpus.Seed
	for _, g := range ref.Findings {
		for _, ph := range g.Seed.Schedule {
			if ph.Env.Trace.String() == "user1" {
				seed = g.Seed
			}
		}
	}
	if seed == nil {
		t.Fatalf("no finding ran over user1 in %d simulations: %s", budget, outcome(ref, nil))
	}
	if err := os.Remove(filepath.Join(dir, "mine.trace")); err != nil {
		t.Fatal(err)
	}
	sp := filepath.Join(t.TempDir(), "seed.json")
	if err := seed.Write(sp); err != nil {
		t.Fatal(err)
	}
	back, err := corpus.ReadSeed(sp)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := corpus.Replay(context.Background(), back, nil)
	if err != nil || !rr.Reproduced {
		t.Fatalf("replay without the file: %+v, %v", rr, err)
	}

	// Another file under the same name: not the campaign a checkpoint was
	// written for.
	if err := os.WriteFile(filepath.Join(dir, "mine.trace"), lte[:len(lte)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	c2, err := LoadCampaign(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.sum() == c2.sum() {
		t.Error("a changed trace file leaves the campaign's sum as it was")
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(src), "mine.trace", "gone.trace", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCampaign(path); err == nil || !strings.Contains(err.Error(), "link_traces[0]") {
		t.Errorf("a missing trace file: %v", err)
	}
}

//go:build gofuzz

package fuzz

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/netenv"
)

// The go-fuzz entry point without go-fuzz: go test -tags gofuzz ./fuzz
func TestGoFuzzHarness(t *testing.T) {
	dir := t.TempDir()
	camp := filepath.Join(dir, "c.yaml")
	src := "ccai: [cubic]\nbytes: 5000000\nconditions:\n  - {name: big-cwnd, when: \"cwnd > 900\"}\n"
	if err := os.WriteFile(camp, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(dir, "work", "regions.bin")
	t.Setenv("ACTFUZZ_CAMPAIGN", camp)
	t.Setenv("ACTFUZZ_REGIONS", store)
	c, err := act.LoadCampaign(camp)
	if err != nil {
		t.Fatal(err)
	}
	lossy := netenv.DefaultEnv()
	lossy.Loss = 0.01
	in := Encode(c, act.Config{Seed: 1, Schedule: netenv.Constant(lossy)})
	if got := Fuzz(in); got != 1 {
		t.Fatalf("first input returned %d, want 1 (new regions)", got)
	}
	if got := Fuzz(in); got != 0 {
		t.Fatalf("the same input again returned %d, want 0", got)
	}
	fast := netenv.DefaultEnv()
	fast.BW, fast.Delay, fast.Loss, fast.Buffer = 1000, 100, 0, 10000
	hit := Encode(c, act.Config{Seed: 1, Schedule: netenv.Constant(fast)})
	func() {
		defer func() {
			p := recover()
			if p == nil {
				t.Fatal("a condition hit did not panic")
			}
			if msg := p.(string); !strings.HasPrefix(msg, "actfuzz finding: condition big-cwnd\n") {
				t.Fatalf("panic message %q", msg)
			}
		}()
		Fuzz(hit)
	}()
	if _, err := os.Stat(store); err != nil {
		t.Fatalf("the region store was not saved beside the workdir: %v", err)
	}
}

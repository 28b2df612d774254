package pkt

import (
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/actfuzz/actfuzz/ccai" // the registry's algorithms
)

// TestSuiteReport runs every suite script and logs its outcome (go test -v).
func TestSuiteReport(t *testing.T) {
	counts := map[string]map[Status]int{}
	for _, f := range suiteScripts(t) {
		r := RunFile(f, Config{})
		rel, _ := filepath.Rel(suiteDir, f)
		topic, _, _ := strings.Cut(rel, "/")
		if counts[topic] == nil {
			counts[topic] = map[Status]int{}
		}
		counts[topic][r.Status]++
		if r.Status == BadScript {
			t.Errorf("%s: %v", rel, r)
		}
		t.Logf("%-60s %v", rel, r)
	}
	for topic, c := range counts {
		t.Logf("%-20s pass %d fail %d unsupported %d", topic, c[Pass], c[Fail], c[Unsupported])
	}
}

package triage

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return filepath.Dir(p)
	}
	notDir := filepath.Join(write("plain/file", "x"), "file")
	noYAML := write("noyaml/findings.json", `{"method":"act","sims":1,"conditions":[]}`)
	badJSON := write("badjson/findings.json", `{"method":`)
	write("badjson/campaign.yaml", "ccai: [reno]\n")
	notFindings := write("other/findings.json", `{"x": 1}`)
	write("other/campaign.yaml", "ccai: [reno]\n")
	tests := []struct{ name, dir, want string }{
		{"missing", filepath.Join(dir, "none"), "DIR"},
		{"a file", notDir, "not a directory"},
		{"no campaign.yaml", noYAML, "campaign.yaml"},
		{"malformed findings.json", badJSON, "findings.json"},
		{"findings.json of something else", notFindings, "findings.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(tt.dir)
			var bad *BadInputError
			if !errors.As(err, &bad) {
				t.Fatalf("Load(%s) = %v, want a BadInputError", tt.dir, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not name %q", err, tt.want)
			}
		})
	}
}

func TestLoadNoFindingsYet(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "campaign.yaml"), []byte("ccai: [reno]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(dir)
	if err != nil || len(c.Groups) != 0 {
		t.Fatalf("Load = %+v, %v; want a campaign without groups", c, err)
	}
}

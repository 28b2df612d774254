package corpus

import (
	"runtime/debug"
	"strings"
	"testing"
)

// programVersion names the program, its revision and the actfuzz it was
// built with, and never the path of the machine's checkout that a replace
// directive took actfuzz from (issue 51).
func TestProgramVersion(t *testing.T) {
	const checkout = "/home/someone/src/actfuzz"
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "2326789abcdef0123456789"}, {Key: "vcs.modified", Value: "true"}}
	user := func(dep *debug.Module, settings []debug.BuildSetting) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: "example.com/custom-ccai", Version: "(devel)"}, Deps: []*debug.Module{dep}, Settings: settings}
	}
	for _, tc := range []struct {
		name     string
		bi       *debug.BuildInfo
		buildRev string
		want     string
	}{
		{"stock, VCS stamped", &debug.BuildInfo{Main: debug.Module{Path: actfuzzModule, Version: "(devel)"}, Settings: vcs},
			"", "actfuzz (devel) 2326789abcde+dirty"},
		{"stock, Makefile revision", &debug.BuildInfo{Main: debug.Module{Path: actfuzzModule}, Settings: vcs},
			"2326789-dirty", "actfuzz (devel) 2326789-dirty"},
		{"user's, a published version", user(&debug.Module{Path: actfuzzModule, Version: "v0.3.0"}, nil),
			"", "example.com/custom-ccai (devel) (actfuzz v0.3.0)"},
		{"user's, a pseudo-version", user(&debug.Module{Path: actfuzzModule, Version: "v0.0.0-20261128153113-2326789abcde"}, vcs),
			"", "example.com/custom-ccai (devel) 2326789abcde+dirty (actfuzz v0.0.0-20261128153113-2326789abcde)"},
		{"user's, replaced by a fork", user(&debug.Module{Path: actfuzzModule, Version: "v0.3.0", Replace: &debug.Module{Path: "example.org/fork/actfuzz", Version: "v0.3.1"}}, nil),
			"", "example.com/custom-ccai (devel) (actfuzz example.org/fork/actfuzz v0.3.1)"},
		{"user's, replaced by a checkout, revision set", user(&debug.Module{Path: actfuzzModule, Version: "v0.0.0-00010101000000-000000000000", Replace: &debug.Module{Path: checkout}}, vcs),
			"2326789-dirty", "example.com/custom-ccai (devel) 2326789abcde+dirty (actfuzz 2326789-dirty (local checkout))"},
		{"user's, replaced by a checkout, no revision", user(&debug.Module{Path: actfuzzModule, Version: "v0.0.0-00010101000000-000000000000", Replace: &debug.Module{Path: checkout}}, nil),
			"", "example.com/custom-ccai (devel) (actfuzz local checkout, revision not recorded)"},
		{"user's, replaced by a checkout, as go records it", user(&debug.Module{Path: actfuzzModule, Version: "v0.0.0", Replace: &debug.Module{Path: checkout, Version: "(devel)"}}, nil),
			"", "example.com/custom-ccai (devel) (actfuzz local checkout, revision not recorded)"},
		{"user's, replaced by a relative checkout", user(&debug.Module{Path: actfuzzModule, Version: "v0.0.0", Replace: &debug.Module{Path: "../..", Version: "(devel)"}}, nil),
			"7f3e2a1", "example.com/custom-ccai (devel) (actfuzz 7f3e2a1 (local checkout))"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := programVersion(tc.bi, tc.buildRev)
			if got != tc.want {
				t.Errorf("programVersion = %q, want %q", got, tc.want)
			}
			if strings.Contains(got, checkout) || strings.Contains(got, "=>") {
				t.Errorf("programVersion %q names the machine's checkout", got)
			}
		})
	}
}

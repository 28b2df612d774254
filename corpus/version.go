package corpus

import "runtime/debug"

// buildRevision is set by the Makefile at link time (-ldflags -X) to `git
// describe --always --dirty`, for builds whose VCS stamping is off.
var buildRevision string

// actfuzzModule is this module's path.
const actfuzzModule = "github.com/actfuzz/actfuzz"

// ProgramVersion identifies the writer of seed files: "actfuzz", the module
// version, and the VCS revision the binary was built from (with "+dirty"
// for uncommitted changes) when the build recorded one. A program of a
// user's own module (its own CCAIs and cli.Main) is named by its module
// path instead, with the actfuzz version it uses: "example.com/mycca
// (devel) (actfuzz v0.3.0)", so that a seed naming one of its CCAIs says
// which program can replay it. A seed replays exactly on the machinery
// that wrote it; when a replay differs, comparing this string with the
// seed's program tells whether the TCP machinery or a CCAI changed in
// between.
func ProgramVersion() string {
	v := "actfuzz"
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v + " (unknown build)"
	}
	var lib string // the actfuzz module a user's program depends on
	if bi.Main.Path != "" && bi.Main.Path != actfuzzModule && bi.Main.Path != "command-line-arguments" {
		v = bi.Main.Path
		lib = " (actfuzz unknown version)"
		for _, d := range bi.Deps {
			if d.Path == actfuzzModule {
				lib = " (actfuzz " + d.Version
				if d.Replace != nil {
					lib += " => " + d.Replace.Path
				}
				lib += ")"
			}
		}
	}
	ver := bi.Main.Version
	if ver == "" {
		ver = "(devel)"
	}
	v += " " + ver
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if buildRevision != "" {
		rev, dirty = buildRevision, ""
	}
	if len(rev) > 12 && buildRevision == "" {
		rev = rev[:12]
	}
	if rev != "" {
		v += " " + rev + dirty
	}
	return v + lib
}

package corpus

import "runtime/debug"

// buildRevision is set by the Makefile at link time (-ldflags -X) to `git
// describe --always --dirty`, for builds whose VCS stamping is off.
var buildRevision string

// ProgramVersion identifies the writer of seed files: "actfuzz", the module
// version, and the VCS revision the binary was built from (with "+dirty"
// for uncommitted changes) when the build recorded one. A seed replays
// exactly on the machinery that wrote it; when a replay differs, comparing
// this string with the seed's program tells whether the TCP machinery or a
// CCAI changed in between.
func ProgramVersion() string {
	v := "actfuzz"
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v + " (unknown build)"
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
	return v
}

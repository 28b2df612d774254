package corpus

import (
	"path/filepath"
	"runtime/debug"
	"strings"
)

// buildRevision is actfuzz's own revision, set at link time (-ldflags -X,
// the Makefile's LDFLAGS) to `git describe --always --dirty` of the
// actfuzz checkout: for builds whose VCS stamping is off, and for a user's
// program that takes actfuzz from a local checkout by a replace directive
// (Go records no revision of a replaced module).
var buildRevision string

// actfuzzModule is this module's path.
const actfuzzModule = "github.com/actfuzz/actfuzz"

// ProgramVersion identifies the writer of seed files: "actfuzz", the module
// version, and the VCS revision the binary was built from (with "+dirty"
// for uncommitted changes) when the build recorded one. A program of a
// user's own module (its own CCAIs and cli.Main) is named by its module
// path instead, with the actfuzz it uses (libraryVersion): "example.com/mycca
// (devel) (actfuzz v0.3.0)", so that a seed naming one of its CCAIs says
// which program can replay it. It never holds a path of the machine that
// built the program. A seed replays exactly on the machinery
// that wrote it; when a replay differs, comparing this string with the
// seed's program tells whether the TCP machinery or a CCAI changed in
// between.
func ProgramVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "actfuzz (unknown build)"
	}
	return programVersion(bi, buildRevision)
}

// programVersion is ProgramVersion of the build bi, with buildRev as
// buildRevision.
func programVersion(bi *debug.BuildInfo, buildRev string) string {
	v := "actfuzz"
	var lib string // the actfuzz module a user's program depends on
	if bi.Main.Path != "" && bi.Main.Path != actfuzzModule && bi.Main.Path != "command-line-arguments" {
		v = bi.Main.Path
		lib = " (actfuzz unknown version)"
		for _, d := range bi.Deps {
			if d.Path == actfuzzModule {
				lib = " (actfuzz " + libraryVersion(d, buildRev) + ")"
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
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if buildRev != "" && lib == "" {
		rev, dirty = buildRev, "" // actfuzz's own: buildRev says dirty itself
	}
	if rev != "" {
		v += " " + rev + dirty
	}
	return v + lib
}

// libraryVersion is the actfuzz that a user's program was built with: its
// module version (a tag, or a pseudo-version naming the commit), the
// module that replaces it at a version, or, for a replace by a directory
// (a local checkout, whose path is the machine's and is never recorded),
// buildRev (buildRevision) when the build set it and "local checkout, revision not
// recorded" when not.
func libraryVersion(d *debug.Module, buildRev string) string {
	switch {
	case d.Replace == nil:
		return d.Version
	case !localReplace(d.Replace):
		return d.Replace.Path + " " + d.Replace.Version
	case buildRev != "":
		return buildRev + " (local checkout)"
	}
	return "local checkout, revision not recorded"
}

// localReplace is true for a replace by a directory: its path is a file
// path (go.mod's rule: absolute, or starting ./ or ../), and go records
// it without a version or as "(devel)".
func localReplace(r *debug.Module) bool {
	p := filepath.ToSlash(r.Path)
	return r.Version == "" || r.Version == "(devel)" || filepath.IsAbs(r.Path) ||
		strings.HasPrefix(p, "./") || strings.HasPrefix(p, "../")
}

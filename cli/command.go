package cli

import (
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/internal/shell"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/ns3"
)

// This file builds the commands actfuzz prints for the user to run next:
// the terminal's hints, findings.md's and the report's replay, minimize
// and diff lines, the resume line of an interrupted run. Each must run as
// printed (issue 51), which TestPrintedCommandsRun checks by running them.

// commandName is this program as the user can type it: the bare name when
// that name, looked up on PATH, is this very executable (`make install`
// put it there); else the path the user ran it by when it holds a
// directory (bin/actfuzz, relative to the directory it ran in, like the
// seed paths printed beside it); else the running executable's absolute
// path. A program built by `go run` (an executable that go removes when
// it exits) is `go run` of its main package again. The result is quoted
// for a shell.
func commandName() string {
	exe, err := os.Executable()
	if err != nil {
		return shell.Quote(progName())
	}
	arg0 := ""
	if len(os.Args) > 0 {
		arg0 = os.Args[0]
	}
	mainPkg := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		mainPkg = bi.Path
	}
	return commandFor(arg0, exe, exec.LookPath, mainPkg)
}

// commandFor is commandName for a program run as arg0 whose executable is
// exe, with lookPath searching PATH and mainPkg its main package's path.
func commandFor(arg0, exe string, lookPath func(string) (string, error), mainPkg string) string {
	name := filepath.Base(cmp.Or(arg0, exe))
	if p, err := lookPath(name); err == nil && sameFile(p, exe) {
		return shell.Quote(name)
	}
	if goRunBuild(exe) && mainPkg != "" {
		return "go run " + shell.Quote(mainPkg)
	}
	if strings.ContainsRune(arg0, filepath.Separator) && sameFile(arg0, exe) {
		return shell.Quote(arg0)
	}
	return shell.Quote(exe)
}

// sameFile is true when the paths name one file (a symlink and its target
// alike).
func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// goRunBuild is true for the executable of `go run`, which go builds as
// $GOTMPDIR/go-build…/b001/exe/NAME and removes when it exits.
func goRunBuild(exe string) bool {
	dir := filepath.Dir(exe)
	return filepath.Base(dir) == "exe" && strings.HasPrefix(filepath.Base(filepath.Dir(filepath.Dir(dir))), "go-build")
}

// resumeCommand continues the campaign in out from its last checkpoint:
// `run --resume --out OUT`, which takes the campaign from OUT/campaign.yaml
// (the file the run started with may be elsewhere, or the built-in default
// campaign, which has no file), with --subject when it is not the native
// simulator; extra flags follow.
func resumeCommand(prog, out, subject string, extra ...string) string {
	args := []string{prog, "run", "--resume", "--out", shell.Quote(out)}
	if subject != "" && subject != "native" {
		args = append(args, "--subject", shell.Quote(subject))
	}
	return strings.Join(append(args, extra...), " ")
}

// diffVs is the subject `actfuzz diff` compares a seed's subject with,
// when that can run it here, or "": ns-3 for the native simulator's seeds
// (when ns-3's driver is installed: `make ns3`), the native simulator for
// every other subject's. A subject that cannot express the seed (ns-3 has
// no linux-3.10 profile, no parameter of P it lacks) is refused as diff
// refuses it (diffRefusal): no command is offered that would exit 2.
func diffVs(s *corpus.Seed) string {
	if s.Pinned != nil || s.Witness != nil {
		return "" // diff runs neither (pinned delays: the native simulator's only)
	}
	cfg, err := s.Config()
	if err != nil {
		return ""
	}
	subject := cmp.Or(s.Subject, "native")
	vs := "native"
	if subject == "native" {
		vs = "ns3"
	}
	caps := map[string]netenv.Capabilities{}
	for _, c := range declaredCapabilities() {
		caps[c.Name] = c
	}
	a, aok := caps[subject]
	b, bok := caps[vs]
	if !aok || !bok {
		return ""
	}
	if _, err := diffRefusal(cfg, a, b); err != nil {
		return ""
	}
	if vs == "ns3" {
		if _, err := ns3.FindDriver(); err != nil {
			return ""
		}
	}
	return vs
}

// diffCommand is `diff SEED --subject S --vs V` for the seed at path, or
// "" when diffVs offers none.
func diffCommand(prog, path string, s *corpus.Seed) string {
	vs := diffVs(s)
	if vs == "" {
		return ""
	}
	return fmt.Sprintf("%s diff %s --subject %s --vs %s", prog, shell.Quote(path), cmp.Or(s.Subject, "native"), vs)
}

// diffRefusal checks that both subjects of a diff can run cfg, each under
// its own names for the congestion controls, as ns3.Diff runs it; the
// error names the side ("--subject" or "--vs") that cannot.
func diffRefusal(cfg netenv.Config, a, b netenv.Capabilities) (side string, err error) {
	for _, s := range []struct {
		flag string
		caps netenv.Capabilities
	}{{"--subject", a}, {"--vs", b}} {
		c := cfg
		c.Flows = slices.Clone(cfg.Flows)
		for i := range c.Flows {
			c.Flows[i].CCA = ns3.CCAFor(s.caps.Name, c.Flows[i].CCA)
		}
		if err := s.caps.CheckConfig(&c); err != nil {
			return s.flag, err
		}
	}
	return "", nil
}

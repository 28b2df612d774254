package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// flagsOf lists the flags a command's --help shows.
func flagsOf(t *testing.T, cmd string) map[string]bool {
	t.Helper()
	code, _, help := runCLI(context.Background(), cmd, "--help")
	if code != exitOK {
		t.Fatalf("%s --help: exit %d", cmd, code)
	}
	flags := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s+-(\w[\w-]*)`).FindAllStringSubmatch(help, -1) {
		flags[m[1]] = true
	}
	return flags
}

// Every flag that the README or a docs/*.md file shows on an
// `actfuzz CMD …` command line exists on that command.
func TestReadmeFlagsExist(t *testing.T) {
	docs, err := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, c := range commands() {
		names[c.name] = true
	}
	known := map[string]map[string]bool{}
	checked := map[string]int{}
	for _, file := range append([]string{filepath.Join("..", "README.md")}, docs...) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range commandLines(string(b)) {
			f := strings.Fields(l)
			if len(f) < 2 || !names[f[1]] {
				continue
			}
			cmd := f[1]
			if known[cmd] == nil {
				known[cmd] = flagsOf(t, cmd)
			}
			for _, m := range regexp.MustCompile(`--([a-z][\w-]*)`).FindAllStringSubmatch(l, -1) {
				checked[filepath.Base(file)]++
				if !known[cmd][m[1]] {
					t.Errorf("%s: %q: actfuzz %s has no --%s", filepath.Base(file), l, cmd, m[1])
				}
			}
		}
	}
	t.Logf("flags checked per file: %v", checked)
	// The README's command table shows 79 flags, and the command lines
	// moved to docs/cluster.md, output.md and symbolic.md 29 (2026-11-28):
	// far fewer means a table or a page lost its command lines.
	if n := checked["README.md"]; n < 30 {
		t.Errorf("only %d flags checked in README.md: is its command table still there?", n)
	}
	if n := checked["cluster.md"] + checked["output.md"] + checked["symbolic.md"]; n < 20 {
		t.Errorf("only %d flags checked in docs/cluster.md, output.md and symbolic.md: are their command lines still there?", n)
	}
}

// commandLines returns the `actfuzz …` command lines of a Markdown text:
// those in `inline code` and the lines of code blocks that start with one.
func commandLines(text string) []string {
	var lines []string
	for _, m := range regexp.MustCompile("`(actfuzz [^`]+)`").FindAllStringSubmatch(text, -1) {
		lines = append(lines, m[1])
	}
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "actfuzz ") {
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	return lines
}

// list --json has every subject with its CCAIs and their variables, and
// the state variables conditions can use; list --help says something.
func TestListJSON(t *testing.T) {
	code, out, errs := runCLI(context.Background(), "list", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var l listing
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatal(err)
	}
	subj := map[string]listSubject{}
	for _, s := range l.Subjects {
		subj[s.Name] = s
	}
	for _, name := range []string{"native", "ns3", "gvisor"} {
		if len(subj[name].CCAIs) == 0 {
			t.Errorf("subject %s: no CCAIs", name)
		}
	}
	var cubicVars bool
	for _, c := range subj["native"].CCAIs {
		if c.Name == "cubic" && len(c.Vars) > 0 {
			cubicVars = true
		}
	}
	if !cubicVars {
		t.Error("native cubic has no variables")
	}
	state := map[string]bool{}
	for _, v := range l.State {
		state[v.Name] = true
	}
	for _, v := range []string{"cwnd", "ca_state", "time", "flow"} {
		if !state[v] {
			t.Errorf("state lacks %s", v)
		}
	}
	if code, _, help := runCLI(context.Background(), "list", "--help"); code != exitOK || !strings.Contains(help, "-json") {
		t.Errorf("list --help: exit %d, %q", code, help)
	}
}

// compare writes no plot unless asked.
func TestCompareWritesNoPlotUnasked(t *testing.T) {
	dir := t.TempDir()
	camp := tinyCampaign(t, dir, "cwnd > 1e9")
	t.Chdir(dir)
	if code, _, errs := runCLI(context.Background(), "compare", camp, "--budget", "4", "--methods", "ran", "--isolate=false", "--quiet"); code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if pngs, _ := filepath.Glob(filepath.Join(dir, "*.png")); len(pngs) > 0 {
		t.Errorf("compare wrote %v unasked", pngs)
	}
}

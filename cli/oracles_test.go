package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/oracle"
)

// list --oracles prints every oracle of the library with its rule, source
// and what it applies to; --json the same as an array.
func TestListOracles(t *testing.T) {
	code, out, errs := runCLI(context.Background(), "list", "--oracles")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, o := range oracle.Library() {
		for _, want := range []string{"\n" + o.Name + " (" + string(o.Kind) + ")\n", o.Statement, "source:     " + o.Source, o.Linux} {
			if !strings.Contains(out, want) {
				t.Errorf("list --oracles lacks %q", want)
			}
		}
	}
	for _, want := range []string{"applies to: every congestion control\n", "applies to: the cubic family (", "but the bbr family"} {
		if !strings.Contains(out, want) {
			t.Errorf("list --oracles lacks %q", want)
		}
	}
	for _, o := range oracle.Library() {
		for cca, why := range o.ExceptCCAs {
			if !strings.Contains(out, "  not for "+cca+": "+why+"\n") {
				t.Errorf("list --oracles does not say %s leaves out %s", o.Name, cca)
			}
		}
		for subj, why := range o.NotOn {
			if !strings.Contains(out, "  not on "+subj+": "+why+"\n") {
				t.Errorf("list --oracles does not say %s is not on %s", o.Name, subj)
			}
		}
	}
	code, out, errs = runCLI(context.Background(), "list", "--oracles", "--json")
	if code != exitOK {
		t.Fatalf("--json: exit %d: %s", code, errs)
	}
	var l []listOracle
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range l {
		names = append(names, o.Name)
		if o.Statement == "" || o.Source == "" || o.Kind == "" || o.AppliesTo == "" || len(o.Needs) == 0 {
			t.Errorf("--json: %+v", o)
		}
	}
	if !slices.Equal(names, oracle.Names()) {
		t.Errorf("--json names %v, want %v", names, oracle.Names())
	}
	if !strings.Contains(out, `"needs": [`) || !strings.Contains(out, `"not_on": {`) {
		t.Errorf("--json lacks needs or not_on:\n%s", out)
	}
}

// Plain list shows the derived variables once, in the state-variables
// section, and not among a CCAI's own variables.
func TestListDerivedVars(t *testing.T) {
	code, out, errs := runCLI(context.Background(), "list")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	state := out[strings.Index(out, "\nState variables"):]
	head, vars, _ := strings.Cut(state[1:], "\n")
	for _, w := range []string{"rtt_ago.X", "rtt_max.X"} {
		if !strings.Contains(head, w) {
			t.Errorf("the state section's header lacks %s: %q", w, head)
		}
	}
	for i, v := range corpus.DerivedVars {
		if !strings.Contains(vars, "  "+v.Name+" ") || !strings.Contains(vars, corpus.DerivedDocs[i]) {
			t.Errorf("the state section lacks %s", v.Name)
		}
		if strings.Contains(out[:len(out)-len(state)], v.Name) {
			t.Errorf("%s listed before the state section (as a CCAI's variable?)", v.Name)
		}
	}
	code, out, errs = runCLI(context.Background(), "list", "--json")
	if code != exitOK {
		t.Fatalf("--json: exit %d: %s", code, errs)
	}
	var l listing
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatal(err)
	}
	if len(l.Derived) != len(corpus.DerivedVars) {
		t.Errorf("--json derived %+v", l.Derived)
	}
	for _, s := range l.Subjects {
		for _, c := range s.CCAIs {
			for _, v := range c.Vars {
				if corpus.DerivedVars.Index(v.Name) >= 0 {
					t.Errorf("%s %s lists derived %s as its own", s.Name, c.Name, v.Name)
				}
			}
		}
	}
}

// update rewrites the generated parts of docs/oracles.md:
// go test ./cli -run TestOraclesDoc -update
var update = flag.Bool("update", false, "rewrite the generated parts of docs/oracles.md from the library")

// oracleDocBlocks are the parts of docs/oracles.md generated from the
// library and corpus.DerivedVars, by the name of their markers.
func oracleDocBlocks() map[string]string {
	esc := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	var lib, linux, notOn, derived strings.Builder
	lib.WriteString("| oracle | kind | applies to | what must hold | source |\n|---|---|---|---|---|\n")
	for _, o := range oracle.Library() {
		fmt.Fprintf(&lib, "| `%s` | %s | %s | %s | %s |\n", o.Name, o.Kind, esc(appliesTo(&o, false)), esc(o.Statement), esc(o.Source))
		if o.Linux != "" {
			fmt.Fprintf(&linux, "- `%s`: %s\n", o.Name, o.Linux)
		}
		for _, cca := range slices.Sorted(maps.Keys(o.ExceptCCAs)) {
			fmt.Fprintf(&notOn, "- `%s` does not apply to `%s`: %s\n", o.Name, cca, o.ExceptCCAs[cca])
		}
		for _, subj := range slices.Sorted(maps.Keys(o.NotOn)) {
			fmt.Fprintf(&notOn, "- `%s` does not run on `%s`: %s\n", o.Name, subj, o.NotOn[subj])
		}
	}
	derived.WriteString("| variable | meaning |\n|---|---|\n")
	for i, v := range corpus.DerivedVars {
		doc := ""
		if i < len(corpus.DerivedDocs) {
			doc = corpus.DerivedDocs[i]
		}
		fmt.Fprintf(&derived, "| `%s` | %s |\n", v.Name, esc(doc))
	}
	return map[string]string{"oracles": lib.String(), "linux": linux.String(), "not-on": notOn.String(), "derived": derived.String()}
}

// docBlock finds the text between <!-- generated: name --> and
// <!-- end: name --> in doc: its start and end offsets.
func docBlock(doc, name string) (int, int, bool) {
	open, end := "<!-- generated: "+name+" -->\n", "<!-- end: "+name+" -->"
	i := strings.Index(doc, open)
	j := strings.Index(doc, end)
	if i < 0 || j < i {
		return 0, 0, false
	}
	return i + len(open), j, true
}

// docs/oracles.md holds the library's table, Linux's departures, the
// subjects each oracle skips and the derived variables as they are in this
// build (-update rewrites them), so that it cannot drift from the library;
// the README points to it.
func TestOraclesDoc(t *testing.T) {
	path := filepath.Join("..", "docs", "oracles.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	blocks := oracleDocBlocks()
	for _, name := range slices.Sorted(maps.Keys(blocks)) {
		i, j, ok := docBlock(doc, name)
		if !ok {
			t.Fatalf("docs/oracles.md has no <!-- generated: %s --> … <!-- end: %s --> block", name, name)
		}
		if doc[i:j] == blocks[name] {
			continue
		}
		if *update {
			doc = doc[:i] + blocks[name] + doc[j:]
			continue
		}
		t.Errorf("docs/oracles.md: the %s block differs from the library; rewrite it with go test ./cli -run TestOraclesDoc -update", name)
	}
	if *update && doc != string(b) {
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, o := range oracle.Library() {
		if !strings.Contains(doc, "| `"+o.Name+"` |") {
			t.Errorf("docs/oracles.md: no table row for oracle %s", o.Name)
		}
	}
	for _, w := range []string{"rtt_ago.", "rtt_max.", "oracles: none", "actfuzz list --oracles", "findings.md"} {
		if !strings.Contains(doc, w) {
			t.Errorf("docs/oracles.md lacks %q", w)
		}
	}
	rb, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"## Oracles", "docs/oracles.md", "`actfuzz list --oracles`", "oracles: all"} {
		if !strings.Contains(string(rb), w) {
			t.Errorf("README lacks %q", w)
		}
	}
}

// An unknown oracle in a campaign is bad input (2), with the file, line
// and the closest name.
func TestRunUnknownOracle(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "o.yaml")
	if err := os.WriteFile(path, []byte("ccai: [reno]\noracles: [cwnd-floor, reno-halve]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI(context.Background(), "run", path, "--out", filepath.Join(dir, "out"), "--isolate=false")
	if code != exitUsage || !strings.Contains(errs, "o.yaml:2: oracles: ") || !strings.Contains(errs, `unknown oracle "reno-halve"`) ||
		!strings.Contains(errs, `did you mean "reno-half"?`) {
		t.Errorf("exit %d, stderr %q; want 2 naming o.yaml:2 and reno-half", code, errs)
	}
}

// At its start a campaign says which oracles it skips and why, and how
// many it checks (not with --quiet); its report lists them with their
// sources.
func TestRunOracleStart(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "o.yaml")
	src := "ccai: [cubic, reno]\nbytes: 200000\nbudget: 4\nwindow: 4\noracles: [cubic-target-bound, cwnd-floor, bbr-min-cwnd]\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, _, errs := runCLI(context.Background(), "run", path, "--out", out, "--isolate=false")
	if code != exitOK && code != exitFound {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{
		"actfuzz run: oracle cubic-target-bound skipped: not on native/linux: ",
		"actfuzz run: oracle bbr-min-cwnd skipped: applies to none",
		"actfuzz run: checking 1 oracle: cwnd-floor (actfuzz list --oracles)\n",
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	page, err := os.ReadFile(filepath.Join(out, "report", "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	floor, _ := oracle.Lookup("cwnd-floor")
	for _, want := range []string{"Oracles checked (1;", "<td>cwnd-floor</td>", "RFC 5681 §3.1", "<td>cubic-target-bound</td>"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report lacks %q (source %q)", want, floor.Source)
		}
	}
	code, _, errs = runCLI(context.Background(), "run", path, "--out", filepath.Join(dir, "quiet"), "--isolate=false", "--quiet")
	if (code != exitOK && code != exitFound) || strings.Contains(errs, "oracle") {
		t.Errorf("--quiet: exit %d, stderr %q", code, errs)
	}
}

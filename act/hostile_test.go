package act

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/coverage"
)

// hostileCampaigns are the campaigns of testdata/hostile (issue 48) with
// the start of the error each must give: bad input (exit 2), naming the
// file, the line and the field, before anything runs. Every file there
// has an entry.
var hostileCampaigns = map[string]string{
	"condition-loop.yaml":         `condition-loop.yaml:4: conditions[0]: condition "never-ends": when: 1:5: map(…) is not allowed`,
	"condition-repeat.yaml":       `condition-repeat.yaml:4: conditions[0]: condition "allocates": when: 1:5: repeat(…) is not allowed`,
	"condition-let-doubling.yaml": `condition-let-doubling.yaml:4: conditions[0]: condition "doubles": when: 1:5: let a: bindings are not allowed`,
	"condition-clock.yaml":        `condition-clock.yaml:4: conditions[0]: condition "flaky": when: 1:1: now(…) is not allowed`,
	"names-sanitize-alike.yaml":   `names-sanitize-alike.yaml:5: conditions[0].name "a.b" and conditions[1].name "a/b": both would write findings/a_b/`,
	"names-case.yaml":             `names-case.yaml:5: conditions[0].name "Huge" and conditions[1].name "huge": both would write findings/huge/`,
	"names-duplicate.yaml":        `names-duplicate.yaml:5: conditions[0].name "big" and conditions[1].name "big"`,
	"names-escape.yaml":           `names-escape.yaml:4: conditions[0].name "big\x1b[2J\x1b[H": character 4 (U+001B) is not printable`,
	"names-fault-dir.yaml":        `names-fault-dir.yaml:4: conditions[0].name "fault-hang": fault-… names the directories of fault findings`,
	"names-oracle.yaml":           `names-oracle.yaml:3: conditions[0].name: condition "CWND-Floor" has the name of oracle "cwnd-floor"`,
	"conditions-alias.yaml":       `conditions-alias.yaml:4: conditions: 257 conditions, over the cap of 256 (max_conditions)`,
	"state-unknown.yaml":          `state-unknown.yaml:3: state.nosuchvar: unknown state variable`,
	"trace-environ.yaml":          `trace-environ.yaml:3: link_traces[0]: /proc/self/environ:1:1: want a millisecond timestamp`,
	"trace-dev-zero.yaml":         `trace-dev-zero.yaml:3: link_traces[0]: /dev/zero: not a regular file`,
}

func TestParseCampaignHostile(t *testing.T) {
	files, err := filepath.Glob("testdata/hostile/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if _, ok := hostileCampaigns[filepath.Base(f)]; !ok {
			t.Errorf("%s: no expectation in hostileCampaigns", f)
		}
	}
	dir := t.TempDir()
	cases := map[string]string{}
	for name, want := range hostileCampaigns {
		cases[filepath.Join("testdata/hostile", name)] = "testdata/hostile/" + want
	}
	gen := func(name, src, want string) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		cases[p] = p + want
	}
	gen("name-long.yaml", "ccai: [reno]\nconditions:\n  - {name: "+strings.Repeat("n", 1<<20)+", when: \"cwnd > 2\"}\n",
		":3: conditions[0].name: 1048576 characters")
	gen("flows.yaml", "ccai: ["+strings.Repeat("reno, ", 300)+"reno]\n", ":1: ccai: 301 flows, over the cap of 256 (max_flows)")
	gen("expr-bytes.yaml", "ccai: [reno]\nconditions:\n  - {name: long, when: \""+strings.Repeat("cwnd + ", 700)+"1 > 0\"}\n",
		`:3: conditions[0]: condition "long": when: 4905 bytes, over the cap of 4096 (max_expr_bytes)`)
	gen("kappa.yaml", "ccai: [reno]\nkappa: 100\n", ":2: kappa: 100 is not a region size of S")
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte("ccai: [reno]\n"+strings.Repeat("# padding\n", MaxCampaignBytes/10+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	cases[big] = big + ": over the cap of 4194304 bytes (max_campaign_bytes)"
	for path, want := range cases {
		t.Run(filepath.Base(path), func(t *testing.T) {
			_, err := LoadCampaign(path)
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Fatalf("error\n\t%.300v\nwant it to start with\n\t%.300s", err, want)
			}
			if len(err.Error()) > 2000 {
				t.Errorf("a message of %d bytes", len(err.Error()))
			}
			if strings.Contains(err.Error(), "\x1b") {
				t.Errorf("the message carries a terminal escape: %q", err)
			}
		})
	}
	// The same checks hold for a campaign built in Go and one parsed from
	// bytes (a cluster worker's header).
	if _, err := ParseCampaign("c.yaml", make([]byte, MaxCampaignBytes+1)); err == nil || !strings.Contains(err.Error(), "max_campaign_bytes") {
		t.Errorf("ParseCampaign of a large source: %v", err)
	}
	specs := make([]corpus.ConditionSpec, MaxConditions+1)
	for i := range specs {
		specs[i] = corpus.ConditionSpec{Name: fmt.Sprintf("c%d", i), When: "cwnd > 2"}
	}
	if _, err := NewCampaign("spec", CampaignSpec{CCAI: []string{"reno"}, Conditions: specs}); err == nil || !strings.Contains(err.Error(), "max_conditions") {
		t.Errorf("NewCampaign with %d conditions: %v", len(specs), err)
	}
}

// findings.md shows names, sources, CCAIs and expressions as the text they
// are: no HTML, no link, no heading, no table cell of a name's making.
func TestTriageMarkdownEscapes(t *testing.T) {
	evil := []string{
		`<script>alert(1)</script>`,
		`"><img src=x onerror=alert(1)>`,
		"x | y\n## injected heading\n[link](http://evil.example)",
		"![img](http://evil.example/x.png) **bold** `code` www.evil.example me@evil.example",
	}
	var tr []TriageCondition
	for i, e := range evil {
		tr = append(tr, TriageCondition{Condition: e, Kind: "condition", When: "cwnd > 1 && `x` == \"" + e + "\"", Source: e, Hits: 1,
			Groups: []TriageGroup{{Hits: 1, CCAI: e, Subject: e, Step: e, RootCause: e, Rank: i + 1, Seed: fmt.Sprintf("out/findings/x/act-%d.json", i),
				Replay: "actfuzz replay 'out dir/x.json'"}}})
	}
	md := triageMarkdown("act", 1, tr)
	// Code spans and blocks show their content literally: what is
	// outside them must hold no markup.
	// Backslash-escaped characters are text, not markup.
	text := regexp.MustCompile("(?s)```sh\n.*?```|``.*?``|`[^`]*`").ReplaceAllString(md, "")
	text = regexp.MustCompile(`\\.`).ReplaceAllString(text, "")
	for _, bad := range []string{"<script", "<img", "\n## injected", "](http", "![img]", "**bold**", "http://evil", "me@evil"} {
		if strings.Contains(text, bad) {
			t.Errorf("findings.md carries %q outside code:\n%s", bad, md)
		}
	}
	// Every table row keeps its 8 cells (or 4 in the conditions' table).
	for _, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "|") {
			continue
		}
		cells := len(strings.Split(strings.ReplaceAll(line, `\|`, ""), "|")) - 2
		if cells != 4 && cells != 8 {
			t.Errorf("a row of %d cells: %s", cells, line)
		}
	}
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "``cwnd > 1 && `x` ==", "'out dir/x.json'"} {
		if !strings.Contains(md, want) {
			t.Errorf("findings.md lacks %q:\n%s", want, md)
		}
	}
}

// A seed that cannot be written ends the campaign with an error naming its
// path (the command exits 3), never an error in the log and exit 1.
func TestRunSeedWriteFailure(t *testing.T) {
	c, err := ParseCampaign("c.yaml", []byte("ccai: [reno]\nbytes: 200000\nconditions:\n  - {name: big, when: \"cwnd > 12\"}\noracles: none\n"))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	// findings/big is a file: no seed can be written under it.
	if err := os.MkdirAll(filepath.Join(out, "findings"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "findings", "big"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Run(context.Background(), c, Options{Budget: 64, Workers: 1, Out: out})
	want := filepath.Join(out, "findings", "big", "act-")
	if err == nil || !strings.Contains(err.Error(), "writing finding "+want) {
		t.Fatalf("error %v, want one naming %s…", err, want)
	}
}

// forgingExec is an Executor that runs every configuration in this
// process and publishes the results as a worker host would, but puts a
// made-up hit and a made-up fault into two of them: what a forger on a
// cluster's results stream can do.
type forgingExec struct {
	r     *Runner
	space coverage.Space
	out   chan Result
}

func (x *forgingExec) Dispatch(base int, gs []Config) {
	for i, g := range gs {
		b, _ := coverage.NewBatch(x.space)
		o := x.r.Run(context.Background(), g, b)
		states, _ := b.MarshalBinary()
		m := Result{Index: base + i, States: states, Mean: o.Mean, Best: o.Best, BestAt: o.BestAt, Hits: o.Hits, Fault: o.Fault, Capped: o.Capped, Events: o.Result.Events}
		switch base + i {
		case 5:
			m.Hits = append(m.Hits, Hit{Condition: "huge", When: "cwnd > 1e7", Flow: 0, TimeNS: 1e9, State: corpus.StateValues{"cwnd": 2e7}})
		case 9:
			m.Fault = &corpus.Finding{Kind: "zero-cwnd", TimeNS: 12345}
		}
		x.out <- m
	}
}
func (x *forgingExec) Results() <-chan Result { return x.out }
func (x *forgingExec) Failed() <-chan error   { return nil }
func (x *forgingExec) Merged(int)             {}
func (x *forgingExec) Close()                 {}

// A finding is a finding only if it replays: forged results are replaced
// by the coordinator's own runs, counted, and the campaign ends with the
// findings and the coverage of a local run.
func TestRunRejectsForgedResults(t *testing.T) {
	c, err := ParseCampaign("c.yaml", []byte(`
ccai: [reno]
bytes: 200000
conditions:
  - {name: huge, when: "cwnd > 1e7"}
  - {name: big, when: "cwnd > 40"}
oracles: none
window: 64
`))
	if err != nil {
		t.Fatal(err)
	}
	const budget = 128
	localDir, forgedDir := t.TempDir(), t.TempDir()
	local, err := Run(context.Background(), c, Options{Budget: budget, Workers: 1, Out: localDir})
	if err != nil {
		t.Fatal(err)
	}
	mk := func(context.Context, CampaignHeader) (Executor, error) {
		r, err := NewRunner(c, nil, c.Space)
		if err != nil {
			return nil, err
		}
		return &forgingExec{r: r, space: c.Space, out: make(chan Result, 64*64)}, nil
	}
	forged, err := Run(context.Background(), c, Options{Budget: budget, Out: forgedDir, Executor: mk})
	if err != nil {
		t.Fatal(err)
	}
	if forged.Unreproduced != 2 || local.Unreproduced != 0 {
		t.Errorf("unreproduced: %d forged (want 2), %d local (want 0)", forged.Unreproduced, local.Unreproduced)
	}
	groups := func(r *Report, dir string) (out []string) {
		for _, g := range r.Findings {
			rel, _ := filepath.Rel(dir, g.Path)
			out = append(out, fmt.Sprintf("%s ×%d", rel, g.Count))
		}
		return out
	}
	if a, b := groups(forged, forgedDir), groups(local, localDir); strings.Join(a, ",") != strings.Join(b, ",") {
		t.Errorf("findings %v, a local run's %v", a, b)
	}
	for _, k := range c.Space.Ks() {
		if a, b := forged.Store.VisitedRegions(k), local.Store.VisitedRegions(k); a != b {
			t.Errorf("k=%d: %d regions, a local run's %d", k, a, b)
		}
	}
	if _, err := os.Stat(filepath.Join(forgedDir, "findings", "huge")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the forged finding was written: %v", err)
	}
}

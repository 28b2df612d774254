package act

import (
	"cmp"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/corpus/pktexport"
	"github.com/actfuzz/actfuzz/internal/shell"
	"github.com/actfuzz/actfuzz/oracle"
)

// wallNow is the campaign's wall time so far (0 outside Run).
func (r *Report) wallNow() time.Duration {
	if r.elapsed == nil {
		return 0
	}
	return r.elapsed()
}

// TriageGroup is one finding group in findings.json.
type TriageGroup struct {
	Hits       int     `json:"hits"`
	FirstSim   int     `json:"first_sim"`
	FirstWallS float64 `json:"first_wall_s"`
	Step       string  `json:"step"`
	Flow       int     `json:"flow"`
	CCAI       string  `json:"ccai"`
	Subject    string  `json:"subject"`
	AtS        float64 `json:"at_s"` // simulated time of the first hit
	Seed       string  `json:"seed,omitempty"`
	Replay     string  `json:"replay,omitempty"`
	Minimize   string  `json:"minimize,omitempty"`
	// ExportPkt writes the group's seed as a packetdrill script for the
	// kernel (a single-flow condition finding of the native model at
	// profile linux, or of the linux subject; corpus/pktexport).
	ExportPkt string `json:"export_pkt,omitempty"`
	// Since findings.json version 2: the group's place among all the
	// campaign's groups, most important first (Report.Ranked); its root
	// cause (rootCause) in words; and its seed's stored trace, trimmed or
	// not (the whole one: Replay with --trace FILE).
	Rank         int    `json:"rank"`
	RootCause    string `json:"root_cause"`
	Trace        string `json:"trace,omitempty"`
	TraceTrimmed bool   `json:"trace_trimmed,omitempty"`
}

// TriageVersion is the version of findings.json. Version 2 added rank,
// root_cause, trace and trace_trimmed to the groups and orders conditions
// and groups most important first (version 1: conditions by name, groups
// by first simulation); no field was removed or changed.
const TriageVersion = 2

// TriageCondition is one condition (or fault kind) in findings.json.
type TriageCondition struct {
	Condition string `json:"condition"`
	Kind      string `json:"kind"`
	When      string `json:"when,omitempty"`
	// Source is where the condition's rule comes from (an oracle's RFC
	// section, or a user condition's source:).
	Source string `json:"source,omitempty"`
	// Oracle is the kind of the oracle (oracle.Conformance or
	// oracle.Performance) the condition checks; empty for a user's
	// condition. Statement is that oracle's rule in one line.
	Oracle    string        `json:"oracle,omitempty"`
	Statement string        `json:"statement,omitempty"`
	Hits      int           `json:"hits"`
	Groups    []TriageGroup `json:"groups"`
}

// oracleOf is the library's oracle a finding names: one of its name and
// source (a user's condition may take an oracle's name when that oracle
// is not checked, never its source too).
func oracleOf(f *corpus.Finding) (oracle.Oracle, bool) {
	if f.Kind != "condition" || f.Source == "" {
		return oracle.Oracle{}, false
	}
	o, ok := oracle.Lookup(f.Condition)
	return o, ok && o.Source == f.Source
}

// severity ranks a finding's kind, most important first: a fault of the
// CCAI (a panic, a crash, a NaN or zero cwnd, a hang, memory); a
// condition of the campaign file's own (what its author is looking for:
// the paper's use cases in make run's); a broken rule of a standard (a
// conformance oracle, on by default); a performance oracle (the rules
// kept, the outcome bad); then what says more about the campaign or the
// harness than about the CCAI (the event cap, a refused configuration, a
// condition that failed to run).
func severity(f *corpus.Finding) int {
	switch f.Kind {
	case "condition":
		o, ok := oracleOf(f)
		switch {
		case !ok:
			return 1
		case o.Kind == oracle.Performance:
			return 3
		}
		return 2
	case "event-cap", "refused", corpus.FaultCondition:
		return 4
	}
	return 0
}

// Ranked are the finding groups most important first: by severity, then
// by hits (a cause found often is found robustly), then by the first
// simulation that found them.
func (r *Report) Ranked() []*FindingGroup {
	gs := slices.Clone(r.Findings)
	slices.SortStableFunc(gs, func(a, b *FindingGroup) int {
		return cmp.Or(cmp.Compare(severity(a.Seed.Finding), severity(b.Seed.Finding)), cmp.Compare(b.Count, a.Count), cmp.Compare(a.FirstSim, b.FirstSim))
	})
	return gs
}

// Title is what a group is a finding of: its condition, or "fault: kind"
// (and a faulty condition's name).
func (g *FindingGroup) Title() string {
	f := g.Seed.Finding
	switch f.Kind {
	case "condition":
		return f.Condition
	case corpus.FaultCondition:
		return "fault-" + f.Kind + ": " + f.Condition
	}
	return "fault-" + f.Kind
}

// Triage summarizes the findings per condition, most important first
// (Ranked): groups with their counts, root causes, first hits, flows,
// CCAIs and subject, and the commands that replay and minimize them.
// program starts those commands.
func (r *Report) Triage(program string) []TriageCondition {
	byCond := map[string]*TriageCondition{}
	var order []string
	for i, g := range r.Ranked() {
		f := g.Seed.Finding
		name := g.Title()
		tc, ok := byCond[name]
		if !ok {
			tc = &TriageCondition{Condition: name, Kind: f.Kind, When: f.When, Source: f.Source}
			if o, ok := oracleOf(f); ok {
				tc.Oracle, tc.Statement = string(o.Kind), o.Statement
			}
			byCond[name] = tc
			order = append(order, name)
		}
		tg := TriageGroup{Hits: g.Count, FirstSim: g.FirstSim, FirstWallS: g.FirstWall.Seconds(), Step: g.Step.String(),
			Flow: f.Flow, Subject: g.Seed.Subject, AtS: float64(f.TimeNS) / 1e9, Seed: g.Path, Rank: i + 1, RootCause: g.RootCause()}
		if f.Flow >= 0 && f.Flow < len(g.Seed.CCAI) {
			tg.CCAI = g.Seed.CCAI[f.Flow]
		}
		if g.Path != "" {
			tg.Replay = program + " replay " + shell.Quote(g.Path)
			if f.Kind == "condition" {
				tg.Minimize = program + " minimize " + shell.Quote(g.Path)
			}
			if pktexport.Check(g.Seed) == nil {
				tg.ExportPkt = ExportPktCommand(program, g.Path)
			}
			if f.Trace != nil {
				tg.Trace, tg.TraceTrimmed = f.TracePath(g.Path), f.Trace.Trimmed
			}
		}
		tc.Hits += g.Count
		tc.Groups = append(tc.Groups, tg)
	}
	out := make([]TriageCondition, 0, len(order))
	for _, name := range order {
		out = append(out, *byCond[name])
	}
	return out
}

// ExportPktCommand is `export SEED --pkt`, which writes the seed's
// packetdrill script beside it (SEED.pkt; docs/packetdrill.md).
func ExportPktCommand(program, seed string) string {
	return program + " export " + shell.Quote(seed) + " --pkt"
}

// writeTriage writes findings.json and findings.md into dir.
func (r *Report) writeTriage(dir string) error {
	if dir == "" {
		return nil
	}
	prog := cmp.Or(r.program, "actfuzz")
	tr := r.Triage(prog)
	b, err := json.MarshalIndent(map[string]any{"version": TriageVersion, "method": r.Method, "sims": r.Sims, "conditions": tr}, "", "  ")
	if err != nil {
		return fmt.Errorf("findings.json: %w", err)
	}
	if err := corpus.WriteFileAtomic(filepath.Join(dir, "findings.json"), append(b, '\n')); err != nil {
		return err
	}
	return corpus.WriteFileAtomic(filepath.Join(dir, "findings.md"), []byte(triageMarkdown(r.Method, r.Sims, tr)))
}

// triageMarkdown is findings.md. Everything in it that a campaign file,
// a seed or a subject named (conditions, sources, CCAIs, expressions,
// paths) is written so that it renders as the text it is: a condition
// named <script>…</script> or "><img src=x onerror=…> shows as that
// text in any Markdown viewer, and cannot add a heading, a link or a
// table row.
func triageMarkdown(method string, sims int, tr []TriageCondition) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Findings (%s, %d simulations)\n\n", mdText(method), sims)
	if len(tr) == 0 {
		b.WriteString("None yet.\n")
		return b.String()
	}
	writeTop(&b, tr)
	b.WriteString("\n## Conditions\n\n| condition | source | groups | hits |\n|---|---|---|---|\n")
	for _, tc := range tr {
		fmt.Fprintf(&b, "| %s | %s | %d | %d |\n", mdText(tc.Condition), mdText(tc.Source), len(tc.Groups), tc.Hits)
	}
	for _, tc := range tr {
		fmt.Fprintf(&b, "\n## %s\n\n", mdText(tc.Condition))
		switch {
		case tc.Oracle == string(oracle.Performance):
			fmt.Fprintf(&b, "performance oracle (the flows kept their rules and still fared badly): %s — %s\n\n", mdText(tc.Statement), mdText(tc.Source))
		case tc.Oracle != "":
			fmt.Fprintf(&b, "oracle: %s — %s\n\n", mdText(tc.Statement), mdText(tc.Source))
		case tc.Source != "":
			fmt.Fprintf(&b, "source: %s\n\n", mdText(tc.Source))
		}
		if tc.When != "" {
			fmt.Fprintf(&b, "%s: %s, %s\n\n", mdCode(tc.When), Plural(len(tc.Groups), "group"), Plural(tc.Hits, "hit"))
		}
		b.WriteString("| rank | root cause | hits | first hit: sim, wall | step | flow | at (sim time) | seed |\n|---|---|---|---|---|---|---|---|\n")
		for _, g := range tc.Groups {
			fmt.Fprintf(&b, "| %d | %s | %d | %d, %.1f s | %s | %d | %.3f s | %s |\n", g.Rank, mdText(g.RootCause), g.Hits, g.FirstSim, g.FirstWallS, mdText(g.Step), g.Flow, g.AtS, mdCell(g.Seed))
		}
		var cmds strings.Builder
		for _, g := range tc.Groups {
			if g.Replay != "" {
				fmt.Fprintf(&cmds, "%s\n", oneLine(g.Replay))
			}
			if g.Minimize != "" {
				fmt.Fprintf(&cmds, "%s\n", oneLine(g.Minimize))
			}
			if g.ExportPkt != "" {
				fmt.Fprintf(&cmds, "%s\n", oneLine(g.ExportPkt))
			}
		}
		fence := mdFence(cmds.String())
		fmt.Fprintf(&b, "\n%ssh\n%s%s\n", fence, cmds.String(), fence)
	}
	return b.String()
}

// TopGroups is how many groups a summary lists (findings.md, the
// terminal at the end of a run, the report's first screen).
const TopGroups = 5

// writeTop is findings.md's summary: the conditions hit, the groups, and
// the TopGroups most important with the command that replays each.
func writeTop(b *strings.Builder, tr []TriageCondition) {
	groups, hits := 0, 0
	top := make([]TriageGroup, 0, TopGroups)
	titles := map[int]string{}
	for _, tc := range tr {
		groups += len(tc.Groups)
		hits += tc.Hits
		for _, g := range tc.Groups {
			titles[g.Rank] = tc.Condition
			top = append(top, g)
		}
	}
	slices.SortFunc(top, func(a, b TriageGroup) int { return cmp.Compare(a.Rank, b.Rank) })
	fmt.Fprintf(b, "%s hit, %s (one a root cause: docs/findings.md), %s. Most important first:\n\n", Plural(len(tr), "condition"), Plural(groups, "group"), Plural(hits, "hit"))
	var cmds strings.Builder
	for _, g := range top[:min(len(top), TopGroups)] {
		fmt.Fprintf(b, "%d. %s: %s (%s)\n", g.Rank, mdText(titles[g.Rank]), mdText(g.RootCause), Plural(g.Hits, "hit"))
		if g.Replay != "" {
			fmt.Fprintf(&cmds, "%s\n", oneLine(g.Replay))
		}
	}
	if cmds.Len() > 0 {
		fence := mdFence(cmds.String())
		fmt.Fprintf(b, "\nReplay them, in that order:\n\n%ssh\n%s%s\n", fence, cmds.String(), fence)
	}
}

// mdText is s as Markdown text that renders as itself: <, > and & as
// entities (so no viewer sees a tag), the ASCII punctuation that can open
// or close a Markdown construct backslash-escaped (CommonMark §2.4:
// emphasis, code, links, images, table cells, heading closers, GFM's
// strikethrough and autolinks: the ':' of ://, an address's '@', the '.'
// of www.), and line breaks as spaces. Hyphens, dots, colons, quotes and
// parentheses otherwise stay as they are: no construct starts with them
// in the middle of a line, and sources read as written.
func mdText(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '&':
			b.WriteString("&amp;")
		case r < ' ' || r == 0x7f:
			b.WriteByte(' ')
		case strings.ContainsRune("\\`*_[]|!#~@{}", r),
			r == ':' && strings.HasPrefix(string(rs[i+1:]), "//"),
			r == '.' && i >= 3 && strings.EqualFold(string(rs[i-3:i]), "www"):
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mdCell is a path in a table cell: a code span (shown literally, never
// a link) whose pipes are escaped, as GFM tables split cells on them
// even inside code spans.
func mdCell(s string) string {
	if s == "" {
		return ""
	}
	return strings.ReplaceAll(mdCode(s), "|", `\|`)
}

// mdCode is s as an inline code span, whose content Markdown shows
// literally: delimited by one backtick more than its longest run of them
// (CommonMark §6.1), on one line.
func mdCode(s string) string {
	s = oneLine(s)
	tick := strings.Repeat("`", longestRun(s, '`')+1)
	// Spaces inside the delimiters keep a backtick at either end from
	// joining them; CommonMark strips one from each side.
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || len(s) > 1 && s[0] == ' ' && s[len(s)-1] == ' ' {
		return tick + " " + s + " " + tick
	}
	return tick + s + tick
}

// mdFence is the fence of a code block that holds s: three backticks, or
// one more than its longest run of them.
func mdFence(s string) string { return strings.Repeat("`", max(3, longestRun(s, '`')+1)) }

// longestRun is the length of s's longest run of c.
func longestRun(s string, c rune) int {
	best, n := 0, 0
	for _, r := range s {
		if r == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}

// oneLine replaces line breaks and other control characters by spaces.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

// Plural is "1 hit", "2 hits".
func Plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// MarkdownCode is s as an inline code span that Markdown shows literally,
// on one line: for other writers of the campaign's Markdown (triage.md).
func MarkdownCode(s string) string { return mdCode(s) }

// OneLine is s with line breaks and control characters as spaces.
func OneLine(s string) string { return oneLine(s) }

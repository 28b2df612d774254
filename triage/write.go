package triage

import (
	"encoding/json"
	"fmt"
	"github.com/actfuzz/actfuzz/act"
	"os"
	"path/filepath"
	"strings"

	"github.com/actfuzz/actfuzz/corpus"
)

// File names in the campaign directory.
const (
	MarkdownFile = "triage.md"
	JSONFile     = "triage.json"
)

// Cause is one root cause: the groups of one condition, subject, CCA and
// class (the first group's seed and plot stand for them).
type Cause struct {
	Result
	Groups    int `json:"groups"`
	Confirmed int `json:"confirmed_groups"`
}

// Causes merges the results into root causes, in the order of their
// first group.
func (r *Report) Causes() []Cause {
	var out []Cause
	idx := map[string]int{}
	for _, res := range r.Results {
		k := strings.Join([]string{res.Condition, res.Subject, res.CCAI, string(res.Class)}, "\x00")
		i, ok := idx[k]
		if !ok {
			idx[k] = len(out)
			out = append(out, Cause{Result: res})
			i = len(out) - 1
		} else {
			out[i].Hits += res.Hits
		}
		out[i].Groups++
		if res.Confirmed {
			out[i].Confirmed++
		}
	}
	return out
}

// ByClass counts root causes by class.
func (r *Report) ByClass() map[Class]int {
	n := map[Class]int{}
	for _, c := range r.Causes() {
		n[c.Class]++
	}
	return n
}

// Write writes triage.md and triage.json into the campaign directory.
func (r *Report) Write() error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("triage.json: %w", err)
	}
	if err := corpus.WriteFileAtomic(filepath.Join(r.Dir, JSONFile), append(b, '\n')); err != nil {
		return err
	}
	return corpus.WriteFileAtomic(filepath.Join(r.Dir, MarkdownFile), []byte(r.Markdown()))
}

// ReadReport reads a campaign's triage.json (os.ErrNotExist: never
// triaged).
func ReadReport(dir string) (*Report, error) {
	b, err := os.ReadFile(filepath.Join(dir, JSONFile))
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, JSONFile), err)
	}
	return &r, nil
}

// Markdown is triage.md: one line per root cause, then each group's
// steps. Names from the campaign are written as code spans.
func (r *Report) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Triage (%s, %d simulations, %d groups)\n\n", r.Method, r.Sims, len(r.Results))
	if len(r.Results) == 0 {
		b.WriteString("No finding to triage.\n")
		return b.String()
	}
	by := r.ByClass()
	for _, c := range Classes {
		if by[c] > 0 {
			fmt.Fprintf(&b, "- %s: %d\n", c, by[c])
		}
	}
	b.WriteString("\n## Root causes\n\n")
	for _, c := range r.Causes() {
		conf := "not confirmed"
		if c.Confirmed == c.Groups {
			conf = "confirmed"
		} else if c.Confirmed > 0 {
			conf = fmt.Sprintf("confirmed in %d of %d groups", c.Confirmed, c.Groups)
		}
		fmt.Fprintf(&b, "- **%s** (%s): %s on %s/%s, %d groups, %d hits — %s; oracle %s; seed %s; plot %s\n",
			c.Class, conf, act.MarkdownCode(c.Condition), act.MarkdownCode(c.Subject), act.MarkdownCode(c.CCAI), c.Groups, c.Hits,
			act.OneLine(c.Why), act.MarkdownCode(cmpOr(c.Source, "a user's condition")), act.MarkdownCode(cmpOr(c.Minimized, c.Seed)), act.MarkdownCode(cmpOr(c.Plot, "none")))
	}
	b.WriteString("\n## Groups\n")
	for i, res := range r.Results {
		fmt.Fprintf(&b, "\n### %d. %s, %s\n\n", i+1, act.MarkdownCode(res.Condition), act.MarkdownCode(res.Seed))
		for _, s := range res.Steps {
			fmt.Fprintf(&b, "- %s: %s — %s\n", s.Name, s.Outcome, act.OneLine(s.Detail))
		}
	}
	return b.String()
}

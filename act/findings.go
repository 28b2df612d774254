package act

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"path/filepath"
	"strings"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/coverage"
)

// hitKey is the group of a condition hit: its condition and the region of
// its S variables at k = 128 (near-duplicates share it).
func hitKey(sp coverage.Space, h Hit) string { return h.Condition + "|" + regionKey(sp, h.State) }

// faultKey is the group of a fault: one a kind, and for a condition that
// failed to run, one a condition.
func faultKey(f *corpus.Finding) string {
	if f.Kind == corpus.FaultCondition {
		return "fault|" + f.Kind + "|" + f.Condition
	}
	return "fault|" + f.Kind
}

// addFinding counts a hit in its group, or records it as a new group; the
// error is a seed that could not be written.
func (r *Report) addFinding(c *Campaign, opt Options, groups map[string]*FindingGroup, idx int, g Config, h Hit, log *slog.Logger) error {
	key := hitKey(c.Space, h)
	if grp, ok := groups[key]; ok {
		grp.Count++
		return nil
	}
	s := r.seedOf(c, g)
	s.Finding = &corpus.Finding{Condition: h.Condition, When: h.When, While: h.While, For: h.For, Kind: "condition", TimeNS: h.TimeNS, Flow: h.Flow, State: h.State}
	if h.Flow >= 0 && h.Flow < len(c.CCAI) {
		if sp, ok := c.Check(h.Condition, c.CCAI[h.Flow]); ok {
			s.Finding.Only, s.Finding.Source = sp.Only, sp.Source
		}
	}
	return r.newGroup(opt, groups, key, s, idx, g.Step, "", log)
}

// addFault is addFinding for a fault.
func (r *Report) addFault(c *Campaign, opt Options, groups map[string]*FindingGroup, idx int, g Config, f *corpus.Finding, log *slog.Logger) error {
	key := faultKey(f)
	if grp, ok := groups[key]; ok {
		grp.Count++
		return nil
	}
	s := r.seedOf(c, g)
	s.Finding = f
	return r.newGroup(opt, groups, key, s, idx, g.Step, "", log)
}

// newGroup records the first finding of a group, found by configuration
// idx (with suffix, the file name's distinction: a symbolic branch's).
func (r *Report) newGroup(opt Options, groups map[string]*FindingGroup, key string, s *corpus.Seed, idx int, step Step, suffix string, log *slog.Logger) error {
	grp := &FindingGroup{Seed: s, Count: 1, key: key, FirstSim: idx, Step: step, FirstWall: r.wallNow()}
	groups[key] = grp
	r.Findings = append(r.Findings, grp)
	if err := r.writeFinding(opt, grp, idx, suffix, log); err != nil {
		return err
	}
	if opt.OnFinding != nil {
		opt.OnFinding(grp)
	}
	return nil
}

// FindingPath is where, in the campaign directory out, is the seed file of
// a finding written at path p: out/findings/<group>/<file>, the layout
// writeFinding gives, whatever directory p was written under. A checkpoint
// keeps p as it was written, and a campaign's directory may have moved
// (or been named relative to another working directory) since.
func FindingPath(out, p string) string {
	if p == "" {
		return ""
	}
	return filepath.Join(out, "findings", filepath.Base(filepath.Dir(p)), filepath.Base(p))
}

// findingDir is the directory of a finding's seed under findings/: its
// condition's file name (corpus.FileName; a campaign's conditions differ
// in it, checkNames), or fault-<kind>, which no condition's can be.
func findingDir(f *corpus.Finding) string {
	if f.Kind != "condition" {
		return "fault-" + corpus.FileName(f.Kind)
	}
	return corpus.FileName(f.Condition)
}

// writeFinding writes the seed as soon as it is found, with its CSV trace
// and plot. The file name is the configuration index, so a resumed
// campaign that finds it again writes the same file; a file there that
// holds another finding is never written over (corpus.WriteArtifacts).
// A seed that cannot be written ends the campaign: its error names the
// path, and the run exits 3 rather than report a finding it lost.
func (r *Report) writeFinding(opt Options, grp *FindingGroup, idx int, suffix string, log *slog.Logger) error {
	if opt.Out == "" {
		return nil
	}
	grp.Path = filepath.Join(opt.Out, "findings", findingDir(grp.Seed.Finding), fmt.Sprintf("%s-%07d%s.json", r.Method, idx, suffix))
	if err := corpus.WriteArtifacts(context.Background(), r.subject, grp.Seed, grp.Path); err != nil {
		return fmt.Errorf("writing finding %s: %w", grp.Path, err)
	}
	if err := r.writeTriage(opt.Out); err != nil {
		return fmt.Errorf("writing %s: %w", filepath.Join(opt.Out, "findings.md"), err)
	}
	log.Debug("finding written", "path", grp.Path)
	return nil
}

// regionKey groups a hit by the region of its S variables at k = 128.
func regionKey(sp coverage.Space, state map[string]any) string {
	var b strings.Builder
	for _, v := range sp.Vars {
		switch x := state[v.Name].(type) {
		case float64:
			if v.Step > 0 {
				fmt.Fprintf(&b, "%d,", int64(math.Floor((x-v.Min)/v.Step))/128)
			}
		default:
			fmt.Fprintf(&b, "%v,", x)
		}
	}
	return b.String()
}

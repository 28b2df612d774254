package act

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/actfuzz/actfuzz/corpus"
)

// hitKey is the group of a condition hit of a campaign run by subject:
// its root cause (causeOf).
func hitKey(c *Campaign, subject string, h Hit) string {
	return causeOf(c.CCAI, subject, &corpus.Finding{Kind: "condition", Condition: h.Condition, Flow: h.Flow, State: h.State}).key()
}

// faultKey is the group of a fault: its kind (for a condition that failed
// to run, the condition), and its root cause as a hit's.
func faultKey(c *Campaign, subject string, f *corpus.Finding) string {
	return causeOf(c.CCAI, subject, f).key()
}

// symHangKey is the one group of the symbolic step's hangs.
const symHangKey = "fault|hang|symbolic"

// groupKey is the group of a seed's finding, as hitKey and faultKey key
// it when it was found: a checkpoint's groups are keyed again with it, so
// that a campaign resumed from an older program's checkpoint groups as
// this one does.
func groupKey(s *corpus.Seed) string {
	if s.SymWindow != nil && s.Finding.Kind == corpus.FaultHang {
		return symHangKey
	}
	return causeOf(s.CCAI, s.Subject, s.Finding).key()
}

// addFinding counts a hit in its group and returns nil, or records it as a
// new group and returns that (writeFindings writes it).
func (r *Report) addFinding(c *Campaign, groups map[string]*FindingGroup, idx int, g Config, h Hit) *FindingGroup {
	key := hitKey(c, r.subject.Name(), h)
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
	return r.newGroup(groups, key, s, idx, g.Step)
}

// addFault is addFinding for a fault.
func (r *Report) addFault(c *Campaign, groups map[string]*FindingGroup, idx int, g Config, f *corpus.Finding) *FindingGroup {
	key := faultKey(c, r.subject.Name(), f)
	if grp, ok := groups[key]; ok {
		grp.Count++
		return nil
	}
	s := r.seedOf(c, g)
	s.Finding = f
	return r.newGroup(groups, key, s, idx, g.Step)
}

// newGroup records the first finding of a group, found by configuration
// idx; writeFindings writes it.
func (r *Report) newGroup(groups map[string]*FindingGroup, key string, s *corpus.Seed, idx int, step Step) *FindingGroup {
	grp := &FindingGroup{Seed: s, Count: 1, key: key, FirstSim: idx, Step: step, FirstWall: r.wallNow()}
	groups[key] = grp
	r.Findings = append(r.Findings, grp)
	return grp
}

// writeFindings writes the new groups one simulation opened (configuration
// idx; suffix the file names' distinction: a symbolic branch's): their
// seeds, sharing one trace (corpus.WriteSimulation), then findings.json
// and findings.md, and tells Options.OnFinding.
func (r *Report) writeFindings(opt Options, grps []*FindingGroup, idx int, suffix string, log *slog.Logger) error {
	if len(grps) == 0 {
		return nil
	}
	if err := r.writeFinding(opt, grps, idx, suffix, log); err != nil {
		return err
	}
	if opt.OnFinding != nil {
		for _, grp := range grps {
			opt.OnFinding(grp)
		}
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

// TracePath is where, in the campaign directory out, the trace of
// configuration idx is written (suffix: a symbolic branch's): traces/,
// beside findings/, as one simulation's findings share it.
func TracePath(out, method string, idx int, suffix string) string {
	return filepath.Join(out, "traces", fmt.Sprintf("%s-%07d%s%s", method, idx, suffix, corpus.TraceExt))
}

// writeFinding writes the seeds of one simulation as soon as they are
// found, with their plots and the one trace they share. The file name is
// the configuration index, so a resumed campaign that finds it again
// writes the same file; a file there that holds another finding is never
// written over (corpus.WriteSimulation). A seed that cannot be written
// ends the campaign: its error names the path, and the run exits 3
// rather than report a finding it lost.
func (r *Report) writeFinding(opt Options, grps []*FindingGroup, idx int, suffix string, log *slog.Logger) error {
	if opt.Out == "" {
		return nil
	}
	seeds := make([]*corpus.Seed, len(grps))
	paths := make([]string, len(grps))
	for i, grp := range grps {
		grp.Path = filepath.Join(opt.Out, "findings", findingDir(grp.Seed.Finding), fmt.Sprintf("%s-%07d%s.json", r.Method, idx, suffix))
		seeds[i], paths[i] = grp.Seed, grp.Path
	}
	if err := corpus.WriteSimulation(context.Background(), r.subject, seeds, paths, TracePath(opt.Out, r.Method, idx, suffix)); err != nil {
		return fmt.Errorf("writing finding %s: %w", grps[0].Path, err)
	}
	if err := r.writeTriage(opt.Out); err != nil {
		return fmt.Errorf("writing %s: %w", filepath.Join(opt.Out, "findings.md"), err)
	}
	log.Debug("findings written", "paths", paths)
	return nil
}

// loadGroups are a checkpoint's groups (of the campaign directory dir)
// in groups, keyed again by groupKey: groups of an older program that
// share a root cause merge into the first found, their hits summed.
func loadGroups(dir string, cps []checkpointGroup, groups map[string]*FindingGroup) []*FindingGroup {
	var out []*FindingGroup
	for _, g := range cps {
		seed := g.Seed
		key := groupKey(&seed)
		if old := groups[key]; old != nil {
			old.Count += g.Count
			if g.FirstSim < old.FirstSim {
				old.Seed, old.Path, old.FirstSim, old.Step, old.FirstWall = &seed, FindingPath(dir, g.Path), g.FirstSim, g.Step, g.FirstWall
			}
			continue
		}
		grp := &FindingGroup{Seed: &seed, Count: g.Count, Path: FindingPath(dir, g.Path), key: key, FirstSim: g.FirstSim, Step: g.Step, FirstWall: g.FirstWall}
		groups[key] = grp
		out = append(out, grp)
	}
	return out
}

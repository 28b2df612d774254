package triage

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/corpus"
)

// This file is the one place that reads a campaign's findings: the layout
// of findings.json (act.TriageCondition, act.TriageGroup) and where a
// group's seed is (act.FindingPath). When act changes how findings are
// grouped or stored, only this file follows.

// BadInputError is a DIR that is not a campaign, or a findings.json that
// cannot be read as one: the command exits 2.
type BadInputError struct{ Msg string }

func (e *BadInputError) Error() string { return e.Msg }

// Group is one finding group of a campaign, with its seed (nil when the
// seed could not be read: SeedErr says why).
type Group struct {
	Condition act.TriageCondition // its Groups are left out
	act.TriageGroup
	SeedPath string
	Seed     *corpus.Seed
	SeedErr  error
}

// Campaign is what triage reads of a campaign directory.
type Campaign struct {
	Dir    string
	Method string
	Sims   int
	Groups []Group
}

// findingsFile is findings.json as act writes it (Report.writeTriage).
type findingsFile struct {
	Method     string                `json:"method"`
	Sims       int                   `json:"sims"`
	Conditions []act.TriageCondition `json:"conditions"`
}

// Load reads the campaign in dir: campaign.yaml must be there (a DIR
// without it is not a campaign); findings.json, if there, lists the
// groups (no file: no finding yet).
func Load(dir string) (*Campaign, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, &BadInputError{fmt.Sprintf("DIR %s: %v", dir, err)}
	}
	if !st.IsDir() {
		return nil, &BadInputError{fmt.Sprintf("DIR %s: not a directory", dir)}
	}
	if _, err := os.Stat(filepath.Join(dir, "campaign.yaml")); err != nil {
		return nil, &BadInputError{fmt.Sprintf("DIR %s: not a campaign's output directory (no campaign.yaml): %v", dir, err)}
	}
	c := &Campaign{Dir: dir}
	b, err := os.ReadFile(filepath.Join(dir, "findings.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", filepath.Join(dir, "findings.json"), err)
	}
	var ff findingsFile
	if err := json.Unmarshal(b, &ff); err != nil {
		return nil, &BadInputError{fmt.Sprintf("%s: %v", filepath.Join(dir, "findings.json"), err)}
	}
	if ff.Conditions == nil && ff.Method == "" {
		return nil, &BadInputError{fmt.Sprintf("%s: no method and no conditions: not a campaign's findings", filepath.Join(dir, "findings.json"))}
	}
	c.Method, c.Sims = ff.Method, ff.Sims
	for _, tc := range ff.Conditions {
		groups := tc.Groups
		tc.Groups = nil
		for _, g := range groups {
			grp := Group{Condition: tc, TriageGroup: g}
			if g.Seed == "" {
				grp.SeedErr = errors.New("findings.json names no seed file for this group")
			} else {
				grp.SeedPath = act.FindingPath(dir, g.Seed)
				grp.Seed, grp.SeedErr = corpus.ReadSeed(grp.SeedPath)
			}
			c.Groups = append(c.Groups, grp)
		}
	}
	return c, nil
}

// plotOf is the plot WriteArtifacts writes beside a seed.
func plotOf(seedPath string) string {
	if seedPath == "" {
		return ""
	}
	p := seedPath[:len(seedPath)-len(filepath.Ext(seedPath))] + ".png"
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

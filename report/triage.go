package report

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/actfuzz/actfuzz/triage"
)

// triageInfo is the report's triage section: the root causes of
// DIR/triage.json (`actfuzz triage DIR`, or `run --triage`).
type triageInfo struct {
	Counts []kv
	Causes []causeInfo
}

type causeInfo struct {
	Class, Confirmed, Condition, On, Why, Source, Seed, Plot string
}

// triageSection reads the campaign's triage; nil when it was never
// triaged.
func triageSection(out, dir string) (*triageInfo, error) {
	rep, err := triage.ReadReport(out)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	ti := &triageInfo{}
	n := rep.ByClass()
	for _, c := range triage.Classes {
		if n[c] > 0 {
			ti.Counts = append(ti.Counts, kv{string(c), fmt.Sprint(n[c])})
		}
	}
	for _, c := range rep.Causes() {
		ci := causeInfo{Class: string(c.Class), Confirmed: fmt.Sprintf("%d of %d groups", c.Confirmed, c.Groups),
			Condition: c.Condition, On: c.Subject + "/" + c.CCAI, Why: c.Why, Source: c.Source, Seed: c.Seed}
		if c.Minimized != "" {
			ci.Seed = c.Minimized
		}
		if c.Plot != "" {
			if rel, err := filepath.Rel(dir, c.Plot); err == nil {
				ci.Plot = filepath.ToSlash(rel)
			}
		}
		ti.Causes = append(ti.Causes, ci)
	}
	return ti, nil
}

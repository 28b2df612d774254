package act

import (
	"cmp"
	"fmt"
	"os"
	"time"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/coverage"
)

// Elapsed is the campaign's wall time so far, over every resume: the
// running clock inside Run (for Options.OnCheckpoint), Wall after it.
func (r *Report) Elapsed() time.Duration {
	if r.Wall > 0 || r.elapsed == nil {
		return r.Wall
	}
	return r.elapsed()
}

// SubjectName names what ran the campaign's simulations ("native", "ns3",
// "gvisor"); "" when a loaded checkpoint did not record it.
func (r *Report) SubjectName() string {
	if r.subject != nil {
		return r.subject.Name()
	}
	return r.subjectName
}

// ProgramVersion is the build that ran the campaign (corpus.ProgramVersion
// of that build); "" when a loaded checkpoint did not record it.
func (r *Report) ProgramVersion() string {
	if r.subject != nil {
		return corpus.ProgramVersion()
	}
	return r.programVersion
}

// Program is the command that suggested commands start with.
func (r *Report) Program() string { return cmp.Or(r.program, "actfuzz") }

// LoadReport reads the report of the campaign of method checkpointed in
// dir (its store, series, steps and finding groups), for a report written
// after the run. The error wraps os.ErrNotExist when there is none.
func LoadReport(dir, method string) (*Report, error) {
	path := checkpointPath(dir, method)
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cp, r, err := readCheckpointHeader(f, path)
	if err != nil {
		return nil, err
	}
	if cp.Version != checkpointVersion {
		return nil, fmt.Errorf("%s: checkpoint version %d, this program reads %d", path, cp.Version, checkpointVersion)
	}
	st, err := coverage.ReadCheckpoint(r)
	if err != nil {
		return nil, fmt.Errorf("%s: checkpoint store: %w", path, err)
	}
	series := cp.Series
	rep := &Report{Method: cp.Method, Sims: cp.Sims, Wall: cp.Run.Wall, Store: st, Series: &series, StepSims: cp.StepSims,
		StepRegions: cp.StepRegions, Capped: cp.Capped, subjectName: cp.Subject, programVersion: cp.Program}
	if cp.Run.Sym != nil {
		rep.Symbolic = &cp.Run.Sym.SymbolicStats
	}
	rep.Findings = loadGroups(dir, cp.Groups, map[string]*FindingGroup{})
	return rep, nil
}

package act

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/coverage"
	"github.com/actfuzz/actfuzz/netenv"
)

// Status is a campaign's progress.
type Status struct {
	Method   string         `json:"method"`
	Sims     int            `json:"sims"`
	Step     string         `json:"step"`
	SimsPerS float64        `json:"sims_per_s"`
	Regions  map[int]uint64 `json:"-"`
	Findings int            `json:"findings"`
	Faults   int            `json:"faults"`
	// StoreFloor is the store's FloorK: counts at smaller k are estimates.
	StoreFloor int `json:"-"`
	// Elapsed is the campaign's wall time over every resume; Budget and
	// Duration (0: none) are its limits (Budget in simulations: the
	// campaign's less what the symbolic step has charged so far).
	Elapsed  time.Duration `json:"-"`
	Budget   int           `json:"-"`
	Duration time.Duration `json:"-"`
}

// FindingGroup is a set of hits of one root cause (rootCause: the same
// condition, CCAI, subject, flow role and state-machine phase). The first
// hit is kept as the seed.
type FindingGroup struct {
	Seed  *corpus.Seed
	Count int
	Path  string
	// The first hit: its configuration (simulation) index, the step that
	// chose it and the campaign's wall time then (over every resume).
	FirstSim  int
	Step      Step
	FirstWall time.Duration
	key       string
}

// Report is the outcome of a campaign run.
type Report struct {
	Method   string
	Sims     int
	Wall     time.Duration // over every resume
	Store    *coverage.Store
	Series   *coverage.Series
	Findings []*FindingGroup
	// StepSims counts simulations per step; StepRegions[step][l] counts
	// the regions at k = 2^l first reached by a simulation of that step
	// (ACT §4.2, Fig. 10: which step found what).
	StepSims    map[Step]int
	StepRegions map[Step][]uint64
	// Symbolic is what the symbolic step did (nil when the campaign has
	// no symbolic: key); its simulation-equivalents are StepSims[StepSymbolic].
	Symbolic *SymbolicStats
	Capped   int // runs stopped by the simulated-time cap
	// PhasesCapped counts the schedules ACT did not extend because they
	// had netenv.MaxPhases phases (in this process: not checkpointed).
	PhasesCapped int
	// Unreproduced counts the results from elsewhere (a cluster's hosts)
	// whose findings the coordinator's own run of the configuration did
	// not reproduce: replaced by that run (verify.go; in this process,
	// not checkpointed).
	Unreproduced int
	// StatesDropped counts the simulations whose states a cluster worker
	// host did not send, their result being over the coordinator's limit
	// (Result.StatesDropped): their coverage is not in the store.
	StatesDropped int
	subject       netenv.Subject
	elapsed       func() time.Duration // the campaign's wall time so far
	program       string               // Options.Program
	// onCheckpoint is Options.OnCheckpoint; subjectName and programVersion
	// are a loaded report's (LoadReport), whose subject is not running.
	onCheckpoint   func(*Report)
	subjectName    string
	programVersion string
	// writeStore, if set, writes the store's checkpoint instead of
	// Store.WriteTo (store parts: coverage.WriteSplit).
	writeStore func(io.Writer) (int64, error)
	// live is what status.json and the status line say between merges
	// (livestatus.go).
	live liveCounts
}

// NoneInS says whether no state of the campaign so far landed inside S
// (every one was outside a range of S): coverage is zero at every k.
func (r *Report) NoneInS() bool {
	for _, n := range r.Regions() {
		if n > 0 {
			return false
		}
	}
	return true
}

// Regions returns the visited regions at every k.
func (r *Report) Regions() map[int]uint64 {
	m := map[int]uint64{}
	for _, k := range r.Store.Space().Ks() {
		m[k] = r.Store.VisitedRegions(k)
	}
	return m
}

// stepFound is StepRegions[step], made if needed.
func (r *Report) stepFound(step Step, levels int) []uint64 {
	found := r.StepRegions[step]
	if found == nil {
		found = make([]uint64, levels)
		r.StepRegions[step] = found
	}
	return found
}

func (r *Report) status(step Step, elapsed time.Duration) Status {
	st := Status{Method: r.Method, Sims: r.Sims, SimsPerS: float64(r.Sims) / elapsed.Seconds(), Regions: r.Regions(),
		StoreFloor: r.Store.FloorK()}
	if r.Method == "act" {
		st.Step = step.String()
	} else {
		st.Step = r.Method
	}
	for _, g := range r.Findings {
		if g.Seed.Finding.Kind == "condition" {
			st.Findings++
		} else {
			st.Faults++
		}
	}
	return st
}

func (r *Report) seedOf(c *Campaign, g Config) *corpus.Seed {
	s := corpus.NewSeed(r.subject.Name(), c.Setup, g.Seed, g.Schedule)
	// A real kernel's seed says which kernel (the linux subject).
	if k, ok := r.subject.(interface{ Release() string }); ok {
		s.Kernel = k.Release()
	}
	return s
}

func (r *Report) writeOutputs(dir string, done bool) error {
	cov := filepath.Join(dir, "coverage")
	if err := os.MkdirAll(cov, 0o755); err != nil {
		return err
	}
	var tbl strings.Builder
	snap := r.Store.Snapshot(r.Method, int64(r.Sims))
	if err := coverage.WriteMarkdown(&tbl, snap); err != nil {
		return err
	}
	if err := corpus.WriteFileAtomic(filepath.Join(cov, "table.md"), []byte(tbl.String())); err != nil {
		return err
	}
	if r.NoneInS() {
		// Nothing to plot: the table and status.json say so.
		return r.writeStatus(dir, r.Wall, done)
	}
	if err := coverage.SaveCoveragePlot(filepath.Join(cov, "coverage.png"), snap); err != nil {
		return err
	}
	// Figs. 9–10: growth of coverage(S,2) and coverage(S,128).
	for _, k := range []int{2, 128} {
		if _, ok := r.Store.Space().Level(k); !ok || len(r.Series.Points) == 0 {
			continue
		}
		if err := coverage.SaveGrowthPlot(filepath.Join(cov, fmt.Sprintf("growth-k%d.png", k)), k, r.Series); err != nil {
			return err
		}
	}
	return r.writeStatus(dir, r.Wall, done)
}

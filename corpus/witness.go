package corpus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/symbolic"
)

// Witness is what a seed written by the symbolic back-end (`actfuzz sym
// --seeds DIR`) carries instead of a campaign configuration: its scenario
// and one delay vector of one branch (an equivalence class of delay
// vectors), with what that branch produced. Replaying the seed runs the
// scenario on the ordinary simulator, with the heap scheduler every other
// run uses, the uncertain packets taking exactly these delays.
type Witness struct {
	// Scenario is the scenario in the JSON form of actfuzz sym's YAML
	// scenario files (same keys).
	Scenario json.RawMessage `json:"scenario"`
	// DelaysMS are the delays d1…dn of the window's packets.
	DelaysMS   []float64 `json:"delays_ms"`
	Branch     int       `json:"branch"`
	Reductions string    `json:"reductions"`
	// Constraints are the branch's class: every delay vector satisfying
	// them has the same event order and outcome.
	Constraints []string `json:"constraints,omitempty"`
	// Why this witness was written: "outcome K", "min METRIC", "max
	// METRIC" or "branch".
	Why         []string          `json:"why"`
	Outcome     string            `json:"outcome"`
	Metrics     []symbolic.Metric `json:"metrics"`
	Conditions  []string          `json:"conditions,omitempty"`
	TraceSHA256 string            `json:"trace_sha256"`
}

// scenario parses the witness's scenario.
func (w *Witness) scenario() (*symbolic.Scenario, error) {
	sc, err := symbolic.ParseScenarioJSON(w.Scenario)
	if err != nil {
		return nil, fmt.Errorf("witness.scenario: %w", err)
	}
	return sc, nil
}

// validateWitness checks a witness seed read from a file.
func (s *Seed) validateWitness() error {
	w := s.Witness
	switch {
	case s.Subject != "native":
		return fmt.Errorf("subject %q: witness seeds pin packet delays, which only the native simulator can (want native)", s.Subject)
	case len(s.Schedule) > 0:
		return errors.New("schedule: a witness seed's network is its scenario; schedule must be empty")
	case s.Finding != nil:
		return errors.New("finding: a witness seed records its outcome under witness, not finding")
	case len(w.Scenario) == 0:
		return errors.New("witness.scenario: missing")
	case w.Outcome == "":
		return errors.New("witness.outcome: missing")
	}
	sc, err := w.scenario()
	if err != nil {
		return err
	}
	if err := sc.CheckDelays(w.DelaysMS); err != nil {
		return fmt.Errorf("witness.delays_ms: %w", err)
	}
	return nil
}

// WitnessSeed turns one branch of an exploration into a seed. It replays
// the witness on the default scheduler and fails if the replay does not
// give the branch's outcome: a class whose own witness leaves it would be a
// bug of the back-end, not a finding.
func WitnessSeed(ctx context.Context, sc *symbolic.Scenario, rep *symbolic.Report, ref symbolic.WitnessRef) (*Seed, error) {
	raw, err := symbolic.ScenarioJSON(sc)
	if err != nil {
		return nil, err
	}
	got, err := symbolic.Replay(ctx, sc, ref.DelaysMS, nil)
	if err != nil {
		return nil, fmt.Errorf("branch %d: replaying witness %v: %w", ref.Branch, ref.DelaysMS, err)
	}
	if got.Outcome != ref.Outcome {
		return nil, fmt.Errorf("branch %d: witness %v replays to %q, the exploration recorded %q", ref.Branch, ref.DelaysMS, got.Outcome, ref.Outcome)
	}
	s := &Seed{
		Version: SeedVersion,
		Program: ProgramVersion(),
		Subject: "native",
		Witness: &Witness{
			Scenario: raw, DelaysMS: ref.DelaysMS, Branch: ref.Branch, Reductions: rep.Reductions,
			Constraints: ref.Constraints, Why: ref.Why, Outcome: got.Outcome, Metrics: got.Metrics,
			Conditions: got.Conditions, TraceSHA256: got.TraceSHA256,
		},
	}
	if t := sc.TCP; t != nil {
		s.Profile = t.Profile.String()
		s.SACK = t.SACK
		s.Seed = t.Seed
		for _, f := range t.Flows {
			s.CCAI = append(s.CCAI, f.CCA)
		}
	}
	return s, nil
}

// WriteWitnessSeeds writes a seed, with its trace and plot, for every
// branch that Report.Witnesses(every) lists, into dir as
// SCENARIO-branch-ID.json (.csv, .png). It returns the seed paths.
func WriteWitnessSeeds(ctx context.Context, sc *symbolic.Scenario, rep *symbolic.Report, dir string, every bool) ([]string, error) {
	var paths []string
	for _, ref := range rep.Witnesses(every) {
		s, err := WitnessSeed(ctx, sc, rep, ref)
		if err != nil {
			return paths, err
		}
		path := filepath.Join(dir, fmt.Sprintf("%s-branch-%d.json", fileSafe(sc.Name), ref.Branch))
		if err := WriteArtifacts(ctx, nil, s, path); err != nil {
			return paths, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// fileSafe keeps letters, digits, '-', '_' and '.' of a name.
func fileSafe(name string) string {
	s := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, name)
	if s == "" {
		return "scenario"
	}
	return s
}

// replayWitness re-runs a witness seed and compares the outcome, the
// conditions and the trace hash with the recorded ones.
func replayWitness(ctx context.Context, s *Seed, tr *symbolic.Tracing) (*ReplayResult, error) {
	w := s.Witness
	sc, err := w.scenario()
	if err != nil {
		return nil, err
	}
	got, err := symbolic.Replay(ctx, sc, w.DelaysMS, tr)
	if err != nil {
		return nil, err
	}
	out := &ReplayResult{HitTimeNS: -1, Witness: got}
	out.Result.Events, out.Result.TraceSHA256 = got.Events, got.TraceSHA256
	if got.Outcome != w.Outcome {
		out.Diff = append(out.Diff, fmt.Sprintf("outcome %q, recorded %q", got.Outcome, w.Outcome))
	}
	if !slices.Equal(got.Conditions, w.Conditions) {
		out.Diff = append(out.Diff, fmt.Sprintf("conditions %v, recorded %v", got.Conditions, w.Conditions))
	}
	if w.TraceSHA256 != "" && got.TraceSHA256 != w.TraceSHA256 {
		out.Diff = append(out.Diff, fmt.Sprintf("trace sha256 %s, recorded %s", got.TraceSHA256, w.TraceSHA256))
	}
	out.Reproduced = len(out.Diff) == 0
	return out, nil
}

// ReplayWitness replays a witness seed, tracing it with tr (may be nil).
func ReplayWitness(ctx context.Context, s *Seed, tr *symbolic.Tracing) (*ReplayResult, error) {
	if s.Witness == nil {
		return nil, errors.New("not a witness seed")
	}
	return replayWitness(ctx, s, tr)
}

// WitnessArtifacts replays a witness seed with a trace and a plot: the
// state trace of TCP scenarios (cwnd, ssthresh, ca_state, …) or the
// deliveries of topology scenarios. Save writes the plot.
type WitnessArtifacts struct {
	tcp      bool
	state    *netenv.CSVTrace
	csv      bytes.Buffer
	plot     *TracePlot
	delivery *DeliveryTrace
	title    string
}

// NewWitnessArtifacts prepares the trace of a witness seed's replay (a
// validated seed: its scenario parses).
func NewWitnessArtifacts(s *Seed) *WitnessArtifacts {
	w := s.Witness
	a := &WitnessArtifacts{title: fmt.Sprintf("witness of branch %d: d = %v ms", w.Branch, w.DelaysMS)}
	sc, err := w.scenario()
	if err == nil && sc.TCP != nil {
		a.tcp = true
		a.title = sc.Name + ", " + a.title
		a.state = netenv.NewCSVTrace(&a.csv, netenv.NativeCapabilities(), sc.TCP.Flows[0].CCA)
		a.plot = &TracePlot{}
		a.state.Next = a.plot
	} else {
		a.delivery = &DeliveryTrace{}
	}
	return a
}

// Tracing is what to pass to ReplayWitness.
func (a *WitnessArtifacts) Tracing() *symbolic.Tracing {
	if a.tcp {
		return &symbolic.Tracing{State: a.state}
	}
	return &symbolic.Tracing{Delivery: a.delivery.Add}
}

// CSV returns the trace after the replay.
func (a *WitnessArtifacts) CSV() ([]byte, error) {
	if a.tcp {
		if err := a.state.Flush(); err != nil {
			return nil, err
		}
		return a.csv.Bytes(), nil
	}
	var b bytes.Buffer
	err := a.delivery.WriteCSV(&b)
	return b.Bytes(), err
}

// SavePlot writes the plot after the replay.
func (a *WitnessArtifacts) SavePlot(path string) error {
	if a.tcp {
		return a.plot.Save(path, a.title, nil, -1, 0)
	}
	return a.delivery.Save(path, a.title)
}

func writeWitnessArtifacts(ctx context.Context, s *Seed, base string) error {
	a := NewWitnessArtifacts(s)
	res, err := replayWitness(ctx, s, a.Tracing())
	if err != nil {
		return fmt.Errorf("replaying %s.json: %w", base, err)
	}
	if !res.Reproduced {
		return fmt.Errorf("%s.json does not reproduce: %s", base, strings.Join(res.Diff, "; "))
	}
	csv, err := a.CSV()
	if err != nil {
		return err
	}
	if err := WriteFileAtomic(base+".csv", csv); err != nil {
		return err
	}
	return a.SavePlot(base + ".png")
}

package corpus

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/internal/capread"
	"github.com/actfuzz/actfuzz/internal/suggest"
	"github.com/actfuzz/actfuzz/netenv"
)

// SeedVersion is the version of the seed file format written by this
// program. Readers accept versions up to it. Version 2 added witness,
// version 3 symbolic_window, version 4 finding.trace; all are optional,
// so every earlier seed reads as it did.
const SeedVersion = 4

// Seed is a replayable simulation configuration (schema version 2):
//
//	{
//	  "version": 1,                  // format version
//	  "program": "actfuzz 0.1",      // writer
//	  "subject": "native",           // what ran it
//	  "ccai": ["cubic"],             // one entry per flow
//	  "profile": "linux",            // or "linux-3.10"
//	  "topology": "single-link",
//	  "bytes": 15000000,             // per flow
//	  "sack": true,
//	  "seed": 42,                    // e
//	  "schedule": [{"env": {...}, "until_ns": 1500000000}, {"env": {...}, "until_ns": 0}],
//	  "finding": {...}               // present for findings
//	  "witness": {...}               // symbolic witnesses: see Witness
//	  "pinned_delays": {...}         // actfuzz sym --seed witnesses: see PinnedDelays
//	  "symbolic_window": {...}       // the window of ACT's symbolic step a hang was found in: see SymWindow
//	}
//
// A seed written by the symbolic back-end carries a Witness (its scenario
// and delay vector) instead of ccai … schedule, which are then informative
// or empty.
type Seed struct {
	Version  int      `json:"version"`
	Program  string   `json:"program"`
	Subject  string   `json:"subject"`
	CCAI     []string `json:"ccai,omitempty"`
	Profile  string   `json:"profile,omitempty"`
	Topology string   `json:"topology,omitempty"`
	Bytes    uint64   `json:"bytes,omitempty"`
	SACK     bool     `json:"sack"`
	// Handshake: the connections open with SYN and SYN-ACK (native).
	Handshake bool   `json:"handshake,omitempty"`
	Seed      uint64 `json:"seed"`
	// Kernel is the kernel release (uname -r) a linux-subject seed ran
	// on: that subject's runs are the kernel's, and statistical.
	Kernel   string          `json:"kernel,omitempty"`
	Schedule netenv.Schedule `json:"schedule,omitempty"`
	// LinkTraces are the user's trace files (link_trace user1 …), with
	// their content, so the seed replays anywhere.
	LinkTraces []*netenv.LinkTraceFile `json:"link_traces,omitempty"`
	Finding    *Finding                `json:"finding,omitempty"`
	Witness    *Witness                `json:"witness,omitempty"`
	// Pinned, on a native seed, gives a window of packets fixed extra
	// delays on top of the seed's own random ones (actfuzz sym --seed):
	// see PinnedDelays.
	Pinned *PinnedDelays `json:"pinned_delays,omitempty"`
	// SymWindow, on a native seed, names the window of ACT's symbolic
	// step its finding was found in (a hang of the window): `actfuzz
	// replay` explores that window again. See SymWindow.
	SymWindow *SymWindow `json:"symbolic_window,omitempty"`
}

// Finding is what a condition hit adds to a seed.
type Finding struct {
	Condition string `json:"condition"`
	When      string `json:"when"`
	// While and For make the condition a property of a stretch of time
	// (ConditionSpec).
	While string `json:"while,omitempty"`
	For   string `json:"for,omitempty"`
	// Only and Source are the condition's (ConditionSpec): the flows'
	// congestion controls it applies to, and the section of a standard
	// or paper it checks (an oracle's).
	Only   []string    `json:"only,omitempty"`
	Source string      `json:"source,omitempty"`
	Kind   string      `json:"kind"` // "condition", or a subject fault: "panic", "hang", "oom", "crash", "zero-cwnd", "nan", "event-cap", "refused" (the subject refused a configuration ACT chose), or "condition-fault" (the condition named failed to run)
	TimeNS int64       `json:"time_ns"`
	Flow   int         `json:"flow"`
	State  StateValues `json:"state,omitempty"`
	Detail string      `json:"detail,omitempty"`
	// Trace is the finding's stored state trace and what of the run it
	// keeps (seed version 4; none in a seed not written with a replay).
	Trace *TraceRef `json:"trace,omitempty"`
}

// StateValues are named state values: numbers (float64) and the names of
// categorical values. JSON has no NaN or infinity, so non-finite numbers are
// written as the strings "NaN", "+Inf" and "-Inf" and read back as numbers:
// a finding whose state holds them is written and replays like any other.
type StateValues map[string]any

// MarshalJSON writes non-finite numbers as "NaN", "+Inf" or "-Inf".
func (m StateValues) MarshalJSON() ([]byte, error) {
	if m == nil {
		return []byte("null"), nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		if f, ok := v.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
			v = nonFinite(f)
		}
		out[k] = v
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads "NaN", "+Inf", "Inf" and "-Inf" back as numbers.
func (m *StateValues) UnmarshalJSON(b []byte) error {
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	for k, v := range raw {
		if s, ok := v.(string); ok {
			switch s {
			case "NaN":
				raw[k] = math.NaN()
			case "+Inf", "Inf":
				raw[k] = math.Inf(1)
			case "-Inf":
				raw[k] = math.Inf(-1)
			}
		}
	}
	*m = raw
	return nil
}

func nonFinite(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case f > 0:
		return "+Inf"
	}
	return "-Inf"
}

// NewSeed is the seed of one run of a test input: setup st with seed e and
// schedule sched, run by subject.
func NewSeed(subject string, st netenv.Setup, e uint64, sched netenv.Schedule) *Seed {
	return &Seed{Version: SeedVersion, Program: ProgramVersion(), Subject: subject, CCAI: slices.Clone(st.CCAI),
		Profile: st.Profile.String(), Topology: st.Topology, Bytes: st.Bytes, SACK: st.SACK, Handshake: st.Handshake,
		Seed: e, Schedule: sched, LinkTraces: st.LinkTraces}
}

// Setup is the seed's fixed part, NewSeed's inverse.
func (s *Seed) Setup() (netenv.Setup, error) {
	prof, err := ccai.ParseProfile(s.Profile)
	if err != nil {
		return netenv.Setup{}, fmt.Errorf("profile: %w", err)
	}
	if err := netenv.LoadLinkTraces(s.LinkTraces); err != nil {
		return netenv.Setup{}, err
	}
	return netenv.Setup{CCAI: s.CCAI, Topology: s.Topology, Profile: prof, Bytes: s.Bytes, SACK: s.SACK, Handshake: s.Handshake,
		LinkTraces: s.LinkTraces}, nil
}

// Config converts a seed into a run configuration.
func (s *Seed) Config() (netenv.Config, error) {
	if s.Witness != nil {
		return netenv.Config{}, errors.New("witness: this seed replays a symbolic scenario with pinned packet delays; it has no campaign configuration")
	}
	st, err := s.Setup()
	if err != nil {
		return netenv.Config{}, err
	}
	cfg := st.Config(s.Seed, s.Schedule)
	if err := cfg.Validate(); err != nil {
		return netenv.Config{}, err
	}
	if s.Pinned != nil {
		if err := s.Pinned.apply(&cfg); err != nil {
			return netenv.Config{}, fmt.Errorf("pinned_delays: %w", err)
		}
	}
	return cfg, nil
}

// Validate checks a seed read from a file.
func (s *Seed) Validate() error {
	switch {
	case s.Version < 1 || s.Version > SeedVersion:
		return fmt.Errorf("version %d: this program reads versions 1–%d", s.Version, SeedVersion)
	case !slices.Contains(netenv.SubjectNames(), s.Subject):
		return fmt.Errorf("subject %q: want %s", s.Subject, suggest.OrList(netenv.SubjectNames()))
	case s.Witness != nil && s.Pinned != nil:
		return errors.New("pinned_delays: a witness seed pins its delays under witness")
	case s.Witness != nil:
		return s.validateWitness()
	case s.Pinned != nil && s.Subject != "native":
		return fmt.Errorf("subject %q: pinned_delays need the native simulator (want native)", s.Subject)
	case s.SymWindow != nil && s.Subject != "native":
		return fmt.Errorf("subject %q: symbolic_window needs the native simulator (want native)", s.Subject)
	case s.SymWindow != nil && s.Pinned != nil:
		return errors.New("symbolic_window: the seed pins a window's delays already (pinned_delays); give one or the other")
	case len(s.CCAI) == 0:
		return errors.New("ccai: missing")
	case s.Bytes == 0:
		return errors.New("bytes: missing or zero")
	}
	if s.Subject == "native" {
		for _, c := range s.CCAI {
			if _, ok := ccai.Lookup(c); !ok {
				if s.Program != "" && s.Program != ProgramVersion() {
					return fmt.Errorf("ccai: congestion control %q is not in this program (%s); the seed was written by %s: replay it with that program (known here: %v)", c, ProgramVersion(), s.Program, ccai.Names())
				}
				return fmt.Errorf("ccai: unknown congestion control %q (known: %v)", c, ccai.Names())
			}
		}
	}
	if f := s.Finding; f != nil && (f.Kind == "condition" || f.Kind == FaultCondition) {
		if f.When == "" {
			return errors.New("finding.when: missing")
		}
		// A seed's condition runs at every record of its replay: its
		// name and cost are checked as a campaign's are.
		if err := f.Spec().Check(); err != nil {
			return fmt.Errorf("finding: %w", err)
		}
	}
	if s.Finding != nil && s.Finding.TimeNS < 0 {
		return fmt.Errorf("finding.time_ns: %d: want a time ≥ 0", s.Finding.TimeNS)
	}
	if s.Finding != nil && (s.Finding.Flow < 0 || s.Finding.Flow >= len(s.CCAI)) {
		return fmt.Errorf("finding.flow: %d: want 0–%d (one per ccai entry)", s.Finding.Flow, len(s.CCAI)-1)
	}
	if s.Finding != nil && s.Finding.Trace != nil {
		if err := s.Finding.Trace.validate(); err != nil {
			return fmt.Errorf("finding.trace: %w", err)
		}
	}
	if w := s.SymWindow; w != nil {
		if _, err := w.Options(); err != nil {
			return err
		}
		if w.Flow != nil && *w.Flow >= len(s.CCAI) {
			return fmt.Errorf("symbolic_window.flow: %d: want 0–%d (one per ccai entry)", *w.Flow, len(s.CCAI)-1)
		}
	}
	_, err := s.Config()
	return err
}

// MaxSeedBytes (max_seed_bytes) caps a seed file. A seed is a
// configuration and a finding, a few kilobytes, plus its user trace files
// compressed (netenv.MaxLinkTraceFiles of at most netenv.MaxLinkTraceBytes
// each, which compress four- to tenfold, in base64): 128 MiB holds four
// traces at their cap.
const MaxSeedBytes = 128 << 20

// ReadSeed loads and validates a seed file (at most MaxSeedBytes).
func ReadSeed(path string) (*Seed, error) {
	s, err := readSeedFile(path)
	if err != nil {
		return nil, err
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// readSeedFile reads and decodes a seed file, without validating it.
func readSeedFile(path string) (*Seed, error) {
	b, err := capread.ReadFile(path, MaxSeedBytes, "max_seed_bytes", false)
	if err != nil {
		return nil, err
	}
	var s Seed
	dec := json.NewDecoder(bytesReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s: malformed seed file: %w", path, err)
	}
	return &s, nil
}

// WriteFileAtomic writes data to path through a temporary file in the same
// directory and a rename, so readers see the old file or the new one, never
// a torn one.
func WriteFileAtomic(path string, data []byte) error {
	return WriteAtomic(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Write stores the seed as indented JSON, atomically.
func (s *Seed) Write(path string) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // conditions read "cwnd > ssthresh && …", not \u003e
	if err := enc.Encode(s); err != nil {
		return err
	}
	return WriteFileAtomic(path, b.Bytes())
}

// Clone is a deep copy of the seed (through its JSON form, which
// round-trips exactly): one that shares no slice with s, for a run that
// may outlive its caller's use of s (an abandoned symbolic window keeps
// restoring snapshots that hold its configuration's slices).
func (s *Seed) Clone() (*Seed, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var c Seed
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// EnvAt returns the environment in force at time t.
func EnvAt(sched netenv.Schedule, t time.Duration) netenv.Env {
	for i, ph := range sched {
		if i == len(sched)-1 || t < ph.Until {
			return ph.Env
		}
	}
	return sched[len(sched)-1].Env
}

package symbolic

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/internal/capread"
	"github.com/actfuzz/actfuzz/internal/names"
	"github.com/actfuzz/actfuzz/internal/yamlerr"
	"github.com/actfuzz/actfuzz/netenv"
)

// YAML scenario files.

type yamlScenario struct {
	Name       string          `yaml:"name" json:"name"`
	EndS       float64         `yaml:"end_s" json:"end_s"`
	Topology   *yamlTopology   `yaml:"topology,omitempty" json:"topology,omitempty"`
	TCP        *yamlTCP        `yaml:"tcp,omitempty" json:"tcp,omitempty"`
	Window     yamlWindow      `yaml:"window" json:"window"`
	Metrics    []string        `yaml:"metrics,omitempty" json:"metrics,omitempty"`
	Conditions []ConditionSpec `yaml:"conditions,omitempty" json:"conditions,omitempty"`
}

type yamlTopology struct {
	Nodes       int               `yaml:"nodes" json:"nodes"`
	Links       []netenv.TopoLink `yaml:"links" json:"links"`
	CBR         []yamlCBR         `yaml:"cbr" json:"cbr"`
	HeaderBytes uint32            `yaml:"header_bytes,omitempty" json:"header_bytes,omitempty"`
}

type yamlCBR struct {
	Src         int     `yaml:"src" json:"src"`
	Dst         int     `yaml:"dst" json:"dst"`
	PacketBytes uint32  `yaml:"packet_bytes" json:"packet_bytes"`
	Rate        float64 `yaml:"rate" json:"rate"` // Mbit/s
	StartS      float64 `yaml:"start_s" json:"start_s"`
	StopS       float64 `yaml:"stop_s" json:"stop_s"`
}

type yamlTCP struct {
	Handshake bool          `yaml:"handshake,omitempty" json:"handshake,omitempty"`
	Env       netenv.Env    `yaml:"env" json:"env"`
	Flows     []netenv.Flow `yaml:"flows" json:"flows"`
	SACK      *bool         `yaml:"sack" json:"sack"`
	Profile   string        `yaml:"profile" json:"profile"`
	Seed      uint64        `yaml:"seed" json:"seed"`
}

type yamlWindow struct {
	Flow  int     `yaml:"flow" json:"flow"`
	Last  int     `yaml:"last" json:"last,omitempty"`
	From  *int    `yaml:"from" json:"from,omitempty"`
	Count int     `yaml:"count" json:"count,omitempty"`
	Kind  string  `yaml:"kind" json:"kind,omitempty"`
	Hop   []int   `yaml:"hop" json:"hop,omitempty"`
	LoMS  float64 `yaml:"lo_ms" json:"lo_ms"`
	HiMS  float64 `yaml:"hi_ms" json:"hi_ms"`
	ResMS float64 `yaml:"resolution_ms" json:"resolution_ms"`
}

func msDur(v float64) time.Duration { return time.Duration(math.Round(v * 1e6)) }

// MaxScenarioBytes (max_scenario_bytes) caps a scenario file: the
// examples are under 2 kB.
const MaxScenarioBytes = 4 << 20

// LoadScenario reads a YAML scenario file (at most MaxScenarioBytes).
// Errors name the file, and the line and the field of a value of the
// wrong type (s.yaml:2: end_s: want a number, not "ten").
func LoadScenario(path string) (*Scenario, error) {
	b, err := capread.ReadFile(path, MaxScenarioBytes, "max_scenario_bytes", false)
	if err != nil {
		return nil, err
	}
	y, err := decodeScenario(path, b)
	if err != nil {
		return nil, err
	}
	sc, err := y.scenario()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return sc, nil
}

// ParseScenario parses a YAML scenario. Unknown keys are errors that name
// the field.
func ParseScenario(b []byte) (*Scenario, error) {
	y, err := decodeScenario("scenario", b)
	if err != nil {
		return nil, err
	}
	return y.scenario()
}

// decodeScenario decodes a scenario file; errors name path, the line and
// the field.
func decodeScenario(path string, b []byte) (*yamlScenario, error) {
	if len(b) > MaxScenarioBytes {
		return nil, fmt.Errorf("%s: %d bytes, over the cap of %d (max_scenario_bytes)", path, len(b), MaxScenarioBytes)
	}
	var y yamlScenario
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&y); err != nil && !errors.Is(err, io.EOF) {
		return nil, yamlerr.Rewrite(path, b, err, scenarioKeys)
	}
	return &y, nil
}

// scenarioKeys are the keys of a scenario file, for "did you mean"
// suggestions: the top level's, or those of nested mappings.
func scenarioKeys(nested bool) []string {
	types := []any{yamlScenario{}}
	if nested {
		types = []any{yamlTopology{}, yamlCBR{}, yamlTCP{}, yamlWindow{}, ConditionSpec{}, netenv.Env{}, netenv.Flow{}, netenv.TopoLink{}}
	}
	var keys []string
	for _, v := range types {
		t := reflect.TypeOf(v)
		for i := range t.NumField() {
			if k, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); k != "" && k != "-" {
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// ParseScenarioJSON parses the JSON form of a scenario (the same keys as
// the YAML form), as seeds carry it.
func ParseScenarioJSON(b []byte) (*Scenario, error) {
	var y yamlScenario
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&y); err != nil {
		return nil, err
	}
	return y.scenario()
}

// ScenarioJSON renders a scenario in the JSON form ParseScenarioJSON reads.
func ScenarioJSON(sc *Scenario) (json.RawMessage, error) {
	y, err := encode(sc)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // conditions keep their > and &&
	if err := enc.Encode(y); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(b.Bytes()), nil
}

func (y *yamlScenario) scenario() (*Scenario, error) {
	sc := &Scenario{Name: y.Name, End: time.Duration(math.Round(y.EndS * 1e9)), Metrics: y.Metrics, Conditions: y.Conditions}
	if sc.Name == "" {
		sc.Name = "scenario"
	}
	if err := names.Check(sc.Name); err != nil {
		return nil, err
	}
	for i, cs := range sc.Conditions {
		if err := names.Check(cs.Name); err != nil {
			return nil, fmt.Errorf("conditions[%d].%w", i, err)
		}
	}
	if y.EndS <= 0 {
		return nil, errors.New("end_s: the end of the simulation (s) must be given and > 0")
	}
	switch {
	case y.Topology != nil && y.TCP != nil:
		return nil, errors.New("topology and tcp: give one of them")
	case y.Topology != nil:
		t := &netenv.Topology{Nodes: y.Topology.Nodes, Links: y.Topology.Links, HeaderBytes: y.Topology.HeaderBytes}
		for _, f := range y.Topology.CBR {
			t.CBR = append(t.CBR, netenv.CBRFlow{
				Src: f.Src, Dst: f.Dst, PacketBytes: f.PacketBytes, Rate: f.Rate,
				Start: time.Duration(math.Round(f.StartS * 1e9)), Stop: time.Duration(math.Round(f.StopS * 1e9)),
			})
		}
		sc.Topology = t
	case y.TCP != nil:
		// Unset parameters are 0 (no loss, no random queuing: the
		// symbolic window is the only uncertainty), except the two that
		// cannot be: the application and the buffer take DefaultEnv's.
		e := y.TCP.Env
		def := netenv.DefaultEnv()
		if e.App == 0 {
			e.App = def.App
		}
		if e.Buffer == 0 {
			e.Buffer = def.Buffer
		}
		t := &TCPSpec{Env: e, Flows: y.TCP.Flows, SACK: true, Seed: y.TCP.Seed, Handshake: y.TCP.Handshake}
		if y.TCP.SACK != nil {
			t.SACK = *y.TCP.SACK
		}
		if y.TCP.Profile != "" {
			p, err := ccai.ParseProfile(y.TCP.Profile)
			if err != nil {
				return nil, fmt.Errorf("tcp.profile: %w", err)
			}
			t.Profile = p
		}
		sc.TCP = t
	default:
		return nil, errors.New("topology or tcp: one of them must be given")
	}
	w := y.Window
	sc.Window = Window{Flow: w.Flow, Kind: w.Kind, Lo: msDur(w.LoMS), Hi: msDur(w.HiMS), Res: msDur(w.ResMS)}
	if w.ResMS == 0 {
		sc.Window.Res = time.Millisecond
	}
	if w.LoMS == 0 && w.HiMS == 0 {
		return nil, errors.New("window.lo_ms, window.hi_ms: the delay interval must be given")
	}
	switch {
	case w.Last > 0 && (w.From != nil || w.Count > 0):
		return nil, errors.New("window.last: give either last or from/count")
	case w.Last > 0:
		sc.Window.Select, sc.Window.N = "last", w.Last
	case w.Kind == "fin" || w.Kind == "syn" || w.Kind == "syn-ack" || w.Kind == "synack":
		if w.From != nil || w.Count > 1 {
			return nil, fmt.Errorf("window.kind: %s is one packet; from and count do not apply", w.Kind)
		}
		sc.Window.Select, sc.Window.N = "kind", 1
	case w.From != nil:
		sc.Window.Select, sc.Window.From, sc.Window.N = "range", *w.From, w.Count
		if w.Kind != "" {
			sc.Window.Select = "kind"
		}
		if w.Count == 0 {
			sc.Window.N = 1
		}
	default:
		return nil, errors.New("window: give last: N, from: I with count: N, or kind: fin, syn or syn-ack")
	}
	if len(w.Hop) > 0 {
		if len(w.Hop) != 2 {
			return nil, fmt.Errorf("window.hop: %v, want [from, to]", w.Hop)
		}
		sc.Window.Hop = &[2]int{w.Hop[0], w.Hop[1]}
	}
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	return sc, nil
}

// EncodeScenario renders a scenario in the YAML form ParseScenario reads,
// so that a seed can carry its scenario next to a witness for Replay.
func EncodeScenario(sc *Scenario) ([]byte, error) {
	y, err := encode(sc)
	if err != nil {
		return nil, err
	}
	return yaml.Marshal(y)
}

func encode(sc *Scenario) (*yamlScenario, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	y := yamlScenario{Name: sc.Name, EndS: sc.End.Seconds(), Metrics: sc.Metrics, Conditions: sc.Conditions}
	if t := sc.Topology; t != nil {
		yt := &yamlTopology{Nodes: t.Nodes, Links: t.Links, HeaderBytes: t.HeaderBytes}
		for _, f := range t.CBR {
			yt.CBR = append(yt.CBR, yamlCBR{Src: f.Src, Dst: f.Dst, PacketBytes: f.PacketBytes, Rate: f.Rate, StartS: f.Start.Seconds(), StopS: f.Stop.Seconds()})
		}
		y.Topology = yt
	} else {
		t := sc.TCP
		sack := t.SACK
		y.TCP = &yamlTCP{Env: t.Env, Flows: t.Flows, SACK: &sack, Profile: t.Profile.String(), Seed: t.Seed, Handshake: t.Handshake}
	}
	w := sc.Window
	res := w.Res
	if res == 0 {
		res = time.Millisecond
	}
	y.Window = yamlWindow{Flow: w.Flow, Kind: w.Kind, LoMS: float64(w.Lo) / 1e6, HiMS: float64(w.Hi) / 1e6, ResMS: float64(res) / 1e6}
	switch w.Select {
	case "", "last":
		y.Window.Last = w.N
	default:
		switch w.Kind {
		case "fin", "syn", "syn-ack", "synack":
		default:
			from := w.From
			y.Window.From, y.Window.Count = &from, w.N
		}
	}
	if w.Hop != nil {
		y.Window.Hop = []int{w.Hop[0], w.Hop[1]}
	}
	return &y, nil
}

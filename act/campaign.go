package act

import (
	"bytes"
	_ "embed"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/coverage"
	"github.com/actfuzz/actfuzz/internal/suggest"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/oracle"
)

// Range is one parameter of P in a campaign: [Min, Max] at granularity
// Step, or a categorical parameter's values (netenv's parameter table).
type Range = netenv.Range

// StateVar is one variable of S in a campaign file: numeric
// {min, max, step} or categorical {values}.
type StateVar struct {
	Min    *float64 `yaml:"min"`
	Max    *float64 `yaml:"max"`
	Step   *float64 `yaml:"step"`
	Values []string `yaml:"values"`
}

// Campaign is the ACT test input (L, T, P, S, C) and the run settings.
type Campaign struct {
	Path string
	// Setup is L (CCAI, one entry per flow), T (Topology), the profile,
	// the bytes per flow, SACK and the handshake: what every run shares.
	netenv.Setup
	Params []Range        // P, one range per row of netenv's parameter table
	Space  coverage.Space // S
	// StateDropped are the variables of the default S (a campaign
	// without `state:`) that the subject last checked does not report
	// and CheckSubject left out of Space, so that a minimal campaign runs
	// on every subject (the quic subject reports no ssthresh); an
	// explicit `state:` naming one is refused instead.
	StateDropped []string
	defaultState bool
	Conditions   []corpus.ConditionSpec // C: the user's own conditions
	// Oracles is the campaign's `oracles:` (default: every oracle that
	// applies); OracleConds are the conditions that check them on the
	// subject last checked (CheckSubject), OracleSkips the oracles that
	// cannot run there and why.
	Oracles     oracle.Choice
	OracleConds []corpus.ConditionSpec
	OracleSkips []oracle.Skip
	Kappa       int     // saturation region size κ
	Delta       float64 // saturation threshold δ per Window sims
	Window      int     //
	Budget      int     // simulations
	Seed        uint64  // campaign seed
	// Schedule is how ACT shares simulations between its steps:
	// ScheduleAdaptive (default) or SchedulePaper (key schedule:).
	Schedule string
	// Directed is "auto" (default: on when a condition has a branch
	// distance), "on" or "off": whether ACT adds the directed step
	// (directed.go) to its coverage steps (key directed:).
	Directed string
	// Memory is the budget in bytes of the coverage store and its pools
	// (key memory:, e.g. "2GB"; default DefaultMemory; see coverage's
	// "Memory budget").
	Memory int64
	// MemoryGiven says that the file set memory: (a store split into
	// parts, which cannot coarsen, is capped only by a budget given).
	MemoryGiven bool
	// Symbolic, when set, adds ACT's symbolic step (symstep.go; key
	// symbolic:, off when absent).
	Symbolic *SymbolicSpec
	Source   []byte // the file as read
}

// DefaultMemory is the default budget of a campaign's coverage store.
const DefaultMemory = 2 << 30

// GivenMemory is the memory budget given to the campaign's process: flag
// (a --memory; negative: none) or, when flag is 0, the file's memory:,
// and 0 when neither gives one. A store split into parts, which cannot
// coarsen, is capped only by a budget given: the default, made for a
// store that coarsens, would end a cluster's campaign (see Run).
func (c *Campaign) GivenMemory(flag int64) int64 {
	switch {
	case flag != 0:
		return max(flag, 0)
	case c.MemoryGiven:
		return c.Memory
	}
	return 0
}

// ParseBytes parses a size such as "2GB", "512MB", "64MiB" or "1000000"
// (bytes). K, M, G and T are powers of 1024 with or without "i" (memory
// is counted in binary units, as the runtime's limits are).
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	up := strings.ToUpper(t)
	for _, u := range []struct {
		suf string
		m   int64
	}{{"TIB", 1 << 40}, {"GIB", 1 << 30}, {"MIB", 1 << 20}, {"KIB", 1 << 10},
		{"TB", 1 << 40}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10},
		{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(up, u.suf) {
			mult, t = u.m, strings.TrimSpace(t[:len(t)-len(u.suf)])
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || !(v > 0) || v*float64(mult) > 1<<62 {
		return 0, fmt.Errorf("%q is not a size such as 2GB or 512MB", s)
	}
	return int64(v * float64(mult)), nil
}

// DefaultParams is P of ACT §4.1 (with a buffer range of our own): each
// row's default range in netenv's parameter table.
func DefaultParams() []Range { return netenv.DefaultRanges() }

//go:embed default.yaml
var defaultCampaign []byte

// DefaultCampaign is the paper's default test input for CUBIC.
func DefaultCampaign() *Campaign {
	c, err := ParseCampaign("default.yaml", defaultCampaign)
	if err != nil {
		panic("act: embedded default campaign: " + err.Error())
	}
	return c
}

type campaignFile struct {
	CCAI       yaml.Node              `yaml:"ccai"`
	Topology   string                 `yaml:"topology"`
	Profile    string                 `yaml:"profile"`
	Bytes      *uint64                `yaml:"bytes"`
	SACK       *bool                  `yaml:"sack"`
	Handshake  bool                   `yaml:"handshake"`
	LinkTraces []string               `yaml:"link_traces"`
	Params     map[string]Range       `yaml:"params"`
	State      yaml.Node              `yaml:"state"`
	Conditions []corpus.ConditionSpec `yaml:"conditions"`
	Oracles    yaml.Node              `yaml:"oracles"`
	Kappa      *int                   `yaml:"kappa"`
	Delta      *float64               `yaml:"delta"`
	Window     *int                   `yaml:"window"`
	Budget     *int                   `yaml:"budget"`
	Seed       *uint64                `yaml:"seed"`
	Schedule   string                 `yaml:"schedule"`
	Directed   string                 `yaml:"directed"`
	Memory     string                 `yaml:"memory"`
	Symbolic   *symbolicFile          `yaml:"symbolic"`
}

// readLinkTraces sets the setup's user trace files (link_trace user1 …)
// from the campaign's link_traces: paths, or from traces read before.
func (c *Campaign) readLinkTraces(path string, paths []string, traces []*netenv.LinkTraceFile, line int) error {
	if len(paths) > netenv.MaxLinkTraceFiles {
		return fmt.Errorf("%s:%d: link_traces: %d files, at most %d (link_trace user1 … user%d)", path, line, len(paths), netenv.MaxLinkTraceFiles, netenv.MaxLinkTraceFiles)
	}
	if traces != nil {
		if len(traces) != len(paths) {
			return fmt.Errorf("%s:%d: link_traces: %d files named, %d carried", path, line, len(paths), len(traces))
		}
		for i, f := range traces {
			if f == nil || f.Name != filepath.Base(paths[i]) {
				return fmt.Errorf("%s:%d: link_traces[%d]: %s: the carried file is another", path, line, i, paths[i])
			}
		}
		if err := netenv.LoadLinkTraces(traces); err != nil {
			return fmt.Errorf("%s:%d: %w", path, line, err)
		}
		c.LinkTraces = traces
		return nil
	}
	for i, p := range paths {
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(path), p)
		}
		f, err := netenv.ReadLinkTraceFile(p)
		if err != nil {
			return fmt.Errorf("%s:%d: link_traces[%d]: %w", path, line, i, err)
		}
		c.LinkTraces = append(c.LinkTraces, f)
	}
	return nil
}

// LoadCampaign reads a campaign file.
func LoadCampaign(path string) (*Campaign, error) {
	return LoadCampaignFor(path, netenv.NativeCapabilities())
}

// ParseCampaign parses a campaign for the native subject; errors name the
// file, the line and the field. ParseCampaignFor parses one for another
// subject.
func ParseCampaign(path string, src []byte) (*Campaign, error) {
	return ParseCampaignFor(path, src, netenv.NativeCapabilities())
}

// parseCampaign parses a campaign without what depends on the subject
// (CheckSubject): congestion-control names, the variables of S and of the
// conditions are checked against the subject at campaign start, as a
// subject has names (ns-3's TcpCubic) and variables (gVisor's w_c) of its
// own.
//
// traces, when not nil, are the files link_traces: names, already read (a
// worker's, from its campaign header); otherwise parseCampaign reads them,
// relative to the campaign file's directory.
func parseCampaign(path string, src []byte, traces []*netenv.LinkTraceFile) (*Campaign, error) {
	if len(src) > MaxCampaignBytes {
		return nil, fmt.Errorf("%s: %d bytes, over the cap of %d (max_campaign_bytes)", path, len(src), MaxCampaignBytes)
	}
	var cf campaignFile
	dec := yaml.NewDecoder(bytes.NewReader(src))
	dec.KnownFields(true)
	if err := dec.Decode(&cf); err != nil {
		return nil, yamlError(path, src, err)
	}
	p := &campaignParser{path: path}
	_ = yaml.Unmarshal(src, &p.root)

	c := &Campaign{Path: path, Source: src, Setup: netenv.Setup{Topology: netenv.TopoSingleLink, Bytes: netenv.DefaultBytes,
		SACK: true}, Params: DefaultParams(), Space: coverage.DefaultSpace(), Kappa: 128, Delta: 0.015,
		Window: 5000, Budget: 100000, Seed: 1, Memory: DefaultMemory, Schedule: ScheduleAdaptive, Directed: "auto"}
	if err := p.flows(c, &cf); err != nil {
		return nil, err
	}
	if err := p.network(c, &cf, traces); err != nil {
		return nil, err
	}
	if err := p.stateAndOracles(c, &cf); err != nil {
		return nil, err
	}
	if err := p.search(c, &cf); err != nil {
		return nil, err
	}
	// kappa's check needs S's variables, which CheckSubject checks
	// first (checkKappa): an unknown variable is the error to report.
	return c, nil
}

// campaignParser reports a campaign file's errors at the line of the field
// they concern; root is the file's YAML node tree, for those lines.
type campaignParser struct {
	path string
	root yaml.Node
}

// lineOf is the line of the field at keys (0 if it is absent).
func (p *campaignParser) lineOf(keys ...string) int { return findLine(&p.root, keys) }

// fail is the error "path:line: field: message".
func (p *campaignParser) fail(line int, field, format string, a ...any) error {
	return fmt.Errorf("%s:%d: %s: %s", p.path, line, field, fmt.Sprintf(format, a...))
}

// flows reads ccai:, a name or a list of names, one flow each.
func (p *campaignParser) flows(c *Campaign, cf *campaignFile) error {
	switch cf.CCAI.Kind {
	case yaml.ScalarNode:
		c.CCAI = []string{cf.CCAI.Value}
	case yaml.SequenceNode:
		for _, n := range cf.CCAI.Content {
			c.CCAI = append(c.CCAI, n.Value)
		}
	case 0:
		return fmt.Errorf("%s: ccai: missing (for example `ccai: [cubic]`)", p.path)
	default:
		return p.fail(cf.CCAI.Line, "ccai", "want a name or a list of names")
	}
	if len(c.CCAI) == 0 {
		return p.fail(cf.CCAI.Line, "ccai", "empty: want at least one name (for example `ccai: [cubic]`)")
	}
	if len(c.CCAI) > netenv.MaxFlows {
		return p.fail(cf.CCAI.Line, "ccai", "%d flows, over the cap of %d (max_flows)", len(c.CCAI), netenv.MaxFlows)
	}
	for _, n := range c.CCAI {
		if strings.TrimSpace(n) == "" {
			return p.fail(cf.CCAI.Line, "ccai", "empty name (for example `ccai: [cubic]`)")
		}
	}
	return nil
}

// network reads what the flows run over: the topology, the traffic profile,
// the bytes to send, SACK and handshake, the link traces, and the ranges of
// the network parameters.
func (p *campaignParser) network(c *Campaign, cf *campaignFile, traces []*netenv.LinkTraceFile) error {
	if cf.Topology != "" {
		c.Topology = cf.Topology
	}
	switch c.Topology {
	case netenv.TopoSingleLink, netenv.TopoDumbbell, netenv.TopoParkingLot:
	default:
		return p.fail(p.lineOf("topology"), "topology", "%q: want %s, %s or %s", c.Topology, netenv.TopoSingleLink, netenv.TopoDumbbell, netenv.TopoParkingLot)
	}
	if cf.Profile != "" {
		prof, err := ccai.ParseProfile(cf.Profile)
		if err != nil {
			return p.fail(p.lineOf("profile"), "profile", "%v", err)
		}
		c.Profile = prof
	}
	if cf.Bytes != nil {
		if *cf.Bytes == 0 {
			return p.fail(p.lineOf("bytes"), "bytes", "must be > 0")
		}
		c.Bytes = *cf.Bytes
	}
	if cf.SACK != nil {
		c.SACK = *cf.SACK
	}
	c.Handshake = cf.Handshake
	if err := c.readLinkTraces(p.path, cf.LinkTraces, traces, p.lineOf("link_traces")); err != nil {
		return err
	}
	for name, r := range cf.Params {
		i := netenv.ParamIndex(name)
		if i < 0 {
			return p.fail(p.lineOf("params", name), "params."+name, "unknown parameter%s (known: %v)", suggest.DidYouMean(name, netenv.ParamNames()), netenv.ParamNames())
		}
		rr, err := netenv.ParamAt(i).Resolve(r)
		if err != nil {
			return p.fail(p.lineOf("params", name), "params."+name, "%v", err)
		}
		c.Params[i] = rr
	}
	return nil
}

// stateAndOracles reads the state space S, the oracles checked and the
// campaign's own conditions.
func (p *campaignParser) stateAndOracles(c *Campaign, cf *campaignFile) error {
	c.defaultState = cf.State.Kind != yaml.MappingNode
	if cf.State.Kind == yaml.MappingNode {
		sp, err := parseState(p.path, &cf.State)
		if err != nil {
			return err
		}
		c.Space = sp
	}
	ch, err := parseOracles(&cf.Oracles)
	if err != nil {
		return p.fail(p.lineOf("oracles"), "oracles", "%v", err)
	}
	c.Oracles = ch
	if err := checkConditions(p.path, &p.root, cf.Conditions); err != nil {
		return err
	}
	c.Conditions = cf.Conditions
	return nil
}

// atLeast sets *dst to *v when the field is given, if *v ≥ min.
func (p *campaignParser) atLeast(dst *int, v *int, field string, min int) error {
	if v != nil {
		if *v < min {
			return p.fail(p.lineOf(field), field, "must be ≥ %d", min)
		}
		*dst = *v
	}
	return nil
}

// search reads how the campaign searches: ACT's κ, window and δ (ACT, NSDI
// 2019, §4), the budget and seed, directed mode, the schedule, the memory
// cap and the symbolic stage.
func (p *campaignParser) search(c *Campaign, cf *campaignFile) error {
	if err := p.atLeast(&c.Kappa, cf.Kappa, "kappa", 1); err != nil {
		return err
	}
	if err := p.atLeast(&c.Window, cf.Window, "window", 1); err != nil {
		return err
	}
	if err := p.atLeast(&c.Budget, cf.Budget, "budget", 1); err != nil {
		return err
	}
	if cf.Delta != nil {
		if !(*cf.Delta >= 0) {
			return p.fail(p.lineOf("delta"), "delta", "must be ≥ 0")
		}
		c.Delta = *cf.Delta
	}
	if cf.Seed != nil {
		c.Seed = *cf.Seed
	}
	switch cf.Directed {
	case "":
	case "auto", "on", "off":
		c.Directed = cf.Directed
	default:
		return p.fail(p.lineOf("directed"), "directed", "%q: want auto, on or off", cf.Directed)
	}
	switch cf.Schedule {
	case "":
	case SchedulePaper, ScheduleAdaptive:
		c.Schedule = cf.Schedule
	default:
		return p.fail(p.lineOf("schedule"), "schedule", "%q: want %s or %s", cf.Schedule, ScheduleAdaptive, SchedulePaper)
	}
	if cf.Memory != "" {
		m, err := ParseBytes(cf.Memory)
		if err != nil {
			return p.fail(p.lineOf("memory"), "memory", "%v", err)
		}
		c.Memory, c.MemoryGiven = m, true
	}
	if cf.Symbolic != nil {
		sp, err := parseSymbolic(cf.Symbolic, func(field, format string, a ...any) error {
			return p.fail(p.lineOf("symbolic", field), "symbolic."+field, format, a...)
		})
		if err != nil {
			return err
		}
		c.Symbolic = sp
	}
	return nil
}

// checkKappa refuses a kappa that is not a region size of S.
func (c *Campaign) checkKappa(root *yaml.Node) error {
	if _, ok := c.Space.Level(c.Kappa); !ok {
		at := c.Path
		if root != nil {
			at = fmt.Sprintf("%s:%d", c.Path, findLine(root, []string{"kappa"}))
		}
		return fmt.Errorf("%s: kappa: %d is not a region size of S (a power of two ≤ %d)", at, c.Kappa, c.Space.MaxK())
	}
	return nil
}

func parseState(path string, n *yaml.Node) (coverage.Space, error) {
	var sp coverage.Space
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i], n.Content[i+1]
		var sv StateVar
		if err := val.Decode(&sv); err != nil {
			return sp, fmt.Errorf("%s:%d: state.%s: %v", path, val.Line, key.Value, err)
		}
		v := coverage.Var{Name: key.Value, Values: sv.Values}
		if len(sv.Values) == 0 {
			if sv.Min == nil || sv.Max == nil || sv.Step == nil {
				return sp, fmt.Errorf("%s:%d: state.%s: want {min, max, step} or {values}", path, key.Line, key.Value)
			}
			v.Min, v.Max, v.Step = *sv.Min, *sv.Max, *sv.Step
		}
		sp.Vars = append(sp.Vars, v)
	}
	if err := sp.Validate(); err != nil {
		return sp, fmt.Errorf("%s:%d: state: %v", path, n.Line, err)
	}
	return sp, nil
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

// findLine returns the line of the value at a key path, or of the deepest
// key found.
func findLine(root *yaml.Node, keys []string) int {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := n.Line
	for _, k := range keys {
		if n.Kind != yaml.MappingNode {
			return line
		}
		found := false
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				line = n.Content[i].Line
				n = n.Content[i+1]
				found = true
				break
			}
		}
		if !found {
			return line
		}
	}
	return line
}

// Checks are the conditions a run checks: the user's (Conditions) first,
// then the oracles' (OracleConds).
func (c *Campaign) Checks() []corpus.ConditionSpec {
	if len(c.OracleConds) == 0 {
		return c.Conditions
	}
	return slices.Concat(c.Conditions, c.OracleConds)
}

// Check returns the condition a finding of flow running cca names: a
// user's condition, or the oracle condition that applies to cca.
func (c *Campaign) Check(name, cca string) (corpus.ConditionSpec, bool) {
	for _, sp := range c.Checks() {
		if sp.Name == name && sp.AppliesTo(cca, cca) {
			return sp, true
		}
	}
	return corpus.ConditionSpec{}, false
}

// parseOracles reads `oracles:`: absent or "all", "none", a name or a
// list of names.
func parseOracles(n *yaml.Node) (oracle.Choice, error) {
	switch n.Kind {
	case 0:
		return oracle.Choice{}, nil
	case yaml.ScalarNode:
		return oracle.ParseChoice(n.Value, nil, false)
	case yaml.SequenceNode:
		var names []string
		for _, e := range n.Content {
			if e.Kind != yaml.ScalarNode {
				return oracle.Choice{}, fmt.Errorf("want all, none or a list of oracle names")
			}
			names = append(names, e.Value)
		}
		return oracle.ParseChoice("", names, true)
	}
	return oracle.Choice{}, fmt.Errorf("want all, none or a list of oracle names")
}

// DirectedOn says whether ACT runs its directed step: directed: on, or
// auto with at least one condition that has a branch distance over the
// first flow's variables (corpus.CompileDistance says which do).
func (c *Campaign) DirectedOn() bool {
	switch c.Directed {
	case "on":
		return len(c.Conditions) > 0
	case "off":
		return false
	}
	schema := corpus.SchemaFor(c.CCAI[0])
	for _, sp := range c.Conditions {
		if _, err := corpus.CompileDistance(sp, schema); err == nil {
			return true
		}
	}
	return false
}

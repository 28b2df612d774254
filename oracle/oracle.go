package oracle

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/internal/suggest"
	"github.com/actfuzz/actfuzz/netenv"
)

// Kind says what a hit of an oracle means.
type Kind string

const (
	// Conformance: the implementation broke a rule of its standard.
	Conformance Kind = "conformance"
	// Performance: the implementation kept its rules and still behaved
	// badly (a flow starved): a finding of another sort, reported as such.
	Performance Kind = "performance"
)

// Oracle is one check of the library.
type Oracle struct {
	Name string
	// Statement says in one line what must hold.
	Statement string
	// Source is the section it comes from: "RFC 5681 §3.1 eq. (4)".
	Source string
	Kind   Kind
	// Families and CCAs are what it applies to: a flow whose congestion
	// control is named in CCAs, or whose family (ccai.Info.Family) is in
	// Families; both empty: every congestion control but those of
	// Except.
	Families []string
	CCAs     []string
	Except   []string // families it never applies to
	// ExceptCCAs are congestion controls it never applies to, each with
	// the documented behaviour that puts it outside the rule.
	ExceptCCAs map[string]string
	// Linux says where Linux deliberately departs from the source and
	// what the oracle follows for it, citing the kernel file and
	// function; empty when Linux keeps the rule.
	Linux string
	// NotOn names subjects (netenv.Capabilities.Name, or
	// "native/<profile>") the oracle does not run on, each with the
	// documented departure of that implementation that makes it moot.
	NotOn map[string]string
	// MinFlows: the oracle compares flows of one congestion control and
	// needs at least that many of them (0: any flow).
	MinFlows int
	// Spec is the check. Its expressions may hold placeholders that
	// Select fills for the subject and the flow's congestion control:
	// SLACK (0 on the native subject, whose records are emitted at the
	// change itself; 1 on the others, whose records are rebuilt after
	// the whole ACK, growth included), ENTRY (the record that enters a
	// window reduction, with the reduced ssthresh), BETA (the congestion control's
	// ccai.Info.Beta) and REDUCED (the states a window reduction enters
	// whose prior_cwnd the subject reports: cwr as well on the native
	// and linux subjects). recordsOf says which subject is which.
	Spec corpus.ConditionSpec
}

// Needs lists the state variables the oracle reads (X, prev.X, first.X,
// rtt_ago.X, rtt_max.X and held.X), in order of appearance.
func (o *Oracle) Needs() []string {
	sp := o.Spec
	sp.When, sp.While = fill(sp.When, 0.5, nativeRecords), fill(sp.While, 0.5, nativeRecords)
	r, err := sp.Refs()
	if err != nil {
		return nil
	}
	var out []string
	for _, l := range [][]string{r.Cur, r.Prev, r.First, r.Window} {
		for _, n := range l {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}

// Library returns every oracle, in the order `actfuzz list --oracles`
// prints them: those of every congestion control, then by family.
func Library() []Oracle {
	return slices.Concat(generic(), renoFamily(), cubicFamily(), bbrFamily(), dctcpFamily(), performance())
}

// Names lists the oracles' names.
func Names() []string {
	lib := Library()
	out := make([]string, len(lib))
	for i := range lib {
		out[i] = lib[i].Name
	}
	return out
}

// Lookup finds an oracle by name.
func Lookup(name string) (Oracle, bool) {
	for _, o := range Library() {
		if o.Name == name {
			return o, true
		}
	}
	return Oracle{}, false
}

// Choice is a campaign's `oracles:`: every oracle that applies (the
// default), none, or the oracles named.
type Choice struct {
	None  bool
	Names []string // nil: all
}

// ParseChoice reads `oracles:` as given: "all", "none" or names. An
// unknown name is an error saying the closest one.
func ParseChoice(scalar string, list []string, isList bool) (Choice, error) {
	if !isList {
		switch strings.TrimSpace(scalar) {
		case "", "all":
			return Choice{}, nil
		case "none":
			return Choice{None: true}, nil
		}
		list = []string{scalar}
	}
	names := Names()
	var c Choice
	for _, n := range list {
		n = strings.TrimSpace(n)
		if !slices.Contains(names, n) {
			return Choice{}, fmt.Errorf("unknown oracle %q%s (want all, none or names from `actfuzz list --oracles`)", n, suggest.DidYouMean(n, names))
		}
		if !slices.Contains(c.Names, n) {
			c.Names = append(c.Names, n)
		}
	}
	if c.Names == nil {
		c.Names = []string{}
	}
	return c, nil
}

// Skip is an oracle that cannot run on a campaign's flows, and why.
type Skip struct {
	Oracle string
	Why    string
}

func (s Skip) String() string { return s.Oracle + ": " + s.Why }

// Select returns the conditions that check the chosen oracles on a
// campaign of congestion controls ccas (one per flow, as the campaign
// names them) on a subject with capabilities caps at profile: one per
// oracle and value of its placeholders, limited to the flows it applies
// to. It lists the oracles that apply to a flow but cannot run on it.
// An oracle named explicitly that applies to no flow is a Skip too; one
// chosen by "all" that applies to none is left out silently.
func Select(choice Choice, caps netenv.Capabilities, ccas []string, profile ccai.Profile) ([]corpus.ConditionSpec, []Skip) {
	if choice.None {
		return nil, nil
	}
	var out []corpus.ConditionSpec
	var skips []Skip
	for _, o := range Library() {
		named := choice.Names != nil
		if named && !slices.Contains(choice.Names, o.Name) {
			continue
		}
		specs, why := o.selectFor(caps, ccas, profile)
		out = append(out, specs...)
		if why != "" && (named || len(specs) == 0 && !strings.HasPrefix(why, "applies to none")) {
			skips = append(skips, Skip{o.Name, why})
		}
	}
	return out, skips
}

// selectFor is Select for one oracle: its conditions, and why it does
// not run on some or all of the flows it would apply to.
func (o *Oracle) selectFor(caps netenv.Capabilities, ccas []string, profile ccai.Profile) ([]corpus.ConditionSpec, string) {
	for _, key := range []string{caps.Name, caps.Name + "/" + profile.String()} {
		if why, ok := o.NotOn[key]; ok {
			return nil, fmt.Sprintf("not on %s: %s", key, why)
		}
	}
	style := recordsOf(caps)
	byBeta := map[float64][]string{}
	var betas []float64
	var whys []string
	applied := false
	for _, cca := range ccas {
		nat := caps.NativeName(cca)
		fam, beta := FamilyOf(nat)
		if !o.appliesTo(nat, fam) || (o.MinFlows > 0 && countOf(ccas, cca) < o.MinFlows) {
			continue
		}
		applied = true
		if strings.Contains(o.Spec.When, "BETA") && beta == 0 {
			continue // no β declared: nothing to bound
		}
		spec := o.specFor(style, beta)
		schema := corpus.SchemaOf(caps, cca)
		if _, err := corpus.Compile([]corpus.ConditionSpec{spec}, schema); err != nil {
			w := fmt.Sprintf("cannot run on %s flows: %v", cca, err)
			if missing := lacking(spec, schema); len(missing) > 0 {
				w = fmt.Sprintf("needs %s, which %s's %s flows do not report", strings.Join(missing, ", "), caps.Name, cca)
			}
			if !slices.Contains(whys, w) {
				whys = append(whys, w)
			}
			continue
		}
		if !slices.Contains(byBeta[beta], cca) {
			if byBeta[beta] == nil {
				betas = append(betas, beta)
			}
			byBeta[beta] = append(byBeta[beta], cca)
		}
	}
	if !applied {
		return nil, "applies to none of the campaign's congestion controls"
	}
	var out []corpus.ConditionSpec
	for _, b := range betas {
		spec := o.specFor(style, b)
		spec.Only = byBeta[b]
		out = append(out, spec)
	}
	return out, strings.Join(whys, "; ")
}

// lacking lists the state variables spec reads that schema lacks.
func lacking(spec corpus.ConditionSpec, schema corpus.Schema) []string {
	r, err := spec.Refs()
	if err != nil {
		return nil
	}
	var out []string
	for _, l := range [][]string{r.Cur, r.Prev, r.First, r.Window} {
		for _, n := range l {
			if !schema.Has(n) && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}

func countOf(l []string, s string) int {
	n := 0
	for _, x := range l {
		if x == s {
			n++
		}
	}
	return n
}

// specFor is the oracle's condition with its placeholders filled.
func (o *Oracle) specFor(style recordStyle, beta float64) corpus.ConditionSpec {
	sp := o.Spec
	sp.Name = o.Name
	sp.Source = o.Source
	sp.When = fill(sp.When, beta, style)
	sp.While = fill(sp.While, beta, style)
	return sp
}

// recordStyle says how a subject's state records meet the placeholders.
type recordStyle struct {
	// atChange: records are emitted at the change itself, before the
	// ACK's growth (SLACK 0), not rebuilt after the whole ACK (SLACK 1).
	atChange bool
	// exactEntry: the record that enters a reduction carries the reduced
	// ssthresh and the prior_cwnd of that reduction, CWR's included.
	exactEntry bool
}

var nativeRecords = recordStyle{atChange: true, exactEntry: true}

// recordsOf: the native subject emits every change as it happens. The
// kernel's records of a change of ca_state are taken in
// tcp_set_ca_state (netenv/linux/bpf.go), which tcp_enter_recovery,
// tcp_enter_loss and tcp_enter_cwr (net/ipv4/tcp_input.c) call after
// tcp_init_cwnd_reduction or their own ssthresh update: the entry is
// exact, its other records come after the ACK. gVisor's and ns-3's
// records are rebuilt after each ACK, and may show the new state one
// record before the new ssthresh.
func recordsOf(caps netenv.Capabilities) recordStyle {
	switch caps.Name {
	case "native":
		return nativeRecords
	case "linux":
		return recordStyle{exactEntry: true}
	}
	return recordStyle{}
}

func fill(src string, beta float64, style recordStyle) string {
	// ENTRY: the record that enters a reduction; where the new ssthresh
	// may come a record late, the first quarter round trip counts.
	slack, reduced := "1", `["recovery", "loss"]`
	entry := `prev_ca_state in ` + calm + ` && (prev.ca_state in ` + calm + ` || prev.ca_state == ca_state && since_reduction * 1000 < srtt / 4)`
	if style.atChange {
		slack = "0"
	}
	if style.exactEntry {
		reduced = `["recovery", "cwr", "loss"]`
		entry = `prev.ca_state in ` + calm
	}
	r := strings.NewReplacer("SLACK", slack, "BETA", strconv.FormatFloat(beta, 'g', -1, 64), "REDUCED", reduced, "ENTRY", entry)
	return r.Replace(src)
}

func (o *Oracle) appliesTo(cca, family string) bool {
	if family != "" && slices.Contains(o.Except, family) {
		return false
	}
	if _, out := o.ExceptCCAs[cca]; out {
		return false
	}
	if len(o.Families) == 0 && len(o.CCAs) == 0 {
		return true
	}
	return slices.Contains(o.CCAs, cca) || family != "" && slices.Contains(o.Families, family)
}

// otherFamilies gives the family and β of congestion controls that
// subjects offer under a native name the registry lacks (ns-3's
// TcpNewReno and TcpLedbat).
var otherFamilies = map[string]struct {
	family string
	beta   float64
}{
	"newreno": {ccai.FamilyReno, 0.5},
	"ledbat":  {"", 0},
}

// FamilyOf is the family and β (ccai.Info) of a congestion control by its
// native name; "" and 0 when neither is known.
func FamilyOf(name string) (string, float64) {
	if info, ok := ccai.Lookup(name); ok {
		return info.Family, info.Beta
	}
	f := otherFamilies[strings.ToLower(name)]
	return f.family, f.beta
}

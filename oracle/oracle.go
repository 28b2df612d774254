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
	// ReportsLinux lists the congestion controls (native names) whose
	// Linux departure, as Linux describes it, the oracle keeps reporting:
	// a hit on them on the kernel or on the native model at profile
	// linux (which follows Linux there) is that documented departure
	// (triage classes it so), not a new finding.
	ReportsLinux []string
	// NotOn names subjects (netenv.Capabilities.Name, or
	// "native/<profile>") the oracle does not run on, each with the
	// documented departure of that implementation that makes it moot.
	NotOn map[string]string
	// Subjects, when set, are the only subjects (netenv.Capabilities.Name)
	// the oracle runs on: rules of one kind of stack (RFC 9002's, of QUIC)
	// that read that stack's own variables. Elsewhere it applies to
	// nothing and is left out silently.
	Subjects []string
	// MinFlows: the oracle compares flows of one congestion control and
	// needs at least that many of them (0: any flow).
	MinFlows int
	// Spec is the check. Its expressions may hold placeholders that
	// Select fills for the subject and the flow's congestion control
	// (fill says how for each subject): SLACK (0 on the native subject,
	// whose records are emitted at the change itself; 1 on the others,
	// whose records are rebuilt after the whole ACK, growth included),
	// ENTRY (the record that enters a window reduction, with the reduced
	// ssthresh), BETA (the congestion control's ccai.Info.Beta), REDUCED
	// (the states a window reduction enters whose prior_cwnd the subject
	// reports: cwr as well on the native and ns-3 subjects), DEEPER
	// (ssthresh below ⌊β·W⌋ − 1 and 2 segments, W the window the reduction
	// is a fraction of: prior_cwnd, or on ns-3 the flight ns-3 computes
	// ssthresh from if that is less) and RESTORED (the window was
	// restored by an undo: false on ns-3, which undoes nothing).
	Spec corpus.ConditionSpec
}

// Needs lists the state variables the oracle reads (X, prev.X, first.X,
// rtt_ago.X, rtt_max.X and held.X), in order of appearance.
func (o *Oracle) Needs() []string {
	sp := o.Spec
	// The variables of every subject's version of the check.
	union := func(src string) string {
		if src == "" {
			return ""
		}
		var alts []string
		for _, subj := range []string{"native", "ns3", "linux", "gvisor", ""} {
			alts = append(alts, "("+fill(src, 0.5, subj)+")")
		}
		return strings.Join(alts, " || ")
	}
	sp.When, sp.While = union(sp.When), union(sp.While)
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
	return slices.Concat(generic(), renoFamily(), cubicFamily(), bbrFamily(), dctcpFamily(), rfc9002(), performance())
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
	if len(o.Subjects) > 0 && !slices.Contains(o.Subjects, caps.Name) {
		return nil, "applies to none of the campaign's congestion controls: it runs on subjects " + strings.Join(o.Subjects, ", ") + " only"
	}
	for _, key := range []string{caps.Name, caps.Name + "/" + profile.String()} {
		if why, ok := o.NotOn[key]; ok {
			return nil, fmt.Sprintf("not on %s: %s", key, why)
		}
	}
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
		if usesBeta(o.Spec.When) && beta == 0 {
			continue // no β declared: nothing to bound
		}
		spec := o.specFor(caps.Name, beta)
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
		spec := o.specFor(caps.Name, b)
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

// usesBeta says whether a condition holds a β placeholder (BETA, or DEEPER,
// which is filled with β).
func usesBeta(src string) bool {
	return strings.Contains(src, "BETA") || strings.Contains(src, "DEEPER")
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

// specFor is the oracle's condition with its placeholders filled for
// subject (netenv.Capabilities.Name).
func (o *Oracle) specFor(subject string, beta float64) corpus.ConditionSpec {
	sp := o.Spec
	sp.Name = o.Name
	sp.Source = o.Source
	sp.When = fill(sp.When, beta, subject)
	sp.While = fill(sp.While, beta, subject)
	return sp
}

// fill fills the placeholders of src (Oracle.Spec) for a subject:
//
//   - "native" emits a record at the change itself (SLACK 0), the record
//     that enters a reduction with the reduced ssthresh (ENTRY: the first
//     record in the new state), and prior_cwnd on cwr too;
//   - "ns3" rebuilds its records after the whole ACK (SLACK 1), but its
//     driver emits the record that enters a reduction at the reduction
//     itself, with the reduced ssthresh, the cwnd before it and in
//     in_flight the bytes ns-3 computed ssthresh from (netenv/ns3's doc,
//     "State records"), and reports prior_cwnd on cwr: ENTRY and REDUCED
//     as natively. ns-3 hands every congestion control that flight
//     (TcpSocketBase::EnterRecovery and EnterCwr pass BytesInFlight(), RFC
//     6675's pipe; ReTxTimeout the flight before the timeout), and
//     TcpNewReno and the models built on it halve it, as RFC 5681 eq. (4)
//     and RFC 9438 §4.6 say (FlightSize), where Linux halves cwnd: DEEPER
//     bounds ssthresh by β of the lesser of prior_cwnd and that flight
//     (in_flight at a recovery or cwr entry; at a loss entry, taken after
//     the timeout marked everything lost, the flight of the record before,
//     which the timeout's flight is at least: only sending happens between
//     two records). ns-3.37 undoes no reduction (no D-SACK, Eifel or F-RTO
//     undo: TcpSocketBase::ProcessAck leaves CA_RECOVERY and CA_LOSS only
//     on a cumulative ACK past m_recover, restoring nothing), so RESTORED
//     is false;
//   - "linux" rebuilds its other records after the ACK (SLACK 1), but
//     its record of a change of ca_state is taken in tcp_set_ca_state
//     (netenv/linux/bpf.go), which tcp_enter_recovery, tcp_enter_loss
//     and tcp_enter_cwr (net/ipv4/tcp_input.c) call after
//     tcp_init_cwnd_reduction or their own ssthresh update: ENTRY and
//     REDUCED as natively;
//   - the others (gvisor) rebuild their records after the whole ACK
//     (SLACK 1) and may show the new state one record before the new
//     ssthresh, so their first quarter round trip counts as the entry,
//     and report prior_cwnd on recovery and loss only;
//   - "gvisor" besides: gVisor's Reno halves its Outstanding, RFC 5681
//     eq. (4)'s FlightSize (pkg/tcpip/transport/tcp/reno.go
//     reduceSlowStartThreshold), where Linux halves cwnd, and the flight
//     is not cwnd: below it when the sender was application-limited or
//     when RACK detects the loss after the ACK's cumulative part shrank
//     Outstanding (snd.go handleRcvdSegment; measured: cwnd 11, 7
//     outstanding, ssthresh 3), above it after sendData restarted cwnd at
//     the initial window with data outstanding (snd.go sendData, RFC 5681
//     §4.1; measured: cwnd 10, ssthresh 10 on a timeout). DEEPER is then
//     ns-3's, bounded by the lesser of prior_cwnd and the flight (in_flight
//     at a recovery entry: RFC 6675's pipe, which enterRecovery's SetPipe
//     leaves below the Outstanding halved; prev.in_flight at a loss
//     entry), and HALVED, the window reno-half halves, the greater of
//     prior_cwnd and the flight of the record before the entry (packets
//     sent and not acknowledged, cumulatively or by SACK). gVisor's
//     Outstanding can also exceed that flight (phantom SACKed segments,
//     google/gvisor#14092), and reno-half reports what it adds.
func fill(src string, beta float64, subject string) string {
	b := strconv.FormatFloat(beta, 'g', -1, 64)
	slack, reduced := "1", `["recovery", "loss"]`
	entry := `prev_ca_state in ` + calm + ` && (prev.ca_state in ` + calm + ` || prev.ca_state == ca_state && since_reduction * 1000 < srtt / 4)`
	below := func(w string) string { return `ssthresh < max(floor(` + b + ` * ` + w + `) - 1, 2)` }
	deeper := below("prior_cwnd")
	restored := func(slack string) string { return `cwnd + ` + slack + ` >= max(prev.cwnd, prior_cwnd)` }
	halved := "prior_cwnd"
	flightDeeper := `(ca_state == "loss" && ` + below("min(prior_cwnd, prev.in_flight)") + ` || ca_state != "loss" && ` + below("min(prior_cwnd, in_flight)") + `)`
	switch subject {
	case "native":
		slack, reduced = "0", `["recovery", "cwr", "loss"]`
		entry = `prev.ca_state in ` + calm
	case "linux":
		reduced = `["recovery", "cwr", "loss"]`
		entry = `prev.ca_state in ` + calm
	case "ns3":
		reduced = `["recovery", "cwr", "loss"]`
		entry = `prev.ca_state in ` + calm
		deeper = flightDeeper
		restored = func(string) string { return "false" }
	case "gvisor":
		deeper = flightDeeper
		halved = `max(prior_cwnd, prev.in_flight)`
	}
	r := strings.NewReplacer("SLACK", slack, "BETA", b, "REDUCED", reduced, "ENTRY", entry, "DEEPER", deeper, "RESTORED", restored(slack), "HALVED", halved)
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

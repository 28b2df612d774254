package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
	"github.com/actfuzz/actfuzz/oracle"
)

type listVar struct {
	Name   string   `json:"name"`
	Doc    string   `json:"doc,omitempty"`
	Values []string `json:"values,omitempty"`
}

// listParam is a row of netenv's parameter table.
type listParam struct {
	Name    string     `json:"name"`
	Unit    string     `json:"unit,omitempty"`
	Doc     string     `json:"doc"`
	Kind    string     `json:"kind"`
	Values  []string   `json:"values,omitempty"`
	Default float64    `json:"default"`
	Range   *listRange `json:"default_range,omitempty"` // a campaign's when it sets none
}

type listRange struct {
	Min  float64 `json:"min"`
	Max  float64 `json:"max"`
	Step float64 `json:"step"`
}

type listCCAI struct {
	Name        string    `json:"name"`
	Description string    `json:"description,omitempty"`
	Vars        []listVar `json:"vars,omitempty"` // its own, beside the state variables
}

type listSubject struct {
	Name          string     `json:"name"`
	Setup         string     `json:"setup"`
	CCAIs         []listCCAI `json:"ccais"`
	Aliases       []string   `json:"aliases,omitempty"` // native names it accepts, "cubic=TcpCubic"
	State         []string   `json:"state"`             // the base state variables it reports
	Topologies    []string   `json:"topologies"`
	Params        []string   `json:"params"`
	Deterministic bool       `json:"deterministic"`
	Profiles      bool       `json:"profiles"` // whether --profile applies
}

type listing struct {
	Subjects []listSubject `json:"subjects"`
	Params   []listParam   `json:"params"`
	State    []listVar     `json:"state"`   // every base variable, for conditions and S (listSubject.State: which a subject reports)
	Derived  []listVar     `json:"derived"` // the variables every subject's flows have, computed from the trace (corpus.DerivedVars)
	Profiles []string      `json:"profiles"`
}

// subjectListing describes a subject from its capabilities, so that the
// listing shows what a campaign on it may use, and nothing else.
func subjectListing(caps netenv.Capabilities, setup string) listSubject {
	s := listSubject{Name: caps.Name, Setup: setup, Topologies: caps.Topologies, Params: caps.Params,
		Deterministic: caps.Deterministic, Profiles: caps.Profiles}
	for _, v := range corpus.BaseVars {
		if caps.HasBase(v.Name) {
			s.State = append(s.State, v.Name)
		}
	}
	for _, name := range caps.CCANames() {
		c := listCCAI{Name: name}
		if info, ok := ccai.Lookup(name); ok && caps.CCAs == nil {
			c.Description = info.Description
		}
		// The schema's variables: those the subject reports, each name
		// once (corpus.SchemaOf).
		for _, v := range corpus.SchemaOf(caps, name)[len(s.State):] {
			if v.Src < 0 {
				continue // derived (corpus.DerivedVars): every flow's, listed once
			}
			doc := ""
			for _, d := range caps.VarsOf(name) {
				if d.Name == v.Name {
					doc = d.Doc
				}
			}
			c.Vars = append(c.Vars, listVar{Name: v.Name, Doc: doc, Values: v.Values})
		}
		s.CCAIs = append(s.CCAIs, c)
	}
	for _, a := range slices.Sorted(maps.Keys(caps.Aliases)) {
		s.Aliases = append(s.Aliases, a+"="+caps.Aliases[a])
	}
	return s
}

func buildListing() listing {
	var l listing
	for _, caps := range declaredCapabilities() {
		setup := "none"
		switch caps.Name {
		case "ns3":
			setup = "make ns3"
		case "linux":
			setup = "root, /dev/net/tun; the running kernel's congestion controls"
		}
		l.Subjects = append(l.Subjects, subjectListing(caps, setup))
	}
	for _, p := range netenv.Params() {
		lp := listParam{Name: p.Name, Unit: p.Unit, Doc: p.Doc, Kind: p.Kind.String(), Values: p.Values, Default: p.Default}
		if p.Kind == netenv.Numeric {
			lp.Range = &listRange{Min: p.Range.Min, Max: p.Range.Max, Step: p.Range.Step}
		}
		l.Params = append(l.Params, lp)
	}
	for i, v := range corpus.BaseVars {
		l.State = append(l.State, listVar{Name: v.Name, Doc: observe.Base[i].Describe(), Values: v.Values})
	}
	for i, v := range corpus.DerivedVars {
		doc := ""
		if i < len(corpus.DerivedDocs) {
			doc = corpus.DerivedDocs[i]
		}
		l.Derived = append(l.Derived, listVar{Name: v.Name, Doc: doc, Values: v.Values})
	}
	l.Profiles = ccai.ProfileNames[:]
	return l
}

func runList(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("actfuzz list", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the listing as JSON: every subject's CCAIs and their variables, the parameters of P, the state variables, the profiles (with --oracles: the oracles)")
	oracles := fs.Bool("oracles", false, "list the oracles a campaign checks (oracles: all | none | [names]): each one's rule, source, what it applies to and where Linux departs")
	_ = addVerbosityFlags(fs)
	if ok, code := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "actfuzz list: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if *oracles {
		return listOracles(stdout, stderr, *asJSON)
	}
	l := buildListing()
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(l); err != nil {
			fmt.Fprintf(stderr, "actfuzz list: %v\n", err)
			return exitInternal
		}
		return exitOK
	}
	for _, s := range l.Subjects {
		fmt.Fprintf(stdout, "Subject %s (--subject %s), CCAIs (--cca, ccai:); setup: %s\n", s.Name, s.Name, s.Setup)
		profiles := "profiles apply"
		if !s.Profiles {
			profiles = "profiles do not apply"
		}
		det := "bit-deterministic"
		if !s.Deterministic {
			det = "not bit-deterministic"
		}
		fmt.Fprintf(stdout, "  topologies: %s; %s; %s\n", strings.Join(s.Topologies, ", "), det, profiles)
		if len(s.State) < len(l.State) {
			fmt.Fprintf(stdout, "  state: %s\n", strings.Join(s.State, ", "))
		}
		if len(s.Params) < len(l.Params) {
			fmt.Fprintf(stdout, "  parameters: %s\n", strings.Join(s.Params, ", "))
		}
		if len(s.Aliases) > 0 {
			fmt.Fprintf(stdout, "  native names: %s\n", strings.Join(s.Aliases, ", "))
		}
		for _, c := range s.CCAIs {
			if c.Description == "" && len(c.Vars) == 0 {
				continue
			}
			fmt.Fprintf(stdout, "  %s\n", strings.TrimRight(fmt.Sprintf("%-10s %s", c.Name, c.Description), " "))
			if len(c.Vars) > 0 {
				names := make([]string, len(c.Vars))
				for i, v := range c.Vars {
					names[i] = v.Name
					if len(v.Values) > 0 {
						names[i] += "{" + strings.Join(v.Values, "|") + "}"
					}
				}
				fmt.Fprintf(stdout, "  %-10s   vars: %s\n", "", strings.Join(names, ", "))
			}
		}
		var bare []string
		for _, c := range s.CCAIs {
			if c.Description == "" && len(c.Vars) == 0 {
				bare = append(bare, c.Name)
			}
		}
		if len(bare) > 0 {
			fmt.Fprintf(stdout, "  %s\n", strings.Join(bare, ", "))
		}
		fmt.Fprintln(stdout)
	}
	fmt.Fprintln(stdout, "Environment parameters P (flags of sim; params: of a campaign, default range shown):")
	for _, p := range l.Params {
		doc := p.Doc
		if p.Unit != "" {
			doc += " (" + p.Unit + ")"
		}
		switch {
		case p.Kind == netenv.Categorical.String():
			doc += ": " + strings.Join(p.Values, "|")
		case p.Range != nil:
			doc += fmt.Sprintf(" [%g, %g] step %g", p.Range.Min, p.Range.Max, p.Range.Step)
		}
		fmt.Fprintf(stdout, "  %-16s %s\n", p.Name, doc)
	}
	fmt.Fprintln(stdout, "\nState variables (conditions, S; prev.X is X before this record, first.X at the start of a for: stretch, rtt_ago.X X one srtt before this record, rtt_max.X its largest over the last two srtt, held.X how long (s) X's previous value had held at this record, p.X the parameter X in force; a subject with a state: line above reports only those):")
	printVars := func(vars []listVar) {
		for _, v := range vars {
			doc := v.Doc
			if len(v.Values) > 0 && !strings.Contains(doc, strings.Join(v.Values, "|")) {
				doc += ": " + strings.Join(v.Values, "|")
			}
			fmt.Fprintf(stdout, "  %-16s %s\n", v.Name, doc)
		}
	}
	printVars(l.State)
	fmt.Fprintln(stdout, "  derived from the trace, on every subject (the oracles read them; actfuzz list --oracles):")
	printVars(l.Derived)
	fmt.Fprintln(stdout, "\nProfiles (--profile):", strings.Join(l.Profiles, ", "))
	return exitOK
}

// listOracle is an oracle of the library (oracle.Oracle) as `actfuzz list
// --oracles --json` prints it.
type listOracle struct {
	Name      string            `json:"name"`
	Kind      string            `json:"kind"`
	Statement string            `json:"statement"`
	Source    string            `json:"source"`
	AppliesTo string            `json:"applies_to"` // Families, CCAs and Except in words
	Families  []string          `json:"families,omitempty"`
	CCAs      []string          `json:"ccas,omitempty"`
	Except    []string          `json:"except,omitempty"`
	ExceptCCA map[string]string `json:"except_ccas,omitempty"` // congestion controls left out, each with why
	MinFlows  int               `json:"min_flows,omitempty"`
	Linux     string            `json:"linux,omitempty"`
	NotOn     map[string]string `json:"not_on,omitempty"`
	Subjects  []string          `json:"subjects,omitempty"` // the only subjects it runs on
	Needs     []string          `json:"needs"`
}

// oracleListing describes the library, in its order.
func oracleListing() []listOracle {
	lib := oracle.Library()
	out := make([]listOracle, 0, len(lib))
	for i := range lib {
		o := &lib[i]
		out = append(out, listOracle{Name: o.Name, Kind: string(o.Kind), Statement: o.Statement, Source: o.Source,
			AppliesTo: appliesTo(o, true), Families: o.Families, CCAs: o.CCAs, Except: o.Except, ExceptCCA: o.ExceptCCAs, MinFlows: o.MinFlows,
			Linux: o.Linux, NotOn: o.NotOn, Subjects: o.Subjects, Needs: o.Needs()})
	}
	return out
}

// appliesTo says in words which congestion controls an oracle checks:
// "every congestion control", "the cubic family (cubic)", with the
// registered members of each family named if members.
func appliesTo(o *oracle.Oracle, members bool) string {
	family := func(f string) string {
		if !members {
			return "the " + f + " family"
		}
		var names []string
		for _, n := range ccai.Names() {
			if info, ok := ccai.Lookup(n); ok && info.Family == f {
				names = append(names, n)
			}
		}
		if len(names) == 0 {
			return "the " + f + " family"
		}
		return "the " + f + " family (" + strings.Join(names, ", ") + ")"
	}
	var parts []string
	for _, f := range o.Families {
		parts = append(parts, family(f))
	}
	parts = append(parts, o.CCAs...)
	s := strings.Join(parts, ", ")
	if s == "" {
		s = "every congestion control"
	}
	var ex []string
	for _, f := range o.Except {
		ex = append(ex, family(f))
	}
	ex = append(ex, slices.Sorted(maps.Keys(o.ExceptCCAs))...)
	if len(ex) > 0 {
		s += " but " + strings.Join(ex, ", ")
	}
	if len(o.Subjects) > 0 {
		s += ", on subject " + strings.Join(o.Subjects, ", ") + " only"
	}
	if o.MinFlows > 1 {
		s += fmt.Sprintf(", among %d or more flows of one congestion control", o.MinFlows)
	}
	return s
}

// listOracles prints the oracle library: `actfuzz list --oracles`.
func listOracles(stdout, stderr io.Writer, asJSON bool) int {
	lib := oracleListing()
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(lib); err != nil {
			fmt.Fprintf(stderr, "actfuzz list: %v\n", err)
			return exitInternal
		}
		return exitOK
	}
	fmt.Fprintf(stdout, "Oracles (%d): rules from the RFCs and papers cited, checked like conditions on every campaign unless it says otherwise (oracles: all | none | [names]); a hit is a finding named after the oracle. docs/oracles.md explains them.\n", len(lib))
	for _, o := range lib {
		fmt.Fprintf(stdout, "\n%s (%s)\n", o.Name, o.Kind)
		fmt.Fprintf(stdout, "  %s\n", o.Statement)
		fmt.Fprintf(stdout, "  source:     %s\n", o.Source)
		fmt.Fprintf(stdout, "  applies to: %s\n", o.AppliesTo)
		if len(o.Needs) > 0 {
			fmt.Fprintf(stdout, "  reads:      %s\n", strings.Join(o.Needs, ", "))
		}
		if o.Linux != "" {
			fmt.Fprintf(stdout, "  Linux:      %s\n", o.Linux)
		}
		for _, cca := range slices.Sorted(maps.Keys(o.ExceptCCA)) {
			fmt.Fprintf(stdout, "  not for %s: %s\n", cca, o.ExceptCCA[cca])
		}
		for _, subj := range slices.Sorted(maps.Keys(o.NotOn)) {
			fmt.Fprintf(stdout, "  not on %s: %s\n", subj, o.NotOn[subj])
		}
	}
	return exitOK
}

// printOracles says at a campaign's start which variables of the default
// S its subject lacks, which oracles it cannot run on its subject, and why,
// and which it checks.
func printOracles(w io.Writer, c *act.Campaign) {
	if len(c.StateDropped) > 0 {
		fmt.Fprintf(w, "actfuzz run: S is the default without %s, which this subject does not report (state: chooses S)\n", strings.Join(c.StateDropped, ", "))
	}
	for _, sk := range c.OracleSkips {
		fmt.Fprintf(w, "actfuzz run: oracle %s skipped: %s\n", sk.Oracle, sk.Why)
	}
	if c.Oracles.None {
		return
	}
	var names []string
	for _, sp := range c.OracleConds {
		if !slices.Contains(names, sp.Name) {
			names = append(names, sp.Name)
		}
	}
	noun := "oracles"
	if len(names) == 1 {
		noun = "oracle"
	}
	// The names, not only their number: a hunt's log then says what a
	// quiet night checked.
	fmt.Fprintf(w, "actfuzz run: checking %d %s: %s (actfuzz list --oracles)\n", len(names), noun, strings.Join(names, ", "))
}

package act

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/coverage"
	"github.com/actfuzz/actfuzz/internal/capread"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/oracle"
)

// ErrSubjectLacks is matched (errors.Is) by the error of a campaign that
// needs something its subject does not provide: bad input, the command
// exits 2.
var ErrSubjectLacks = errors.New("the subject cannot run this campaign")

// lacksError is a CheckSubject error: its message names the file, line
// and field, and it is ErrSubjectLacks.
type lacksError struct{ msg string }

func (e *lacksError) Error() string        { return e.msg }
func (e *lacksError) Is(target error) bool { return target == ErrSubjectLacks }

// ParseCampaignFor parses a campaign for a subject with capabilities caps:
// ParseCampaign's checks, with the congestion controls, the topology, the
// profile, the parameters, the state space S and the conditions checked
// against what the subject provides (CheckSubject) instead of the native
// subject's.
func ParseCampaignFor(path string, src []byte, caps netenv.Capabilities) (*Campaign, error) {
	return parseCampaignFor(path, src, nil, caps)
}

// parseCampaignFor is ParseCampaignFor with the trace files read before
// (parseCampaign).
func parseCampaignFor(path string, src []byte, traces []*netenv.LinkTraceFile, caps netenv.Capabilities) (*Campaign, error) {
	c, err := parseCampaign(path, src, traces)
	if err != nil {
		return nil, err
	}
	if err := c.CheckSubject(caps); err != nil {
		return nil, err
	}
	return c, nil
}

// LoadCampaignFor reads a campaign file for a subject (ParseCampaignFor).
func LoadCampaignFor(path string, caps netenv.Capabilities) (*Campaign, error) {
	b, err := capread.ReadFile(path, MaxCampaignBytes, "max_campaign_bytes", false)
	if err != nil {
		return nil, err
	}
	return ParseCampaignFor(path, b, caps)
}

// CheckSubject refuses a campaign that needs something a subject with
// capabilities caps does not provide, at start rather than with silent
// zeros or ignored settings later: a congestion control it does not offer
// (by its own name or a native alias), a topology it cannot build, a
// profile that does not apply to it, a parameter of P it cannot express
// that the campaign varies, a variable of S or of a condition it does not
// report for the first flow's congestion control. The error wraps
// ErrSubjectLacks and names the file, the line and the field.
//
// It also binds the campaign's oracles to the subject: OracleConds and
// OracleSkips are those of caps from then on. Runners that share the
// campaign check it without writing it (checkSubject).
func (c *Campaign) CheckSubject(caps netenv.Capabilities) error {
	if c.defaultState {
		c.Space, c.StateDropped = coverage.DefaultSpace(), nil
		schema := corpus.SchemaOf(caps, c.CCAI[0])
		c.Space.Vars = slices.DeleteFunc(c.Space.Vars, func(v coverage.Var) bool {
			if schema.Has(v.Name) {
				return false
			}
			c.StateDropped = append(c.StateDropped, v.Name)
			return true
		})
	}
	conds, skips, err := c.checkSubject(caps)
	if err != nil {
		return err
	}
	c.OracleConds, c.OracleSkips = conds, skips
	return nil
}

// checkSubject is CheckSubject without writing the campaign: it returns
// the oracles' conditions on caps and the oracles skipped there.
func (c *Campaign) checkSubject(caps netenv.Capabilities) ([]corpus.ConditionSpec, []oracle.Skip, error) {
	var root yaml.Node
	_ = yaml.Unmarshal(c.Source, &root)
	fail := func(keys []string, field, format string, a ...any) error {
		at := c.Path
		if len(c.Source) > 0 {
			at = fmt.Sprintf("%s:%d", c.Path, findLine(&root, keys))
		}
		return &lacksError{fmt.Sprintf("%s: %s: %s", at, field, fmt.Sprintf(format, a...))}
	}
	for _, n := range c.CCAI {
		if _, err := caps.Resolve(n); err != nil {
			return nil, nil, fail([]string{"ccai"}, "ccai", "%v", err)
		}
	}
	if err := caps.CheckTopology(c.Topology); err != nil {
		return nil, nil, fail([]string{"topology"}, "topology", "%v", err)
	}
	if err := caps.CheckProfile(c.Profile); err != nil {
		return nil, nil, fail([]string{"profile"}, "profile", "%v", err)
	}
	for i, r := range c.Params {
		p := netenv.ParamAt(i)
		if r.Fixed() && r.Point(0) == p.Default {
			continue // pinned at the default: nothing to express
		}
		if err := caps.CheckParam(p.Name); err != nil {
			def := netenv.DefaultEnv()
			return nil, nil, fail([]string{"params", p.Name}, "params."+p.Name, "%v; leave it out of params: (its default is %s)", err, p.Format(&def))
		}
	}
	if c.Symbolic != nil && caps.Name != "native" {
		return nil, nil, fail([]string{"symbolic"}, "symbolic", "the symbolic step explores windows on the native simulator only; the %s subject cannot run it (remove the key)", caps.Name)
	}
	cca := c.CCAI[0]
	schema := corpus.SchemaOf(caps, cca)
	lacks := func(v string) string {
		msg := fmt.Sprintf("the %s subject does not provide %s for %s (it provides %s)", caps.Name, v, cca, strings.Join(schema.Names(), ", "))
		if caps.Name != "native" && corpus.SchemaFor(caps.NativeName(cca)).Has(v) {
			msg += "; the native subject does"
		}
		return msg
	}
	for _, v := range c.Space.Vars {
		if !schema.Has(v.Name) {
			return nil, nil, fail([]string{"state", v.Name}, "state."+v.Name, "unknown state variable: %s", lacks(v.Name))
		}
	}
	if len(c.Source) > 0 {
		if err := c.checkKappa(&root); err != nil {
			return nil, nil, &lacksError{err.Error()}
		}
	} else if err := c.checkKappa(nil); err != nil {
		return nil, nil, &lacksError{err.Error()}
	}
	for i, sp := range c.Conditions {
		field := fmt.Sprintf("conditions[%d]", i)
		refs, err := sp.Refs()
		if err != nil {
			return nil, nil, fail([]string{"conditions"}, field, "condition %q: %v", sp.Name, err)
		}
		for _, m := range []struct {
			prefix string
			names  []string
		}{{"prev.", refs.Prev}, {"first.", refs.First}, {"rtt_ago./rtt_max./held.", refs.Window}} {
			for _, v := range m.names {
				if !schema.Has(v) {
					return nil, nil, fail([]string{"conditions"}, field, "condition %q reads %s%s: %s", sp.Name, m.prefix, v, lacks(v))
				}
			}
		}
		if _, err := corpus.Compile([]corpus.ConditionSpec{sp}, schema); err != nil {
			for _, v := range refs.Cur {
				if !schema.Has(v) {
					return nil, nil, fail([]string{"conditions"}, field, "condition %q reads %s: %s", sp.Name, v, lacks(v))
				}
			}
			return nil, nil, fail([]string{"conditions"}, field, "%v", err)
		}
	}
	conds, skips := oracle.Select(c.Oracles, caps, c.CCAI, c.Profile)
	for _, sp := range conds {
		// The same file name is the same findings directory.
		if i := slices.IndexFunc(c.Conditions, func(u corpus.ConditionSpec) bool { return corpus.FileKey(u.Name) == corpus.FileKey(sp.Name) }); i >= 0 {
			return nil, nil, fail([]string{"conditions"}, fmt.Sprintf("conditions[%d].name", i), "condition %q has the name of oracle %q (both would write findings/%s/): rename it, or leave the oracle out with oracles: [...]", c.Conditions[i].Name, sp.Name, corpus.FileName(sp.Name))
		}
	}
	return conds, skips, nil
}

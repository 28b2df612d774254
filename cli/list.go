package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/gvisor"
	"github.com/actfuzz/actfuzz/netenv/linux"
	"github.com/actfuzz/actfuzz/netenv/ns3"
)

// varDocs documents the state variables every flow has (corpus.BaseVars).
func varDoc(name string) string {
	switch name {
	case "cwnd":
		return "congestion window (packets)"
	case "ssthresh":
		return "slow-start threshold (packets)"
	case "srtt":
		return "smoothed RTT (ms)"
	case "rttvar":
		return "RTT mean deviation (ms)"
	case "ca_state":
		return "congestion-avoidance state"
	case "prev_ca_state":
		return "ca_state before the last change"
	case "prior_cwnd":
		return "cwnd when the last reduction started"
	case "in_flight":
		return "packets in flight"
	case "delivered":
		return "packets delivered"
	case "rto":
		return "retransmission timeout (ms)"
	case "pacing_rate":
		return "pacing rate (bytes/s)"
	case "time":
		return "simulated time (s)"
	case "flow":
		return "the flow's index, from 0 (the campaign's ccai: order)"
	}
	return ""
}

type listVar struct {
	Name   string   `json:"name"`
	Doc    string   `json:"doc,omitempty"`
	Values []string `json:"values,omitempty"`
}

type listCCAI struct {
	Name        string    `json:"name"`
	Description string    `json:"description,omitempty"`
	Vars        []listVar `json:"vars,omitempty"` // its own, beside the state variables
}

type listSubject struct {
	Name  string     `json:"name"`
	Setup string     `json:"setup"`
	CCAIs []listCCAI `json:"ccais"`
}

type listing struct {
	Subjects []listSubject `json:"subjects"`
	Params   []listVar     `json:"params"`
	State    []listVar     `json:"state"` // every flow's, for conditions and S
	Profiles []string      `json:"profiles"`
}

func buildListing() listing {
	var l listing
	native := listSubject{Name: "native", Setup: "none"}
	for _, name := range ccai.Names() {
		info, _ := ccai.Lookup(name)
		c := listCCAI{Name: name, Description: info.Description}
		for _, v := range ccai.VarsOf(info.New()) {
			c.Vars = append(c.Vars, listVar{Name: v.Name, Doc: v.Doc, Values: v.Values})
		}
		native.CCAIs = append(native.CCAIs, c)
	}
	n3 := listSubject{Name: "ns3", Setup: "make ns3; native names such as cubic map to these models"}
	for _, m := range ns3.Models {
		n3.CCAIs = append(n3.CCAIs, listCCAI{Name: m})
	}
	gv := listSubject{Name: "gvisor", Setup: "none"}
	gs := &gvisor.Subject{}
	for _, name := range gs.CCAs() {
		c := listCCAI{Name: name}
		for _, v := range gs.Vars(name) {
			c.Vars = append(c.Vars, listVar{Name: v.Name, Doc: v.Doc, Values: v.Values})
		}
		gv.CCAIs = append(gv.CCAIs, c)
	}
	lx := listSubject{Name: "linux", Setup: "root, /dev/net/tun, tracefs; the running kernel's congestion controls"}
	if names, err := linux.KernelCCAs(); err == nil {
		for _, name := range names {
			lx.CCAIs = append(lx.CCAIs, listCCAI{Name: name})
		}
	}
	l.Subjects = []listSubject{native, n3, gv, lx}
	for _, p := range netenv.ParamNames {
		l.Params = append(l.Params, listVar{Name: p, Doc: netenv.ParamDocs[p]})
	}
	for _, v := range corpus.BaseVars {
		l.State = append(l.State, listVar{Name: v.Name, Doc: varDoc(v.Name), Values: v.Values})
	}
	l.Profiles = ccai.ProfileNames[:]
	return l
}

func runList(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("actfuzz list", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the listing as JSON: every subject's CCAIs and their variables, the parameters of P, the state variables, the profiles")
	_ = addVerbosityFlags(fs)
	if ok, code := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "actfuzz list: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
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
	fmt.Fprintln(stdout, "Environment parameters P:")
	for _, p := range l.Params {
		fmt.Fprintf(stdout, "  %-8s %s\n", p.Name, p.Doc)
	}
	fmt.Fprintln(stdout, "\nState variables of every flow (conditions, S; prev.X is X before this record):")
	for _, v := range l.State {
		doc := v.Doc
		if len(v.Values) > 0 {
			doc += ": " + strings.Join(v.Values, "|")
		}
		fmt.Fprintf(stdout, "  %-13s %s\n", v.Name, doc)
	}
	fmt.Fprintln(stdout, "\nProfiles (--profile):", strings.Join(l.Profiles, ", "))
	return exitOK
}

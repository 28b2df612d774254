package cli

import (
	"fmt"
	"io"
	"slices"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/internal/suggest"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/gvisor"
	"github.com/actfuzz/actfuzz/netenv/linux"
	"github.com/actfuzz/actfuzz/netenv/ns3"
)

// openSubject maps a --subject name (or a seed's subject) to a subject.
// This is the one place that knows every subject, so no global registry is
// needed. Close the result with closeSubject.
func openSubject(name string) (netenv.Subject, error) {
	switch name {
	case "", "native":
		return netenv.Native{}, nil
	case "ns3":
		return ns3.Open()
	case "gvisor":
		return gvisor.Open()
	case "linux":
		return linux.Open()
	}
	return nil, fmt.Errorf("unknown subject %q (want native, ns3, gvisor or linux)", name)
}

// closeSubject stops a subject's helper processes, if it has any.
// subjectFlag opens the subject named by --subject, saying why not (bad
// input, exit 2) when it cannot.
func subjectFlag(name, cmd string, stderr io.Writer) (netenv.Subject, bool) {
	s, err := openSubject(name)
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz %s: --subject: %v\n", cmd, err)
		return nil, false
	}
	return s, true
}

func closeSubject(s netenv.Subject) {
	if c, ok := s.(io.Closer); ok {
		_ = c.Close()
	}
}

// checkCCA validates a congestion control name for a subject.
func checkCCA(s netenv.Subject, name string) error {
	switch s.Name() {
	case "ns3":
		_, err := ns3.Model(name)
		return err
	case "gvisor":
		if !slices.Contains(s.CCAs(), name) {
			return fmt.Errorf("gVisor offers %v, not %q", s.CCAs(), name)
		}
		return nil
	case "linux":
		if !slices.Contains(s.CCAs(), name) {
			return fmt.Errorf("congestion control %q: the kernel offers %v (net.ipv4.tcp_available_congestion_control)", name, s.CCAs())
		}
		return nil
	}
	if _, ok := ccai.Lookup(name); !ok {
		return fmt.Errorf("unknown congestion control %q%s (known: %v)", name, suggest.DidYouMean(name, ccai.Names()), ccai.Names())
	}
	return nil
}

// openSeed reads a seed file and opens the subject it names; errors are
// printed for command cmd. Close the subject with closeSubject.
func openSeed(path, cmd string, stderr io.Writer) (*corpus.Seed, netenv.Subject, bool) {
	seed, err := corpus.ReadSeed(path)
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz %s: %v\n", cmd, err)
		return nil, nil, false
	}
	subj, err := openSubject(seed.Subject)
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz %s: %v\n", cmd, err)
		return nil, nil, false
	}
	return seed, subj, true
}

// configChecker is a subject that can refuse a configuration before it
// runs (the linux subject: congestion controls the kernel lacks,
// environments its emulator cannot hold). Its errors are bad input.
type configChecker interface {
	Check(cfg *netenv.Config) error
}

// checkConfig asks the subject whether it can run cfg.
func checkConfig(s netenv.Subject, cfg *netenv.Config) error {
	if c, ok := s.(configChecker); ok {
		return c.Check(cfg)
	}
	return nil
}

// kernelOf is the kernel release a subject runs (the linux subject), or "".
func kernelOf(s netenv.Subject) string {
	if r, ok := s.(interface{ Release() string }); ok {
		return r.Release()
	}
	return ""
}

// checkCampaignSubject refuses, at the start, a campaign that a subject
// which can refuse configurations (configChecker: the linux subject) would
// refuse during the run: it is asked about the campaign's flows with every
// parameter of P at the top of its range (bandwidth beyond what its
// emulator holds, congestion controls it lacks, profiles), and the
// campaign's conditions must name only variables the subject provides.
func checkCampaignSubject(c *act.Campaign, s netenv.Subject) error {
	if _, ok := s.(configChecker); !ok {
		return nil
	}
	var e netenv.Env
	for i, r := range c.Params {
		e.Set(i, r.Max)
	}
	cfg := netenv.Config{Seed: 1, Schedule: netenv.Constant(e), Topology: c.Topology, SACK: c.SACK, Profile: c.Profile}
	for _, cca := range c.CCAI {
		cfg.Flows = append(cfg.Flows, netenv.Flow{CCA: cca, Bytes: max(c.Bytes, 1)})
	}
	if err := checkConfig(s, &cfg); err != nil {
		return fmt.Errorf("the campaign's P reaches a configuration this subject refuses: %w", err)
	}
	return providedVars(s, c.CCAI, c.Conditions)
}

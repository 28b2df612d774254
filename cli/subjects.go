package cli

import (
	"flag"
	"fmt"
	"io"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/internal/suggest"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/gvisor"
	"github.com/actfuzz/actfuzz/netenv/linux"
	"github.com/actfuzz/actfuzz/netenv/ns3"
	"github.com/actfuzz/actfuzz/netenv/quicgo"
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
	case "quic":
		return quicgo.Open()
	}
	return nil, fmt.Errorf("unknown subject %q (want %s)", name, suggest.OrList(netenv.SubjectNames()))
}

// declaredCapabilities are every subject's capabilities as declared, for
// listings and hints: ns-3's with every model, without starting a driver.
func declaredCapabilities() []netenv.Capabilities {
	return []netenv.Capabilities{netenv.NativeCapabilities(), ns3.DefaultCapabilities(), (&gvisor.Subject{}).Capabilities(), linux.DefaultCapabilities(), (&quicgo.Subject{}).Capabilities()}
}

// capabilitiesOf is the declared capabilities of the subject named
// (native's for "" or an unknown name).
func capabilitiesOf(name string) netenv.Capabilities {
	for _, c := range declaredCapabilities() {
		if c.Name == name {
			return c
		}
	}
	return netenv.NativeCapabilities()
}

// clusterSubjects are the subjects a cluster serves: the deterministic
// ones, whose findings the coordinator checks by replaying them (run
// --nats refuses the others: linux and quic run in real time).
func clusterSubjects() []string {
	var out []string
	for _, c := range declaredCapabilities() {
		if c.Deterministic {
			out = append(out, c.Name)
		}
	}
	return out
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

// checkCCA validates a congestion control name for a subject: its own
// names and the native aliases it declares.
func checkCCA(s netenv.Subject, name string) error {
	_, err := s.Capabilities().Resolve(name)
	return err
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
	if err := checkSeed(seed, subj); err != nil {
		closeSubject(subj)
		fmt.Fprintf(stderr, "actfuzz %s: %s: %v\n", cmd, path, err)
		return nil, nil, false
	}
	return seed, subj, true
}

// checkSeed refuses a seed that needs what its subject lacks (an edited
// seed asking ns-3 for linux-3.10, a condition on a variable the subject
// does not report), before it runs: bad input, not a failed replay.
func checkSeed(seed *corpus.Seed, subj netenv.Subject) error {
	if seed.Witness != nil {
		return nil // replays on the native symbolic back-end
	}
	cfg, err := seed.Config()
	if err != nil {
		return err
	}
	caps := subj.Capabilities()
	if err := caps.CheckConfig(&cfg); err != nil {
		return err
	}
	if f := seed.Finding; f != nil && (f.Kind == "condition" || f.Kind == corpus.FaultCondition) && f.Flow >= 0 && f.Flow < len(seed.CCAI) {
		if _, err := corpus.Compile([]corpus.ConditionSpec{f.Spec()}, corpus.SchemaOf(caps, seed.CCAI[f.Flow])); err != nil {
			return fmt.Errorf("finding: %w (the %s subject provides %v)", err, caps.Name, corpus.SchemaOf(caps, seed.CCAI[f.Flow]).Names())
		}
	}
	return nil
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

// checkSimFlags refuses flags of sim that the subject would ignore: a
// --profile that does not apply to it, a parameter flag it cannot express
// given away from its default.
func checkSimFlags(fs *flag.FlagSet, subj netenv.Subject, prof ccai.Profile, stderr io.Writer) bool {
	caps := subj.Capabilities()
	if err := caps.CheckProfile(prof); err != nil {
		fmt.Fprintf(stderr, "actfuzz sim: --profile %s: %v\n", prof, err)
		return false
	}
	ok := true
	fs.Visit(func(f *flag.Flag) {
		if ok && netenv.ParamIndex(f.Name) >= 0 {
			if err := caps.CheckParam(f.Name); err != nil {
				fmt.Fprintf(stderr, "actfuzz sim: --%s: %v\n", f.Name, err)
				ok = false
			}
		}
	})
	return ok
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
// emulator holds, congestion controls it lacks, profiles).
func checkCampaignSubject(c *act.Campaign, s netenv.Subject) error {
	if _, ok := s.(configChecker); !ok {
		return nil
	}
	var e netenv.Env
	for i, r := range c.Params {
		e.Set(i, r.Point(r.Points())) // the top of each range
	}
	cfg := c.Setup.Config(1, netenv.Constant(e))
	if err := checkConfig(s, &cfg); err != nil {
		return fmt.Errorf("the campaign's P reaches a configuration this subject refuses: %w", err)
	}
	// Conditions and S against what the subject provides are
	// act.Campaign.CheckSubject's, at load.
	return nil
}

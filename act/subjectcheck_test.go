package act

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

// fakeSubject is the native simulator declaring less than it has: names
// of its own (TcpCubic) with native aliases, no parking-lot, no profiles,
// no qshape, no pacing_rate, no CCAI variables but a w_c of CUBIC's.
type fakeSubject struct{ netenv.Native }

func (fakeSubject) Name() string { return "fake" }

func (fakeSubject) Capabilities() netenv.Capabilities {
	var base []string
	for _, v := range netenv.BaseVars {
		if v != "pacing_rate" {
			base = append(base, v)
		}
	}
	return netenv.Capabilities{Name: "fake", CCAs: []string{"TcpCubic", "TcpLinuxReno"},
		Aliases:    map[string]string{"cubic": "TcpCubic", "reno": "TcpLinuxReno"},
		Params:     []string{"loss", "bw", "delay", "qscale", "app", "buffer"},
		Topologies: []string{netenv.TopoSingleLink, netenv.TopoDumbbell}, Base: base,
		Vars: func(cca string) []ccai.VarDesc {
			if cca == "TcpCubic" {
				return []ccai.VarDesc{{Name: "w_c"}}
			}
			return nil
		}}
}

// pinned is the campaign text that keeps qshape at its default, which
// the fake subject cannot vary.
const pinned = "params:\n  qshape: {min: 0, max: 0, step: 1}\n"

func TestCheckSubjectRefuses(t *testing.T) {
	fake := fakeSubject{}.Capabilities()
	for _, tc := range []struct {
		name, src string
		want      string // "" accepted
	}{
		{"own name", "ccai: [TcpCubic]\n" + pinned, ""},
		{"own name, any case", "ccai: [tcplinuxreno]\n" + pinned, ""},
		{"native alias", "ccai: [cubic, reno]\n" + pinned, ""},
		{"own variable", "ccai: [TcpCubic]\n" + pinned + "conditions:\n  - {name: c, when: \"w_c > cwnd\"}\n", ""},
		{"unknown name", "ccai: [TcpCubic, TcpCubik]\n" + pinned, `c.yaml:1: ccai: unknown congestion control "TcpCubik" for the fake subject (did you mean "TcpCubic"?)`},
		{"native-only name", "ccai: [vegas]\n" + pinned, `ccai: unknown congestion control "vegas" for the fake subject`},
		{"topology", "ccai: [cubic]\ntopology: parking-lot\n" + pinned, `c.yaml:2: topology: the fake subject cannot build topology "parking-lot"`},
		{"profile", "ccai: [cubic]\nprofile: linux-3.10\n" + pinned, "c.yaml:2: profile: profile linux-3.10 does not apply to the fake subject"},
		{"param varied by default", "ccai: [cubic]\n", "params.qshape: the fake subject cannot express parameter qshape"},
		{"param varied", "ccai: [cubic]\nparams:\n  qshape: {min: 0, max: 2, step: 1}\n", "c.yaml:3: params.qshape: the fake subject cannot express parameter qshape"},
		{"state var", "ccai: [cubic]\n" + pinned + "kappa: 2\nstate:\n  pacing_rate: {min: 0, max: 1, step: 1}\n",
			"c.yaml:6: state.pacing_rate: unknown state variable: the fake subject does not provide pacing_rate for cubic"},
		{"condition var", "ccai: [cubic]\n" + pinned + "conditions:\n  - {name: t, when: \"target > 2*cwnd\"}\n",
			`conditions[0]: condition "t" reads target: the fake subject does not provide target for cubic (it provides cwnd,`},
		{"condition prev var", "ccai: [cubic]\n" + pinned + "conditions:\n  - {name: p, when: \"prev.pacing_rate > 0\"}\n",
			`condition "p" reads prev.pacing_rate: the fake subject does not provide pacing_rate`},
		{"native hint", "ccai: [cubic]\n" + pinned + "conditions:\n  - {name: t, when: \"target > 2*cwnd\"}\n", "; the native subject does"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseCampaignFor("c.yaml", []byte(tc.src), fake)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			case tc.want != "" && !errors.Is(err, ErrSubjectLacks):
				t.Fatalf("%v is not ErrSubjectLacks", err)
			}
		})
	}
}

// TestParseCampaignIsNative: without a subject, a campaign is checked
// against the native one, so ns-3's names are refused there and the
// fake subject's variables too.
func TestParseCampaignIsNative(t *testing.T) {
	for _, src := range []string{"ccai: [TcpCubic]\n", "ccai: [cubic]\nconditions:\n  - {name: c, when: \"w_c > 1\"}\n"} {
		if _, err := ParseCampaign("c.yaml", []byte(src)); !errors.Is(err, ErrSubjectLacks) {
			t.Errorf("%q: %v, want ErrSubjectLacks", src, err)
		}
	}
}

// TestRunRefusesAtStart: a campaign parsed for the native subject and run
// on one that lacks what it needs is refused before any simulation.
func TestRunRefusesAtStart(t *testing.T) {
	c, err := ParseCampaign("c.yaml", []byte("ccai: [cubic]\nbudget: 2\nprofile: linux-3.10\n"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), c, Options{Method: "ran", Subject: fakeSubject{}, Workers: 1})
	if !errors.Is(err, ErrSubjectLacks) || rep != nil {
		t.Fatalf("Run: %v, %v; want ErrSubjectLacks", rep, err)
	}
	// Its own names run, with its schema: a condition on its w_c.
	c, err = ParseCampaignFor("c.yaml", []byte("ccai: [TcpCubic]\nbudget: 2\nbytes: 100000\n"+pinned+
		"conditions:\n  - {name: c, when: \"w_c == 0 && cwnd > 0\"}\n"), fakeSubject{}.Capabilities())
	if err != nil {
		t.Fatal(err)
	}
	rep, err = Run(context.Background(), c, Options{Method: "ran", Subject: fakeSubject{}, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) == 0 {
		t.Fatal("no finding")
	}
	st := rep.Findings[0].Seed.Finding.State
	if _, ok := st["w_c"]; !ok {
		t.Errorf("finding state without the subject's w_c: %v", st)
	}
	for _, v := range []string{"pacing_rate", "target", "cnt"} {
		if _, ok := st[v]; ok {
			t.Errorf("finding state has %s, which the subject does not provide: %v", v, st)
		}
	}
}

// Run runs the native CCAI a fake name stands for.
func (f fakeSubject) Run(ctx context.Context, cfg netenv.Config, obs observe.Observer) (netenv.Result, error) {
	caps := f.Capabilities()
	cfg.Flows = slices.Clone(cfg.Flows)
	for i := range cfg.Flows {
		cfg.Flows[i].CCA = caps.NativeName(cfg.Flows[i].CCA)
	}
	return f.Native.Run(ctx, cfg, obs)
}

// A campaign without `state:` runs on a subject that lacks a variable of
// the default S (the quic subject reports no ssthresh): S leaves it out
// and says so; a campaign whose `state:` names it is refused.
func TestDefaultStateFitsSubject(t *testing.T) {
	caps := netenv.NativeCapabilities()
	caps.Name = "nossthresh"
	for _, v := range netenv.BaseVars {
		if v != "ssthresh" {
			caps.Base = append(caps.Base, v)
		}
	}
	c, err := ParseCampaignFor("c.yaml", []byte("ccai: [reno]\noracles: none\n"), caps)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range c.Space.Vars {
		names = append(names, v.Name)
	}
	if !slices.Equal(names, []string{"cwnd", "srtt", "rttvar", "ca_state"}) || !slices.Equal(c.StateDropped, []string{"ssthresh"}) {
		t.Fatalf("S %v, dropped %v", names, c.StateDropped)
	}
	// The same campaign checked again on the native subject gets the
	// whole default S back.
	if err := c.CheckSubject(netenv.NativeCapabilities()); err != nil || len(c.Space.Vars) != 5 || c.StateDropped != nil {
		t.Fatalf("native: %v, S %v, dropped %v", err, c.Space.Vars, c.StateDropped)
	}
	_, err = ParseCampaignFor("c.yaml", []byte("ccai: [reno]\noracles: none\nstate:\n  cwnd: {min: 1, max: 1024, step: 1}\n  ssthresh: {min: 1, max: 1024, step: 1}\n"), caps)
	if err == nil || !strings.Contains(err.Error(), "state.ssthresh: unknown state variable") {
		t.Fatalf("explicit ssthresh: %v", err)
	}
}

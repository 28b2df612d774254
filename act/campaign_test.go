package act

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseCampaignErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
	}{
		{"unknown key", "ccai: [cubic]\nbogus: 1\n", "c.yaml:2: bogus: unknown key"},
		{"typo key", "ccai: [cubic]\nbudgett: 1\n", `c.yaml:2: budgett: unknown key (did you mean "budget"?)`},
		{"nested typo key", "ccai: [cubic]\nparams:\n  bw: {min: 1, max: 2, stpe: 1}\n", `c.yaml:3: params.bw.stpe: unknown key (did you mean "step"?)`},
		{"wrong type", "ccai: [cubic]\nbytes: lots\n", `c.yaml:2: bytes: want an integer, not "lots"`},
		{"wrong type budget", "ccai: [cubic]\nbudget: lots\n", "c.yaml:2: budget: want an integer"},
		{"wrong type nested", "ccai: [cubic]\nparams:\n  bw: {min: 1, max: x, step: 1}\n", "c.yaml:3: params.bw.max: want a number"},
		{"empty ccai", "ccai: []\n", "c.yaml:1: ccai: empty"},
		{"typo ccai", "ccai: [cubci]\n", `did you mean "cubic"?`},
		{"inverted range", "ccai: [cubic]\nparams:\n  bw: {min: 10, max: 1, step: 0.1}\n", "c.yaml:3: params.bw: want min ≤ max"},
		{"unknown param", "ccai: [cubic]\nparams:\n  jitter: {min: 0, max: 1, step: 1}\n", "c.yaml:3: params.jitter: unknown parameter"},
		{"unknown ccai", "ccai: [nope]\n", "c.yaml:1: ccai: unknown congestion control"},
		{"missing ccai", "budget: 3\n", "ccai: missing"},
		{"bad condition", "ccai: [cubic]\nconditions:\n  - {name: x, when: \"cwnd >\"}\n", "condition \"x\""},
		{"unknown state var", "ccai: [reno]\nkappa: 2\nstate:\n  target: {min: 0, max: 1, step: 1}\n", "state.target: unknown state variable"},
		{"bad kappa", "ccai: [cubic]\nkappa: 100\n", "kappa: 100 is not a region size"},
		{"bad schedule", "ccai: [cubic]\nschedule: fast\n", `c.yaml:2: schedule: "fast": want adaptive or paper`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseCampaign("c.yaml", []byte(tc.src))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestMinimalCampaignTakesDefaults(t *testing.T) {
	c, err := ParseCampaign("c.yaml", []byte("ccai: reno\n"))
	if err != nil {
		t.Fatal(err)
	}
	d := DefaultCampaign()
	if c.Bytes != 15_000_000 || c.Kappa != 128 || c.Delta != 0.015 || !reflect.DeepEqual(c.Params, d.Params) || !c.Space.Equal(d.Space) {
		t.Fatalf("defaults not applied: %+v", c)
	}
	if len(manEnvs()) != 840 {
		t.Fatalf("MAN has %d environments, want 840", len(manEnvs()))
	}
}

package act

import (
	"strings"
	"testing"

	"github.com/actfuzz/actfuzz/corpus"
)

func TestNewCampaign(t *testing.T) {
	c, err := NewCampaign("go", CampaignSpec{CCAI: []string{"reno"}, Budget: 7, NoSACK: true,
		Conditions: []corpus.ConditionSpec{{Name: "big", When: "cwnd > 100"}}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Budget != 7 || c.SACK || len(c.Conditions) != 1 || c.Kappa != 128 {
		t.Errorf("campaign %+v", c)
	}
	for _, tc := range []struct {
		spec CampaignSpec
		want string
	}{
		{CampaignSpec{}, "ccai: empty"},
		{CampaignSpec{CCAI: []string{}}, "ccai"},
		{CampaignSpec{CCAI: []string{"cubci"}}, `did you mean "cubic"?`},
		{CampaignSpec{CCAI: []string{"reno"}, Params: map[string]Range{"bw": {Min: 2, Max: 1, Step: 1}}}, "params.bw"},
		{CampaignSpec{CCAI: []string{"reno"}, Conditions: []corpus.ConditionSpec{{Name: "x", When: "cwnd >"}}}, "conditions"},
	} {
		if _, err := NewCampaign("go", tc.spec); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.spec, err, tc.want)
		}
	}
}

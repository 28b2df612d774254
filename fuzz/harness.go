package fuzz

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"

	"github.com/actfuzz/actfuzz/act"
)

// CampaignFromEnv is the campaign of the fuzz harnesses: the file named by
// ACTFUZZ_CAMPAIGN (default: the embedded default CUBIC campaign), with
// ACTFUZZ_BYTES, if set, overriding the bytes per flow.
func CampaignFromEnv() (*act.Campaign, error) {
	c := act.DefaultCampaign()
	if p := os.Getenv("ACTFUZZ_CAMPAIGN"); p != "" {
		var err error
		if c, err = act.LoadCampaign(p); err != nil {
			return nil, err
		}
	}
	if s := os.Getenv("ACTFUZZ_BYTES"); s != "" {
		b, err := strconv.ParseUint(s, 10, 64)
		if err != nil || b == 0 {
			return nil, fmt.Errorf("ACTFUZZ_BYTES=%q: want a positive integer", s)
		}
		c.Bytes = b
	}
	return c, nil
}

// findingMessage describes a finding of the harnesses. Its first line is
// stable for a given condition or fault kind (go-fuzz groups crashers by
// it); the rest reproduces G.
func findingMessage(out *Outcome, g act.Config) string {
	what := ""
	if len(out.Hits) > 0 {
		what = "condition " + out.Hits[0].Condition
	} else if out.Fault != nil {
		what = "fault " + out.Fault.Kind
	}
	sched, _ := json.Marshal(g.Schedule)
	return fmt.Sprintf("actfuzz finding: %s\n%s\nseed %d schedule %s", what, out.String(), g.Seed, sched)
}

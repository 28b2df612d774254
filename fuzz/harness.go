package fuzz

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/oracle"
)

// CampaignFromEnv is the campaign of the fuzz harnesses: the file named by
// ACTFUZZ_CAMPAIGN (default: the embedded default CUBIC campaign), with
// ACTFUZZ_BYTES, if set, overriding the bytes per flow. The default
// campaign checks every oracle but the reported departures.
func CampaignFromEnv() (*act.Campaign, error) {
	c := act.DefaultCampaign()
	c.Oracles = oracle.Choice{Names: withoutReported(oracle.Names())}
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

// reportedDepartures are oracles whose rule the native model at profile
// linux breaks on purpose, because Linux does (the oracle keeps the RFC's
// rule and reports it; its Linux text says where): a fuzz harness for
// which every hit is a crasher would stop on Linux's own behaviour.
// ssthresh-steady: CUBIC's HyStart runs while cwnd < ssthresh in any
// state (net/ipv4/tcp_cubic.c cubictcp_acked), so a delay rise during
// PRR's slow start lowers ssthresh in recovery; the default inputs reach
// it since the model's PRR adds its slow-start segment only where Linux
// does (netenv/tcp prrSSExtra).
var reportedDepartures = []string{"ssthresh-steady"}

// withoutReported is names less reportedDepartures.
func withoutReported(names []string) []string {
	var out []string
	for _, n := range names {
		if !slices.Contains(reportedDepartures, n) {
			out = append(out, n)
		}
	}
	return out
}

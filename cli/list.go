package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv"
)

func runList(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("actfuzz list", flag.ContinueOnError)
	_ = addVerbosityFlags(fs)
	if ok, code := parseFlags(fs, args, stderr); !ok {
		return code
	}
	fmt.Fprintln(stdout, "Congestion control algorithms (--cca):")
	for _, name := range ccai.Names() {
		info, _ := ccai.Lookup(name)
		fmt.Fprintf(stdout, "  %-10s %s\n", name, info.Description)
		if vars := ccai.VarsOf(info.New()); len(vars) > 0 {
			names := make([]string, len(vars))
			for i, v := range vars {
				names[i] = v.Name
				if len(v.Values) > 0 {
					names[i] += "{" + strings.Join(v.Values, "|") + "}"
				}
			}
			fmt.Fprintf(stdout, "  %-10s   vars: %s\n", "", strings.Join(names, ", "))
		}
	}
	fmt.Fprintln(stdout, "\nEnvironment parameters P:")
	for _, p := range netenv.ParamNames {
		fmt.Fprintf(stdout, "  %-8s %s\n", p, netenv.ParamDocs[p])
	}
	fmt.Fprintln(stdout, "\nState variables S (every flow, every ACK and state change):")
	for _, c := range []struct{ name, doc string }{
		{"cwnd", "congestion window (packets)"},
		{"ssthresh", "slow-start threshold (packets)"},
		{"srtt", "smoothed RTT (ms)"},
		{"rttvar", "RTT mean deviation (ms)"},
		{"ca_state", strings.Join(ccai.CAStateNames[:], "|")},
		{"prev_ca_state", "ca_state before the last change"},
		{"prior_cwnd", "cwnd when the last reduction started"},
		{"in_flight", "packets in flight"},
		{"delivered", "packets delivered"},
		{"rto", "retransmission timeout (ms)"},
		{"pacing_rate", "pacing rate (bytes/s)"},
	} {
		fmt.Fprintf(stdout, "  %-13s %s\n", c.name, c.doc)
	}
	fmt.Fprintln(stdout, "\nProfiles (--profile):", strings.Join(ccai.ProfileNames[:], ", "))
	return 0
}

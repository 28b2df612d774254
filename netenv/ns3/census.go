package ns3

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/actfuzz/actfuzz/netenv"
)

// The RTO census measures how often a subject times out and retransmits
// against the native subject, over a fixed set of environments and seeds:
// the check that the driver's configuration (doc.go, "The TCP stack as
// configured") does not make ns-3 time out where Linux would not. Run it
// with `go run ./netenv/ns3/census` (see that program).

// CensusEnvs are the census's 20 environments: loss {0, 1e-4, 1e-3,
// 5e-3, 1e-2} × (bandwidth, one-way delay) {10 Mbit/s 20 ms, 50 Mbit/s
// 100 ms, 100 Mbit/s 10 ms, 5 Mbit/s 200 ms}, a 100-packet buffer, no
// random queuing delay, an unlimited application.
func CensusEnvs() []netenv.Env {
	var envs []netenv.Env
	for _, p := range [][2]float64{{10, 20}, {50, 100}, {100, 10}, {5, 200}} {
		for _, loss := range []float64{0, 1e-4, 1e-3, 5e-3, 1e-2} {
			envs = append(envs, netenv.Env{Loss: loss, BW: p[0], Delay: p[1], App: 10000, Buffer: 100})
		}
	}
	return envs
}

// CensusRow is one environment of the census: timeouts and retransmits
// summed over the seeds, per subject.
type CensusRow struct {
	Env                netenv.Env
	RTOs, Retransmits  [2]uint64 // [ns-3, native]
	Unfinished, Capped [2]int
}

// Census runs bytes per flow of model (an ns-3 class name) on s and its
// native counterpart on netenv.Native, for every environment and seeds
// 1..seeds.
func Census(ctx context.Context, s netenv.Subject, model string, envs []netenv.Env, seeds int, bytes uint64) ([]CensusRow, error) {
	native := NativeName(model)
	if native == model {
		return nil, fmt.Errorf("census: no native counterpart of %s", model)
	}
	rows := make([]CensusRow, len(envs))
	for i, e := range envs {
		rows[i].Env = e
		for seed := 1; seed <= seeds; seed++ {
			for k, sub := range []struct {
				s   netenv.Subject
				cca string
			}{{s, model}, {netenv.Native{}, native}} {
				cfg := netenv.Config{Seed: uint64(seed), Schedule: netenv.Constant(e), SACK: true,
					Flows: []netenv.Flow{{CCA: sub.cca, Bytes: bytes}}}
				res, err := sub.s.Run(ctx, cfg, nil)
				if err != nil {
					return rows, fmt.Errorf("census: %s on %+v seed %d: %w", sub.cca, e, seed, err)
				}
				f := res.Flows[0]
				rows[i].RTOs[k] += f.Timeouts
				rows[i].Retransmits[k] += f.Retransmits
				if !f.Done {
					rows[i].Unfinished[k]++
				}
				if res.Capped {
					rows[i].Capped[k]++
				}
			}
		}
	}
	return rows, nil
}

// WriteCensus prints the rows and their totals as a table.
func WriteCensus(w io.Writer, model string, rows []CensusRow) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "loss\tbw\tdelay\t%s rto\tnative rto\t%s retx\tnative retx\tunfinished\t\n", model, model)
	var tot CensusRow
	for _, r := range rows {
		fmt.Fprintf(tw, "%g\t%g\t%g\t%d\t%d\t%d\t%d\t%d/%d\t\n", r.Env.Loss, r.Env.BW, r.Env.Delay,
			r.RTOs[0], r.RTOs[1], r.Retransmits[0], r.Retransmits[1], r.Unfinished[0], r.Unfinished[1])
		for k := range 2 {
			tot.RTOs[k] += r.RTOs[k]
			tot.Retransmits[k] += r.Retransmits[k]
			tot.Unfinished[k] += r.Unfinished[k]
		}
	}
	fmt.Fprintf(tw, "total\t\t\t%d\t%d\t%d\t%d\t%d/%d\t\n", tot.RTOs[0], tot.RTOs[1], tot.Retransmits[0], tot.Retransmits[1], tot.Unfinished[0], tot.Unfinished[1])
	return tw.Flush()
}

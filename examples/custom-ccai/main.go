// Command custom-ccai shows how a user's own module adds a congestion
// control algorithm to actfuzz and tests it: it registers "gentle" (AIMD
// with a gentler decrease, β = 0.8) from init, runs one simulation, then a
// short ACT campaign over it with a condition.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv"
)

// Gentle is AIMD with β = 0.8.
type Gentle struct{ losses uint32 }

func (*Gentle) Init(*ccai.Sock) {}
func (g *Gentle) SSThresh(s *ccai.Sock) uint32 {
	g.losses++
	return max(s.Cwnd*4/5, 2)
}
func (*Gentle) CongAvoid(s *ccai.Sock, acked uint32) { ccai.RenoCongAvoid(s, acked) }
func (*Gentle) SetState(*ccai.Sock, ccai.CAState)    {}
func (*Gentle) CwndEvent(*ccai.Sock, ccai.Event)     {}
func (*Gentle) UndoCwnd(s *ccai.Sock) uint32         { return ccai.RenoUndoCwnd(s) }
func (*Gentle) Vars() []ccai.VarDesc {
	return []ccai.VarDesc{{Name: "losses", Doc: "reductions so far"}}
}
func (g *Gentle) ReadVars(_ *ccai.Sock, dst []float64) { dst[0] = float64(g.losses) }

func init() {
	ccai.Register(ccai.Info{Name: "gentle", Description: "AIMD with β = 0.8 (example)", New: func() ccai.Algorithm { return &Gentle{} }})
}

func main() {
	ctx := context.Background()
	res, err := netenv.Run(ctx, netenv.Config{Seed: 1, Schedule: netenv.Constant(netenv.DefaultEnv()),
		Flows: []netenv.Flow{{CCA: "gentle", Bytes: 5_000_000}}, SACK: true}, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	f := res.Flows[0]
	fmt.Printf("gentle: %d bytes in %.2f s, %d recoveries, final cwnd %d\n", f.DeliveredBytes, res.SimTime.Seconds(), f.Recoveries, f.Final.Cwnd)

	c, err := act.ParseCampaign("inline", []byte(`
ccai: [gentle]
bytes: 2000000
conditions:
  - {name: many-losses, when: "losses > 500"}
budget: 256
window: 64
`))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	rep, err := act.Run(ctx, c, act.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("campaign: %d sims, %d regions at k=16, %d finding groups\n", rep.Sims, rep.Store.VisitedRegions(16), len(rep.Findings))
}

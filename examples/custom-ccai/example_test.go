package main

import (
	"context"
	"fmt"

	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

// lastVars keeps the CCAI's variables (Gentle.Vars) of the last state
// record.
type lastVars struct{ vars []float64 }

func (l *lastVars) Observe(r *observe.Record) { l.vars = append(l.vars[:0], r.Vars...) }

// Example_simulation runs this module's own CCAI, registered by name from
// init (gentle.go), for one short transfer on the native simulator over a
// lossy 10 Mbit/s link: the same name a campaign's ccai: list, a seed file
// and `custom-ccai list` use.
func Example_simulation() {
	env := netenv.DefaultEnv()
	env.BW, env.Delay, env.Loss = 10, 20, 0.01 // Mbit/s, ms, 1% loss
	cfg := netenv.Config{Seed: 1, Schedule: netenv.Constant(env),
		Flows: []netenv.Flow{{CCA: "gentle", Bytes: 1_000_000}}, SACK: true}
	last := &lastVars{}
	res, err := netenv.Run(context.Background(), cfg, last)
	if err != nil {
		fmt.Println("run:", err)
		return
	}
	f := res.Flows[0]
	fmt.Println("done:", f.Done, "delivered:", f.DeliveredBytes)
	fmt.Println("it recovered from losses:", f.Recoveries > 0)
	fmt.Println("its own variable counted reductions:", last.vars[0] > 0)
	// Output:
	// done: true delivered: 1000000
	// it recovered from losses: true
	// its own variable counted reductions: true
}

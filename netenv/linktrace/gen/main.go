// Command gen writes the shipped traces (see package linktrace). It is
// deterministic: each trace comes from a fixed seed.
package main

import (
	"bufio"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
)

func main() {
	dir := "traces"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		log.Fatal(err)
	}
	for name, gen := range map[string]func() []int64{"steady": steady, "lte": lte, "wifi": wifi} {
		if err := write(filepath.Join(dir, name+".trace"), gen()); err != nil {
			log.Fatal(err)
		}
	}
}

func write(path string, ms []int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for _, t := range ms {
		fmt.Fprintln(w, t)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// opportunities per millisecond at rate r Mbit/s: r·1e6/8/1500/1000.
func perMS(mbps float64) float64 { return mbps * 1e6 / 8 / 1500 / 1000 }

// steady: 12 Mbit/s for one second, one opportunity a millisecond.
func steady() []int64 {
	out := make([]int64, 0, 1000)
	for t := int64(1); t <= 1000; t++ {
		out = append(out, t)
	}
	return out
}

// lte: 30 s; every 20 ms the rate takes a log-normal step (σ 0.15)
// bounded to [0.5, 40] Mbit/s; outages of 100–600 ms start with
// probability 1/400 per 20 ms step (about every 8 s).
func lte() []int64 {
	rng := rand.New(rand.NewPCG(2026, 11))
	var out []int64
	rate, credit := 10.0, 0.0
	outage := int64(0)
	for t := int64(1); t <= 30000; t++ {
		if t%20 == 0 {
			rate = math.Min(40, math.Max(0.5, rate*math.Exp(0.15*rng.NormFloat64())))
			if outage <= t && rng.IntN(400) == 0 {
				outage = t + 100 + int64(rng.IntN(500))
			}
		}
		if t < outage {
			continue
		}
		credit += perMS(rate)
		for ; credit >= 1; credit-- {
			out = append(out, t)
		}
	}
	return out
}

// wifi: 10 s; every 2–8 ms a transmission opportunity carries an
// aggregate of 4–24 packets (about 25 Mbit/s on average).
func wifi() []int64 {
	rng := rand.New(rand.NewPCG(2026, 12))
	var out []int64
	for t := int64(1); t <= 10000; {
		n := 4 + rng.IntN(21)
		for range n {
			out = append(out, t)
		}
		t += 2 + int64(rng.IntN(7))
	}
	return out
}

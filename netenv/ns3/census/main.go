// Command census counts the retransmission timeouts and retransmits of
// ns-3's TcpCubic and TcpLinuxReno against the native cubic and reno over
// ns3.CensusEnvs (20 environments) × 2 seeds, 10 MB per run: the
// repeatable measurement behind the driver's RTO configuration (see
// netenv/ns3/doc.go).
//
//	go run ./netenv/ns3/census [-driver bin/actfuzz-ns3] [-seeds 2] [-bytes 10000000] [-models TcpCubic,TcpLinuxReno]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/actfuzz/actfuzz/netenv/ns3"
)

func main() {
	driver := flag.String("driver", "", "the ns-3 driver binary (default: found as the subject finds it)")
	seeds := flag.Int("seeds", 2, "seeds per environment")
	bytes := flag.Uint64("bytes", 10_000_000, "bytes per run")
	models := flag.String("models", "TcpCubic,TcpLinuxReno", "ns-3 models, comma-separated")
	flag.Parse()
	s, err := ns3.New(ns3.Options{Driver: *driver, RunTimeout: 10 * time.Minute})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer s.Close()
	fmt.Printf("driver %s\n", s.Driver())
	for _, m := range strings.Split(*models, ",") {
		start := time.Now()
		rows, err := ns3.Census(context.Background(), s, m, ns3.CensusEnvs(), *seeds, *bytes)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("\n%s (%d environments × %d seeds, %d bytes, %v wall)\n", m, len(rows), *seeds, *bytes, time.Since(start).Round(time.Second))
		if err := ns3.WriteCensus(os.Stdout, m, rows); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

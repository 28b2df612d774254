package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/corpus/pktexport"
	"github.com/actfuzz/actfuzz/netenv/pkt"
)

const exportUsage = "usage: actfuzz export SEED.json --pkt [--out FILE.pkt] [--every-ack] [--within D]"

// runExport is `actfuzz export SEED --pkt`: a finding of the native model
// at profile linux (or of the kernel, replayed natively) as a packetdrill
// script that drives a stock kernel to the hit (corpus/pktexport,
// docs/packetdrill.md). Exit 0 written, 1 the native model does not reach
// the finding, 2 a seed the script cannot express (named), 3 I/O.
func runExport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("actfuzz export", flag.ContinueOnError)
	asPkt := fs.Bool("pkt", false, "write a packetdrill script (the only export format)")
	everyAck := fs.Bool("every-ack", false, "assert the model's cwnd, ssthresh and ca_state after every ACK, not only at the hit: the first failing assert shows where the kernel left the model's path (a longer, stricter script)")
	within := fs.Duration("within", 0, "also script the ACKs of this long after the hit and assert that the finding's condition held at one of them (a condition over TCP_INFO only): the kernel may show it an ACK or two from where the model did")
	out := fs.String("out", "", "write the script here (default: SEED.pkt beside the seed; - for stdout)")
	_ = addVerbosityFlags(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, exportUsage)
		fs.PrintDefaults()
		fmt.Fprint(stderr, exitHelp("export"))
	}
	positional, ok, code := parseInterleaved(fs, args, stderr)
	if !ok {
		return code
	}
	if len(positional) != 1 {
		fmt.Fprintln(stderr, exportUsage)
		return exitUsage
	}
	if *within < 0 {
		fmt.Fprintln(stderr, "actfuzz export: --within must be ≥ 0")
		return exitUsage
	}
	if !*asPkt {
		fmt.Fprintln(stderr, "actfuzz export: --pkt: missing (a packetdrill script is the only export format)")
		return exitUsage
	}
	path := positional[0]
	seed, err := corpus.ReadSeed(path)
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz export: %v\n", err)
		return exitUsage
	}
	x, err := pktexport.Export(ctx, seed, filepath.Base(path), pktexport.Options{EveryAck: *everyAck, Within: *within})
	var refused *pktexport.RefusedError
	var notReproduced *pktexport.NotReproducedError
	switch {
	case errors.As(err, &refused):
		fmt.Fprintf(stderr, "actfuzz export: %s: %v\n", path, err)
		return exitUsage
	case errors.As(err, &notReproduced):
		fmt.Fprintf(stderr, "actfuzz export: %s: %v\n", path, err)
		return exitFound
	case ctx.Err() != nil:
		return exitInterrupted
	case err != nil:
		fmt.Fprintf(stderr, "actfuzz export: %s: %v\n", path, err)
		return exitInternal
	}
	var b bytes.Buffer
	if err := pkt.WriteScript(&b, x); err != nil {
		fmt.Fprintf(stderr, "actfuzz export: %v\n", err)
		return exitInternal
	}
	dest := *out
	if dest == "" {
		dest = strings.TrimSuffix(path, ".json") + ".pkt"
	}
	if dest == "-" {
		_, err = stdout.Write(b.Bytes())
	} else {
		if err = os.MkdirAll(filepath.Dir(dest), 0o755); err == nil {
			err = corpus.WriteFileAtomic(dest, b.Bytes())
		}
		if err == nil {
			fmt.Fprintf(stdout, "wrote %s: %d ACKs up to the hit at %.6f s, %d asserts (run it: actfuzz pkt %s; on the kernel: bench/pkt-kernel.sh 1 %s)\n",
				dest, len(x.Acks), float64(seed.Finding.TimeNS)/1e9, countAsserts(x), dest, dest)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz export: --out: %v\n", err)
		return exitInternal
	}
	return exitOK
}

// countAsserts counts the script's assert statements: the field asserts
// and the condition's, written as code.
func countAsserts(x *pkt.Export) int {
	n := 0
	for _, c := range x.Checks {
		n += len(c.Asserts)
		for _, l := range c.Code {
			if strings.HasPrefix(l, "assert ") {
				n++
			}
		}
	}
	return n
}

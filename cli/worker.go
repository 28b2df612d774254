package cli

import (
	"context"
	"io"
	"os"
	"slices"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/netenv"
)

// runWorker is `actfuzz worker`: with --nats URL a worker host of a
// cluster (runClusterWorker); without, a worker process started by a
// campaign (act.Options.Isolate), which speaks the worker protocol
// (act/protocol.go) on stdin and stdout and is not meant to be run by
// hand. A worker process's simulations are not cancelled by the CLI's
// signal context: the coordinator ends the process.
func runWorker(ctx context.Context, args []string, _, stderr io.Writer) int {
	if natsArg(args) || slices.ContainsFunc(args, func(a string) bool { return a == "-h" || a == "--help" || a == "-help" }) {
		return runClusterWorker(ctx, args, stderr)
	}
	var subjects []netenv.Subject
	defer func() {
		for _, s := range subjects {
			closeSubject(s)
		}
	}()
	open := func(name string) (netenv.Subject, error) {
		s, err := openSubject(name)
		if err == nil {
			subjects = append(subjects, s)
		}
		return s, err
	}
	// Stdout carries the protocol: whatever else the process prints (a
	// CCAI's debugging output) goes to stderr instead.
	proto := os.Stdout
	os.Stdout = os.Stderr
	return act.WorkerMain(context.Background(), args, os.Stdin, proto, stderr, open)
}

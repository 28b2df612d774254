package cli

import (
	"context"
	"io"
	"os"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/netenv"
)

// runWorker is `actfuzz worker`: a worker process started by a campaign
// (act.Options.Isolate). It speaks the worker protocol (act/protocol.go) on
// stdin and stdout; it is not meant to be run by hand.
// Its simulations are not cancelled by the CLI's signal context: the
// coordinator ends the process.
func runWorker(_ context.Context, args []string, _, stderr io.Writer) int {
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

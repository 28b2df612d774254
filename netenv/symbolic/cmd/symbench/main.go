// Command symbench runs the symbolic back-end's command line (the same as
// `actfuzz sym`), for bench/sym.sh and for use before the main command
// wires it in.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/actfuzz/actfuzz/netenv/symbolic"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := symbolic.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

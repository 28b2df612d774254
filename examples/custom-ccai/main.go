// Command custom-ccai is actfuzz with one more congestion control
// algorithm: "gentle" (gentle.go), registered from init. cli.Main gives it
// every actfuzz command (run, replay, minimize, compare, diff, sim, list,
// and worker for isolated worker processes), and its seeds name this
// program as their writer.
//
//	go build -o custom-ccai . && ./custom-ccai run gentle.yaml --budget 200
package main

import "github.com/actfuzz/actfuzz/cli"

func main() { cli.Main() }

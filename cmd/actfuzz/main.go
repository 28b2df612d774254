// Command actfuzz finds bugs in TCP congestion-control implementations by
// automatic congestion-control testing (ACT, NSDI 2019) on a deterministic
// network simulator. Its commands live in package cli.
package main

import "github.com/actfuzz/actfuzz/cli"

func main() { cli.Main() }

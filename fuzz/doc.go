// Package fuzz will hold actfuzz's fuzzing harnesses: a decoder from any
// byte string to a valid simulation configuration G inside P (and its
// inverse, to seed fuzzers from a campaign's corpus), a go-fuzz Fuzz
// function behind the gofuzz build tag with region-coverage feedback, and
// native `go test -fuzz` targets for region feedback and for robustness of
// the campaign parser, the seed decoder and the simulator under extreme
// parameters. Not implemented yet (issue 10).
package fuzz

// Package upstream holds reproducers of candidate gVisor netstack bugs in
// the form a gVisor maintainer can run: Go tests that drive
// gvisor.dev/gvisor/pkg/tcpip alone (a stack with a channel link endpoint,
// faketime's manual clock and a peer scripted segment by segment), with no
// actfuzz code in the loop. Each test asserts the behaviour gVisor shows
// today and explains, beside the assertion, what RFC behaviour it departs
// from, so that the test fails (and must be revisited) once gVisor
// changes. The write-ups are docs/bugs/gvisor-*.md; the campaigns that found
// them are described in netenv/gvisor/doc.go ("Known departures and
// candidate bugs").
//
// The package imports nothing of actfuzz so that its tests can be copied
// into a gVisor checkout (pkg/tcpip/transport/tcp/test) as they are, with
// only the package clause changed.
package upstream

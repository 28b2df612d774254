package act

import (
	"syscall"
	"testing"

	"github.com/actfuzz/actfuzz/ccai"
)

// peakSize is the brief overrun of test-peak: over the tests' 512 MB
// worker limit.
const peakSize = 600 << 20

// test-peak maps peakSize bytes outside the Go heap (where the worker's
// heap checks do not look), touches them and unmaps them at its trigger,
// then runs on like Reno: an overrun that lasts a fraction of a second,
// which the supervisor's RSS samples may or may not see. The
// configuration must be charged with an oom either way (the simulation's
// own peak RSS, checked as it ends).
func init() {
	ccai.Register(ccai.Info{Name: "test-peak", Description: "test only: test-peak", New: func() ccai.Algorithm {
		return &once{misbehave: func() {
			b, err := syscall.Mmap(-1, 0, peakSize, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
			if err != nil {
				panic(err)
			}
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1
			}
			_ = syscall.Munmap(b)
		}}
	}})
	platformFaults = append(platformFaults, faultCase{"oom-peak", "test-peak", "oom", "memory limit"})
}

// The kernel's peak RSS, reset, is the peak since the reset: what the
// worker checks at the end of each simulation.
func TestPeakRSS(t *testing.T) {
	if !resetPeakRSS() {
		t.Skip("no /proc/self/clear_refs")
	}
	base, err := peakRSS()
	if err != nil {
		t.Fatal(err)
	}
	const size = 64 << 20
	b, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	if err := syscall.Munmap(b); err != nil {
		t.Fatal(err)
	}
	peak, err := peakRSS()
	if err != nil {
		t.Fatal(err)
	}
	// RSS may have shrunk a little since the reset (pages given back).
	if peak < base+size*3/4 {
		t.Fatalf("peak %d after %d bytes touched from %d", peak, size, base)
	}
	if !resetPeakRSS() {
		t.Fatal("second reset failed")
	}
	if after, err := peakRSS(); err != nil || after >= peak {
		t.Fatalf("after the reset: peak %d (%v), was %d", after, err, peak)
	}
}

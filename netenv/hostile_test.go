package netenv_test

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/netenv"
)

// A trace file named by a campaign can be any file: it is read under its
// cap, only if it is a regular file, and a parse error gives a position
// and never the content (issue 48 item 5).
func TestReadLinkTraceFileHostile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := write("big.trace", "1\n")
	if err := os.Truncate(big, netenv.MaxLinkTraceBytes+1); err != nil {
		t.Fatal(err)
	}
	secret := write("secret", "1\n2\nTOKEN=hunter2\n")
	for _, tc := range []struct{ path, want string }{
		{"/dev/zero", "/dev/zero: not a regular file"},
		{fifo, fifo + ": not a regular file"},
		{big, big + ": over the cap of 67108864 bytes (max_trace_bytes)"},
		{secret, secret + ":3:1: want a millisecond timestamp"},
		{"/proc/self/environ", "/proc/self/environ:1:1: want a millisecond timestamp"},
	} {
		_, err := netenv.ReadLinkTraceFile(tc.path)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.path, err, tc.want)
		}
		if err != nil && (strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "PATH=")) {
			t.Errorf("%s: the message shows the file: %v", tc.path, err)
		}
	}
	// Carried in a seed: decompressed under the same cap.
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	zero := make([]byte, 1<<20)
	for range netenv.MaxLinkTraceBytes>>20 + 1 {
		_, _ = w.Write(zero)
	}
	_ = w.Close()
	f := &netenv.LinkTraceFile{Name: "bomb\x1b[2J", SHA256: strings.Repeat("0", 64), Gzip: z.Bytes()}
	if err := f.Load(); err == nil || !strings.Contains(err.Error(), "(max_trace_bytes)") || strings.Contains(err.Error(), "\x1b") {
		t.Errorf("a gzip bomb: %v", err)
	}
}

// Schedules and configurations are capped: max_phases, max_flows.
func TestConfigCaps(t *testing.T) {
	env := netenv.DefaultEnv()
	var sched netenv.Schedule
	for i := range netenv.MaxPhases + 1 {
		sched = append(sched, netenv.Phase{Env: env, Until: time.Duration(i+1) * time.Millisecond})
	}
	sched[len(sched)-1].Until = 0
	if err := sched[1:].Validate(); err != nil {
		t.Fatalf("%d phases: %v", len(sched)-1, err)
	}
	if err := sched.Validate(); err == nil || !strings.Contains(err.Error(), "over the cap of 1000 (max_phases)") {
		t.Errorf("%d phases: %v", len(sched), err)
	}
	cfg := netenv.Config{Schedule: netenv.Constant(env)}
	for range netenv.MaxFlows + 1 {
		cfg.Flows = append(cfg.Flows, netenv.Flow{CCA: "reno", Bytes: 1000})
	}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "over the cap of 256 (max_flows)") {
		t.Errorf("%d flows: %v", len(cfg.Flows), err)
	}
}

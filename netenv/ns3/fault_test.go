package ns3

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/netenv"
)

// The test binary doubles as a misbehaving driver: with ACTFUZZ_NS3_FAKE
// set it speaks the driver protocol and then crashes, hangs, or prints
// garbage, so that the subject's fault handling is tested without ns-3.
const envFake = "ACTFUZZ_NS3_FAKE"

func TestMain(m *testing.M) {
	if mode := os.Getenv(envFake); mode != "" {
		fakeDriver(mode)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// fakeDriver modes: ok, crash, hang, garbage, nolib, crash-first (crashes
// if the file $ACTFUZZ_NS3_FAKE_STATE does not exist yet, creating it).
func fakeDriver(mode string) {
	if mode == "nolib" {
		fmt.Fprintln(os.Stderr, "actfuzz-ns3: error while loading shared libraries: libns3-core.so.37: cannot open shared object file")
		os.Exit(127)
	}
	if mode == "crash-first" {
		state := os.Getenv("ACTFUZZ_NS3_FAKE_STATE")
		if _, err := os.Stat(state); err == nil {
			mode = "ok"
		} else {
			_ = os.WriteFile(state, nil, 0o644)
			mode = "crash"
		}
	}
	w := bufio.NewWriter(os.Stdout)
	fmt.Fprintf(w, "HELLO %s %d 3.37 %s\n", DriverName, ProtocolVersion, strings.Join(Models, " "))
	w.Flush()
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		f := strings.Fields(in.Text())
		if len(f) == 0 || f[0] != "RUN" {
			continue
		}
		id := f[1]
		var nflows, nphases int
		fmt.Sscan(f[6], &nflows)
		fmt.Sscan(f[7], &nphases)
		for i := 0; i < nflows+nphases; i++ {
			in.Scan()
		}
		fmt.Fprintln(w, "R 1000 0 1 14480 4294967295 0 0 1000000000 0 0 0 0 0 0")
		switch mode {
		case "crash":
			w.Flush()
			fmt.Fprintln(os.Stderr, "msg=\"assert failed. cond=\\\"m_cWnd > 0\\\"\"")
			os.Exit(134)
		case "hang":
			w.Flush()
			time.Sleep(time.Hour)
		case "garbage":
			fmt.Fprintln(w, "R 2000 0 1 not numbers")
			w.Flush()
			continue
		}
		for i := 0; i < nflows; i++ {
			fmt.Fprintf(w, "F %d 10 0 0 0 14480 1 2000 14480 4294967295 0 0 0\n", i)
		}
		fmt.Fprintf(w, "DONE %s 2000 5 - 0 0 0 0\n", id)
		w.Flush()
	}
}

func fakeSubject(t *testing.T, mode string, opt Options) *Subject {
	t.Helper()
	t.Setenv(envFake, mode)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	opt.Driver = exe
	s, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func fakeConfig(seed uint64) netenv.Config {
	return netenv.Config{Seed: seed, Schedule: netenv.Constant(netenv.DefaultEnv()), HashTrace: true,
		Flows: []netenv.Flow{{CCA: "TcpCubic", Bytes: 14480}}}
}

func wantFault(t *testing.T, err error, kind string, seed uint64) {
	t.Helper()
	var f *netenv.Fault
	if !errors.As(err, &f) {
		t.Fatalf("want a %s fault, got %v", kind, err)
	}
	if f.Kind != kind || !strings.Contains(f.Detail, fmt.Sprintf("seed %d", seed)) {
		t.Fatalf("want a %s fault naming seed %d, got %+v", kind, seed, f)
	}
}

func TestFakeDriverOK(t *testing.T) {
	s := fakeSubject(t, "ok", Options{})
	res, err := s.Run(context.Background(), fakeConfig(1), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Flows[0].Done || res.Flows[0].Final.Cwnd != 10 || res.TraceSHA256 == "" || s.Started() != 1 {
		t.Fatalf("%+v (started %d)", res, s.Started())
	}
}

func TestCrashIsAFaultAndTheDriverRestarts(t *testing.T) {
	t.Setenv("ACTFUZZ_NS3_FAKE_STATE", t.TempDir()+"/crashed")
	s := fakeSubject(t, "crash-first", Options{})
	_, err := s.Run(context.Background(), fakeConfig(11), nil)
	wantFault(t, err, "crash", 11)
	var f *netenv.Fault
	errors.As(err, &f)
	if !strings.Contains(f.Stack, "assert failed") {
		t.Errorf("the fault should carry the driver's stderr, got %q", f.Stack)
	}
	res, err := s.Run(context.Background(), fakeConfig(12), nil)
	if err != nil || !res.Flows[0].Done {
		t.Fatalf("after a crash the next run should work on a new driver: %v %+v", err, res)
	}
	if s.Started() != 2 {
		t.Fatalf("started %d drivers, want 2", s.Started())
	}
}

func TestHangIsAFault(t *testing.T) {
	s := fakeSubject(t, "hang", Options{RunTimeout: 300 * time.Millisecond})
	start := time.Now()
	_, err := s.Run(context.Background(), fakeConfig(21), nil)
	wantFault(t, err, "hang", 21)
	if time.Since(start) > 5*time.Second {
		t.Fatalf("the hang took %v to detect", time.Since(start))
	}
	// A context deadline is a hang too; a cancellation is not a fault.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = s.Run(ctx, fakeConfig(22), nil)
	wantFault(t, err, "hang", 22)
	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err = s.Run(ctx, fakeConfig(23), nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
	if s.Started() != 3 {
		t.Fatalf("started %d drivers, want 3 (each hang kills its driver)", s.Started())
	}
}

func TestGarbageIsAFault(t *testing.T) {
	s := fakeSubject(t, "garbage", Options{})
	_, err := s.Run(context.Background(), fakeConfig(31), nil)
	wantFault(t, err, "garbage", 31)
}

func TestMissingNS3GivesOneClearError(t *testing.T) {
	check := func(err error) {
		t.Helper()
		if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "make ns3") {
			t.Fatalf("want ErrNotInstalled telling to run make ns3, got %v", err)
		}
	}
	_, err := New(Options{Driver: "/nonexistent/actfuzz-ns3"})
	check(err)
	t.Setenv(EnvDriver, "/nonexistent/actfuzz-ns3")
	_, err = Open()
	check(err)
	t.Setenv(EnvDriver, "")
	t.Setenv(envFake, "nolib")
	exe, _ := os.Executable()
	_, err = New(Options{Driver: exe})
	check(err)
	t.Logf("%v", err)
}

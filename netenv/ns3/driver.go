package ns3

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// ProtocolVersion is the version of the line protocol in the driver's
// HELLO line; a driver speaking another version must be rebuilt.
const ProtocolVersion = 4

// DriverName is the driver binary's file name (bin/actfuzz-ns3).
const DriverName = "actfuzz-ns3"

// EnvDriver names an environment variable that overrides the driver path.
const EnvDriver = "ACTFUZZ_NS3_DRIVER"

// ErrNotInstalled is returned (wrapped in one clear message) when the
// driver is missing or cannot start because ns-3 is not installed.
var ErrNotInstalled = errors.New("ns-3 subject not installed")

// installHint is the one message a user sees when ns-3 is absent.
const installHint = "run `make ns3` in the actfuzz source tree: it apt-get installs Debian's libns3-dev (ns-3.37) " +
	"and builds bin/" + DriverName + " (or point " + EnvDriver + " at a built driver)"

func notInstalled(detail string) error {
	if detail != "" {
		detail = " (" + detail + ")"
	}
	return fmt.Errorf("%w%s: %s", ErrNotInstalled, detail, installHint)
}

// FindDriver locates the driver binary: $ACTFUZZ_NS3_DRIVER, then next to
// the running executable, then on $PATH, then bin/actfuzz-ns3 in the
// enclosing actfuzz module (for go test and go run).
func FindDriver() (string, error) {
	if p := os.Getenv(EnvDriver); p != "" {
		if isExec(p) {
			return p, nil
		}
		return "", notInstalled(EnvDriver + "=" + p + " is not an executable file")
	}
	if exe, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(exe), DriverName); isExec(p) {
			return p, nil
		}
	}
	if p, err := exec.LookPath(DriverName); err == nil {
		return p, nil
	}
	if root := ModuleRoot(); root != "" {
		if p := filepath.Join(root, "bin", DriverName); isExec(p) {
			return p, nil
		}
	}
	return "", notInstalled("no " + DriverName + " binary found")
}

// ModuleRoot walks up from the working directory to the actfuzz module
// root (the directory whose go.mod declares github.com/actfuzz/actfuzz),
// or returns "".
func ModuleRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil &&
			bytes.Contains(b, []byte("module github.com/actfuzz/actfuzz\n")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

// driver is one running driver process.
type driver struct {
	cmd    *exec.Cmd
	stdin  *os.File
	stdout *os.File
	r      *bufio.Reader
	stderr *tailBuffer
	models []string
	waited chan struct{}
	err    error // exit status, after waited is closed
	nextID uint64
}

// startDriver runs the driver and reads its HELLO line.
func startDriver(path string, timeout time.Duration) (*driver, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	d := &driver{stdin: inW, stdout: outR, stderr: &tailBuffer{max: 8 << 10}, waited: make(chan struct{})}
	d.cmd = exec.Command(path)
	d.cmd.Stdin = inR
	d.cmd.Stdout = outW
	d.cmd.Stderr = d.stderr
	d.cmd.Env = driverEnv()
	err = d.cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, notInstalled(err.Error())
	}
	go func() {
		d.err = d.cmd.Wait()
		close(d.waited)
	}()
	d.r = bufio.NewReaderSize(outR, 64<<10)
	_ = outR.SetReadDeadline(time.Now().Add(timeout))
	line, err := d.r.ReadSlice('\n')
	_ = outR.SetReadDeadline(time.Time{})
	if err != nil {
		d.kill()
		msg := strings.TrimSpace(d.stderr.String())
		if strings.Contains(msg, "error while loading shared libraries") || strings.Contains(msg, "libns3") {
			return nil, notInstalled(firstLine(msg))
		}
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("ns3: the driver %s did not start: %s", path, firstLine(msg))
	}
	f := strings.Fields(string(line))
	if len(f) < 4 || f[0] != "HELLO" || f[1] != DriverName {
		d.kill()
		return nil, fmt.Errorf("ns3: %s is not an actfuzz ns-3 driver (it said %q)", path, truncate(string(line), 80))
	}
	if f[2] != fmt.Sprint(ProtocolVersion) {
		d.kill()
		return nil, fmt.Errorf("ns3: the driver %s speaks protocol %s, want %d: rebuild it with `make ns3`", path, f[2], ProtocolVersion)
	}
	d.models = f[4:]
	return d, nil
}

// driverEnv is the environment without ns-3's own knobs (NS_LOG,
// NS_GLOBAL_VALUE), which would change what a run does.
func driverEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "NS_LOG=") || strings.HasPrefix(kv, "NS_GLOBAL_VALUE=") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// kill ends the process and waits for it.
func (d *driver) kill() {
	if d.cmd.Process != nil {
		_ = d.cmd.Process.Kill()
	}
	d.stdin.Close()
	<-d.waited
	d.stdout.Close()
}

// quit asks the driver to exit, killing it if it does not within a second.
func (d *driver) quit() {
	_, _ = io.WriteString(d.stdin, "QUIT\n")
	d.stdin.Close()
	select {
	case <-d.waited:
	case <-time.After(time.Second):
		_ = d.cmd.Process.Kill()
		<-d.waited
	}
	d.stdout.Close()
}

// exitStatus waits briefly for the process to end and describes how it
// ended.
func (d *driver) exitStatus() string {
	select {
	case <-d.waited:
	case <-time.After(2 * time.Second):
		return "still running"
	}
	if d.err == nil {
		return "exit status 0"
	}
	return d.err.Error()
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return truncate(s, 200)
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

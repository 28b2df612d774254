package cli

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/actfuzz/actfuzz/act"
)

// isolateFlags are the worker-process flags of run, compare and replay.
type isolateFlags struct {
	isolate  *bool
	watchdog *time.Duration
	memory   *string
}

func addIsolateFlags(fs *flag.FlagSet, replay bool) *isolateFlags {
	f := &isolateFlags{memory: fs.String("worker-memory", "1G", "memory limit of a worker process: bytes, or with a K, M or G suffix")}
	if replay {
		f.watchdog = fs.Duration("watchdog", 60*time.Second, "wall-clock limit of the replay: one that goes past it is not reproduced (a hang); a hang, oom or crash seed replays in a worker process under it (0: none; for those, when not given or 0: 60 s, or a minute past what a run of the subject may take by design, quic: 4 min)")
		return f
	}
	f.isolate = fs.Bool("isolate", true, "run simulations in supervised worker processes (a hang, an OOM or a crash becomes a fault finding); false: in this process")
	f.watchdog = fs.Duration("watchdog", 0, "time after which a simulation counts as hung, in the worker's unstarved time (wall time less its waits for a CPU: a busy machine does not make hangs); 0: 60 s or 50× the median simulation time, whichever is larger, and at least a minute past what a run of the subject may take by design (quic: 4 min)")
	return f
}

// options validates the flags; bad input is reported naming the flag.
func (f *isolateFlags) options(cmd string, stderr io.Writer) (act.IsolateOptions, bool) {
	mem, err := parseSize(*f.memory)
	if err != nil || mem <= 0 {
		fmt.Fprintf(stderr, "actfuzz %s: --worker-memory %q: want a positive size such as 1G or 512M\n", cmd, *f.memory)
		return act.IsolateOptions{}, false
	}
	if *f.watchdog < 0 {
		fmt.Fprintf(stderr, "actfuzz %s: --watchdog must be ≥ 0\n", cmd)
		return act.IsolateOptions{}, false
	}
	return act.IsolateOptions{Watchdog: *f.watchdog, WorkerMemory: mem}, true
}

// parseSize reads a byte count with an optional K, M or G suffix (powers
// of 1024; a trailing B or iB is allowed).
func parseSize(s string) (int64, error) {
	t := strings.TrimSuffix(strings.TrimSuffix(strings.ToUpper(strings.TrimSpace(s)), "B"), "I")
	mult := int64(1)
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		}
		if mult > 1 {
			t = t[:n-1]
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v != v || v*float64(mult) > 1<<62 {
		return 0, fmt.Errorf("size %q", s)
	}
	return int64(v * float64(mult)), nil
}
